"""Workflow definitions on disk: load, validate, list, and render a step's prompt.

Built-in definitions live in `modes/workflows/`, a person's in the data dir's `workflows/`;
a person's file with the same name replaces the built-in. Every fault is reported with the
file's path, since the person has to find and fix it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import ValidationError

from backend.paths import BUILTIN_WORKFLOWS_DIR
from backend.domain.errors import BadRequest, NotFound
from backend.domain.workflows import Workflow, WorkflowSource

log = logging.getLogger(__name__)

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
PLACEHOLDERS = ("input", "previous")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
SUFFIXES = (".yaml", ".yml")


class WorkflowError(BadRequest):
    """A definition that cannot be used; the message names the file and the fault."""


class UnknownWorkflow(NotFound):
    """No definition has that name."""


class Modes(Protocol):
    """What validation needs of the mode registry: `get` raises (a LookupError) for an unknown mode."""

    def get(self, name: str) -> Any: ...


def load_workflow_file(path: Path, *, source: WorkflowSource) -> Workflow:
    """Read and validate one definition file (WorkflowError naming the file on any fault)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise WorkflowError(f"{path}: not valid YAML: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowError(f"{path}: cannot be read: {exc}") from exc
    if not isinstance(data, dict):
        raise WorkflowError(
            f"{path}: expected a mapping with name, description and steps, got {type(data).__name__}"
        )
    name = data.get("name", path.stem)
    if name != path.stem:
        raise WorkflowError(f"{path}: name {name!r} must match the file name {path.stem!r}")
    if not isinstance(name, str) or not NAME.match(name):
        raise WorkflowError(f"{path}: name {name!r} must be letters, digits, '-', '_' or '.'")
    unknown = sorted(set(map(str, data)) - {"name", "description", "steps"})
    if unknown:
        raise WorkflowError(
            f"{path}: unknown key(s) {', '.join(unknown)}; a workflow has name, description and steps"
        )
    if "steps" not in data:
        raise WorkflowError(f"{path}: has no steps (a list of {{mode, prompt, approve}})")
    try:
        workflow = Workflow.model_validate({**data, "name": name, "source": source, "path": str(path)})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise WorkflowError(f"{path}: {problems}") from exc
    for number, step in enumerate(workflow.steps, start=1):
        for found in PLACEHOLDER.findall(step.prompt):
            if found not in PLACEHOLDERS:
                raise WorkflowError(
                    f"{path}: step {number} uses {{{{{found}}}}}; "
                    "a prompt may use only {{input}} and {{previous}}"
                )
            if found == "previous" and number == 1:
                raise WorkflowError(f"{path}: step 1 uses {{{{previous}}}}, but there is no step before it")
    return workflow


def check_mode(mode: str, modes: Modes | None, *, where: str) -> None:
    """`mode` exists in the registry (WorkflowError starting with `where`); no registry, no check."""
    if modes is None:
        return
    try:
        modes.get(mode)
    except (LookupError, ValueError) as exc:
        raise WorkflowError(f"{where} names unknown mode {mode!r} ({exc})") from exc


def check_modes(workflow: Workflow, modes: Modes | None) -> None:
    """Every step's mode exists in the registry (WorkflowError naming the file and step)."""
    for number, step in enumerate(workflow.steps, start=1):
        check_mode(step.mode, modes, where=f"{workflow.path or workflow.name}: step {number}")


def render_prompt(template: str, *, input: str, previous: str | None) -> str:  # noqa: A002 - the placeholder
    """Fill `{{input}}` and `{{previous}}`; done in one pass, so text they bring in is never re-read."""
    values = {"input": input, "previous": previous or ""}
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


@dataclass(kw_only=True)
class WorkflowLibrary:
    """The definitions a host can run: built-ins, overridden by a person's files of the same name."""

    user_dir: Path
    builtin_dir: Path = BUILTIN_WORKFLOWS_DIR

    def _files(self) -> dict[str, tuple[Path, WorkflowSource]]:
        found: dict[str, tuple[Path, WorkflowSource]] = {}
        for folder, source in ((self.builtin_dir, "builtin"), (self.user_dir, "user")):
            if not folder.is_dir():
                continue
            for path in sorted(folder.iterdir()):
                if path.suffix in SUFFIXES and path.is_file():
                    found[path.stem] = (path, source)  # type: ignore[assignment]
        return found

    def get(self, name: str, *, modes: Modes | None = None) -> Workflow:
        """The definition named `name` (UnknownWorkflow), validated (WorkflowError)."""
        entry = self._files().get(name) if NAME.match(name) else None
        if entry is None:
            raise UnknownWorkflow(f"no workflow named {name!r}")
        workflow = load_workflow_file(entry[0], source=entry[1])
        check_modes(workflow, modes)
        return workflow

    def list(self, *, modes: Modes | None = None) -> list[Workflow]:
        """Every usable definition by name; a broken file is logged and left out (`get` reports it)."""
        workflows = []
        for name in sorted(self._files()):
            try:
                workflows.append(self.get(name, modes=modes))
            except WorkflowError as exc:
                log.warning("workflow left out: %s", exc)
        return workflows
