"""A mode: which tools a session is offered, the policies it adds, and the prompt it runs under.

One Markdown file per mode, its name from the file name:

    ---
    name: plan
    description: Investigates, then proposes a plan
    tools: [read-only]
    policies: {mcp__shell__exec: deny}
    next_mode: agent
    ---
    The mode's system prompt.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from backend.domain.errors import BadRequest, NotFound
from backend.domain.tools import ToolInfo
from backend.frontmatter import parse_front_matter, render_front_matter
from backend.rules.policy_engine import Policy, PolicyEngine, ToolCallView, is_read_only
from backend.rules.grammar import RuleError, RuleSet, ToolSelector

READ_ONLY = "read-only"
"""An entry of `tools` meaning any read-only tool: the file readers, or one annotated readOnlyHint
and not destructive (policy.is_read_only)."""

ModeSource = Literal["builtin", "user"]
SamplingPolicy = Literal["ask", "deny"]

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_NOWHERE = Path("/")
# What a person may write in a mode file's front matter; the body is the prompt.
FRONT_MATTER_KEYS = ("name", "description", "tools", "policies", "default_folder", "next_mode", "icon", "sampling")


class InvalidMode(BadRequest):
    """A mode that cannot be used as written; the message names the file or field and the fault."""


class UnknownMode(NotFound):
    """No mode by that name; the message lists the modes there are."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        super().__init__(f"unknown mode {name!r}; modes: {', '.join(known) or '(none)'}")


def check_name(name: str, *, what: str = "mode name") -> str:
    """`name` if it is a slug (a file name and a URL segment alike), else InvalidMode."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise InvalidMode(
            f"{what} {name!r} is not valid: use 1-64 lowercase letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    return name


def _tools_as_list(value: Any) -> Any:
    """`tools: mcp__browser` is read as `[mcp__browser]`; `tools: all` stays as it is."""
    if isinstance(value, str):
        return value if value == "all" else [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"must be 'all' or a list of tool patterns, got {value!r}")
    return value


def _text(value: Any) -> Any:
    """An empty YAML key (`description:`) is None: read it as empty text."""
    return "" if value is None else value


class ModeWrite(BaseModel):
    """A mode as a person writes it (the body of `PUT /api/modes/{name}`); the name is in the URL.

    Only the shape is checked here; `ModeRegistry.save` checks the meaning (patterns, policies,
    next mode), so a fault there is a 400 naming the field.
    """

    model_config = ConfigDict(extra="forbid")

    description: str = ""
    tools: Literal["all"] | list[str] = "all"
    policies: dict[str, Policy] = {}
    default_folder: str | None = None
    next_mode: str | None = None
    icon: str | None = None
    sampling: SamplingPolicy = "ask"
    prompt: str = ""
    # No None-as-empty-text here (a file's empty `description:` is a YAML quirk): the API takes
    # what its document says, a string, and `null` is a 422.

    _tools_list = field_validator("tools", mode="before")(_tools_as_list)


class Mode(BaseModel):
    """One mode, checked: tool patterns parse, policies are valid, names are slugs."""

    name: str
    description: str = ""
    tools: Literal["all"] | list[str] = "all"
    """"all", or patterns: a tool (`mcp__file__read_file`), a server (`mcp__browser`), a glob
    (`mcp__file__*`), or READ_ONLY."""
    policies: dict[str, Policy] = {}
    """Per-tool policies this mode puts before the configured ones (`mcp__shell__exec: deny`)."""
    default_folder: str | None = None
    next_mode: str | None = None
    """The mode this one hands over to once the person approves (plan -> agent)."""
    icon: str | None = None
    sampling: SamplingPolicy = "ask"
    """Whether MCP servers may ask to run the session's model (`sampling/createMessage`) in this
    mode: "ask" puts each request to the person, "deny" refuses them all."""
    prompt: str = ""
    """The mode's system prompt: the Markdown body of its file."""
    source: ModeSource = "builtin"
    overrides_builtin: bool = False
    """A person's file with a built-in mode's name: it replaces the built-in until deleted."""

    _tools_list = field_validator("tools", mode="before")(_tools_as_list)
    _texts = field_validator("description", "prompt", mode="before")(_text)

    @field_validator("name")
    @classmethod
    def _name_is_a_slug(cls, name: str) -> str:
        return check_name(name)

    @field_validator("next_mode")
    @classmethod
    def _next_mode_is_a_slug(cls, name: str | None) -> str | None:
        return None if name is None else check_name(name, what="next_mode")

    @field_validator("prompt")
    @classmethod
    def _prompt_is_stripped(cls, prompt: str) -> str:
        return prompt.strip()

    @field_validator("policies")
    @classmethod
    def _policies_are_valid(cls, policies: dict[str, Policy]) -> dict[str, Policy]:
        # The policy engine's own check, so a mode accepts exactly what the engine can evaluate.
        PolicyEngine(RuleSet.from_config({}, source="mode"), policies)
        return policies

    @model_validator(mode="after")
    def _check_tools_and_next_mode(self) -> Mode:
        if self.next_mode == self.name:
            raise ValueError(f"next_mode: mode {self.name!r} cannot hand over to itself")
        patterns = [] if self.tools == "all" else [p for p in self.tools if p != READ_ONLY]
        for pattern in patterns:
            try:
                _selector(pattern)
            except RuleError as exc:
                raise ValueError(
                    f"tools: {exc}; a pattern is a tool, a server, a glob, or {READ_ONLY!r}"
                ) from None
        return self

    def offers(self, tool: ToolInfo) -> bool:
        """Whether a session in this mode is shown `tool` at all."""
        if self.tools == "all":
            return True
        for pattern in self.tools:
            if pattern == READ_ONLY:
                if _read_only(tool):
                    return True
            elif _selector(pattern).selects(tool.name):
                return True
        return False

    def offered_tools(self, tools: list[ToolInfo]) -> list[ToolInfo]:
        """The tools this mode offers, in the order given."""
        return [tool for tool in tools if self.offers(tool)]


def _read_only(tool: ToolInfo) -> bool:
    call = ToolCallView(name=tool.name, arguments={}, workspace=_NOWHERE, annotations=tool.annotations)
    return is_read_only(call)


@functools.lru_cache(maxsize=512)
def _selector(pattern: str) -> ToolSelector:
    """Parsed once per pattern (RuleError when it cannot be): offers() runs for every tool, every turn."""
    return ToolSelector.parse(pattern)


def build_mode(name: str, fields: dict[str, Any], *, source: ModeSource, overrides_builtin: bool) -> Mode:
    """A Mode from loose fields, or InvalidMode with one line per fault (`tools: ...; policies: ...`)."""
    try:
        return Mode.model_validate(
            {**fields, "name": name, "source": source, "overrides_builtin": overrides_builtin}
        )
    except ValidationError as exc:
        raise InvalidMode(describe(exc)) from None


def describe(exc: ValidationError) -> str:
    """A pydantic error as `field: fault; field: fault`, without pydantic's boilerplate."""
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(part) for part in err["loc"])
        message = str(err["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where and not message.startswith(f"{where}:") else message)
    return "; ".join(problems)


def parse_mode_file(path: Path, *, source: ModeSource, overrides_builtin: bool = False) -> Mode:
    """Read one mode file; InvalidMode naming the file and the fault when it cannot be used."""
    name = path.stem
    try:
        check_name(name, what="file name")
        meta, body = parse_front_matter(path.read_text(encoding="utf-8"), source=str(path))
        unknown = sorted(str(key) for key in meta if key not in FRONT_MATTER_KEYS)
        if unknown:
            expected = ", ".join(FRONT_MATTER_KEYS)
            raise InvalidMode(f"unknown front matter key(s) {', '.join(unknown)}; expected {expected}")
        if meta.get("name", name) != name:
            raise InvalidMode(f"front matter says name {meta['name']!r}, but the file name says {name!r}")
        fields = {key: value for key, value in meta.items() if key != "name"}
        fields["prompt"] = body
        return build_mode(name, fields, source=source, overrides_builtin=overrides_builtin)
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidMode(f"{path}: cannot be read: {exc}") from None
    except ValueError as exc:  # FrontMatterError names the file already
        message = str(exc)
        raise InvalidMode(message if message.startswith(str(path)) else f"{path}: {message}") from None


def render_mode_file(mode: Mode) -> str:
    """The file text for `mode`: set fields in front matter, the prompt as the body."""
    meta: dict[str, Any] = {"name": mode.name, "description": mode.description, "tools": mode.tools}
    if mode.policies:
        meta["policies"] = dict(mode.policies)
    for key in ("default_folder", "next_mode", "icon"):
        value = getattr(mode, key)
        if value is not None:
            meta[key] = value
    if mode.sampling != "ask":
        meta["sampling"] = mode.sampling
    return render_front_matter(meta, mode.prompt)
