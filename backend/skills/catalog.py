"""The skill catalog: skills from the workspace, the data dir and the built-ins, merged by precedence.

Nothing is cached: every `list` reads the folders afresh, so a SKILL.md edited by hand counts
from the next prompt on. A workspace's own skills count only as a person trusted them (the hash
of `.overseer/skills/` recorded by `overseer trust`, backend/workspace_trust.py): the model can
write that folder, and an always-on skill is in every system prompt. New or changed, the
workspace's skills are left out, with a warning saying how to trust them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from backend.frontmatter import parse_front_matter
from backend.paths import WORKSPACE_SKILLS_DIR
from backend.skills.model import (
    MAX_SKILL_CHARS,
    SKILL_FILE,
    SKILL_NAME,
    Skill,
    SkillRequires,
    SkillError,
    SkillSource,
    UnknownSkill,
)
from backend.workspace_trust import TrustStore, folder

WORKSPACE_SKILLS = Path(WORKSPACE_SKILLS_DIR)
"""Where a workspace keeps its own skills, relative to the workspace root."""


class SkillCatalog:
    """Finds, checks, saves and deletes skills.

    `environ` and `which` decide whether requirements are met; tests inject them. `trust` holds
    the workspace skill folders a person trusted; by default the store of the data dir that holds
    `user_dir` (the host keeps its skills in `<data dir>/skills`).
    """

    def __init__(
        self,
        builtin_dir: Path,
        user_dir: Path,
        *,
        environ: Mapping[str, str] | None = None,
        which: Callable[[str], str | None] = shutil.which,
        trust: TrustStore | None = None,
    ) -> None:
        self.builtin_dir = builtin_dir.expanduser()
        self.user_dir = user_dir.expanduser()
        self._environ = environ
        self._which = which
        self.trust = trust or TrustStore.in_data_dir(self.user_dir.parent)

    def list(self, workspace: Path | None = None) -> list[Skill]:
        """Every skill, one per name (the highest source wins), sorted by name."""
        merged: dict[str, Skill] = {}
        for source, directory in self._sources(workspace):
            for folder in _skill_folders(directory):
                skill = merged.get(folder.name)
                if skill is not None:
                    skill.shadows.append(source)
                    continue
                merged[folder.name] = self._read(folder, source)
        return [merged[name] for name in sorted(merged)]

    def get(self, name: str, workspace: Path | None = None) -> Skill:
        """The skill called `name` as `list` would show it; UnknownSkill when there is none."""
        skills = self.list(workspace)
        for skill in skills:
            if skill.name == name:
                return skill
        raise UnknownSkill(name, [skill.name for skill in skills])

    def save(self, name: str, content: str) -> Skill:
        """Write the whole SKILL.md text as the person's skill `name` (in the data dir).

        The text is checked first and nothing is written when it fails (SkillError naming the
        fault). A front matter without `name` gets one; a different `name` is refused.
        """
        check_skill_name(name)
        if len(content) > MAX_SKILL_CHARS:
            raise SkillError(
                f"SKILL.md of {name!r} is {len(content)} characters; the limit is {MAX_SKILL_CHARS}"
            )
        meta, _ = parse_front_matter(content, source=f"SKILL.md of {name!r}")
        if not meta:
            raise SkillError(
                f"SKILL.md of {name!r} needs a front matter: a '---' line, 'description: ...', and '---'"
            )
        skill_fields(meta, name)
        if "name" not in meta:
            content = _with_name(content, name)
        folder = self.user_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomically(folder / SKILL_FILE, content)
        return self._read(folder, "user")

    def delete(self, name: str) -> None:
        """Delete the person's skill `name` (its whole folder in the data dir).

        Built-in skills cannot be deleted (SkillError); a name found nowhere is UnknownSkill.
        """
        # Only a folder the scan found is removed, so `name` cannot reach outside user_dir.
        for folder in _skill_folders(self.user_dir):
            if folder.name == name:
                if folder.is_symlink():
                    folder.unlink()
                else:
                    shutil.rmtree(folder)
                return
        if any(folder.name == name for folder in _skill_folders(self.builtin_dir)):
            raise SkillError(
                f"skill {name!r} is built in and cannot be deleted; save one of the same name to override it"
            )
        raise UnknownSkill(name, [skill.name for skill in self.list()])

    def read_roots(self) -> list[Path]:
        """Folders outside any workspace the model must be able to read skills from."""
        return [self.user_dir, self.builtin_dir]

    def _sources(self, workspace: Path | None) -> Iterator[tuple[SkillSource, Path]]:
        if workspace is not None and self._trusted(workspace.expanduser()):
            yield "workspace", workspace.expanduser() / WORKSPACE_SKILLS
        yield "user", self.user_dir
        yield "builtin", self.builtin_dir

    def _trusted(self, workspace: Path) -> bool:
        """Whether the workspace's skills folder is as a person trusted it (an empty one needs no trust)."""
        found = folder(workspace / WORKSPACE_SKILLS)
        if found is None or self.trust.is_trusted(found):
            return True
        self.trust.warn_once(found, consequence="the skills in it are left out", trust_in=workspace.resolve())
        return False

    def _read(self, folder: Path, source: SkillSource) -> Skill:
        folder = folder.absolute()
        path = folder / SKILL_FILE
        base = {"name": folder.name, "source": source, "path": str(path), "folder": str(folder)}
        try:
            check_skill_name(folder.name)
            text = _read_text(path)
            meta, body = parse_front_matter(text, source=SKILL_FILE)
            fields = skill_fields(meta, folder.name)
        except (OSError, ValueError) as exc:
            return Skill(**base, available=False, error=_reason(exc))
        missing = self._missing(fields["requires"])
        return Skill(**base, **fields, body=body, content=text, available=not missing, missing=missing)

    def _missing(self, requires: SkillRequires) -> list[str]:
        environ = os.environ if self._environ is None else self._environ
        missing = [f"command {binary}" for binary in requires.bins if self._which(binary) is None]
        missing += [f"environment variable {name}" for name in requires.env if not environ.get(name)]
        return missing


def check_skill_name(name: str) -> None:
    """Raise SkillError unless `name` is a skill name: lowercase letters, digits and '-'."""
    if not SKILL_NAME.match(name):
        raise SkillError(
            f"invalid skill name {name!r}: use 1-64 lowercase letters, digits or '-', "
            "starting with a letter or digit"
        )


def skill_fields(meta: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The Skill fields a front matter gives, checked; SkillError naming the first fault."""
    if "name" in meta and meta["name"] != name:
        raise SkillError(f"front matter name {meta['name']!r} differs from the folder name {name!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError(
            "front matter needs a 'description': one line on what the skill does and when to use it"
        )
    always = meta.get("always", False)
    # SkillError, not TypeError: a bad SKILL.md is bad input (a 400), whatever the fault.
    if not isinstance(always, bool):
        raise SkillError(f"front matter 'always' must be true or false, got {always!r}")  # noqa: TRY004
    raw = meta.get("requires") or {}
    if not isinstance(raw, Mapping):
        raise SkillError("front matter 'requires' must be a mapping of 'bins' and 'env'")  # noqa: TRY004
    try:
        requires = SkillRequires.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'requires'}: {err['msg']}" for err in exc.errors()
        )
        raise SkillError(f"front matter 'requires' is invalid: {problems}") from None
    return {"description": description.strip(), "always": always, "requires": requires}


def _skill_folders(directory: Path) -> list[Path]:
    """The folders of `directory` that hold a SKILL.md, sorted; none when it does not exist."""
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    return [
        entry
        for entry in entries
        if not entry.name.startswith(".") and entry.is_dir() and (entry / SKILL_FILE).is_file()
    ]


def _read_text(path: Path) -> str:
    with path.open("r", encoding="utf-8") as fh:
        text = fh.read(MAX_SKILL_CHARS + 1)
    if len(text) > MAX_SKILL_CHARS:
        raise SkillError(f"{SKILL_FILE} is longer than {MAX_SKILL_CHARS} characters")
    return text


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"{SKILL_FILE} is not UTF-8 text"
    if isinstance(exc, OSError):
        return f"{SKILL_FILE} cannot be read: {exc.strerror or exc}"
    return str(exc)


def _with_name(content: str, name: str) -> str:
    """Add `name:` as the front matter's first key, leaving the rest of the text as written."""
    text = content.lstrip("\ufeff")
    first, newline, rest = text.partition("\n")
    return f"{first}{newline or chr(10)}name: {name}\n{rest}"


def _write_atomically(path: Path, content: str) -> None:
    # A reader (a prompt being built) sees the old file or the new one, never half of one.
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(content, encoding="utf-8")
    os.replace(temp, path)
