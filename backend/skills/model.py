"""A skill: an Anthropic Agent Skills folder (SKILL.md plus optional files), as Overseer reads it.

    ---
    name: release-notes
    description: Write release notes from the merged pull requests.
    always: false                 # Overseer: inject the whole body into every system prompt
    requires: {bins: gh, env: [GITHUB_TOKEN]}   # Overseer: unavailable until these exist
    ---
    The instructions.

The skill's name is its folder's name; a front-matter `name` must repeat it.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

from backend.domain.errors import BadRequest, NotFound

SkillSource = Literal["workspace", "user", "builtin"]
"""Where a skill was found, highest precedence first: the workspace's `.overseer/skills/`,
the data dir's `skills/`, the built-in `skills/`."""

SOURCES: tuple[SkillSource, ...] = ("workspace", "user", "builtin")

SKILL_FILE = "SKILL.md"
SKILL_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
MAX_SKILL_CHARS = 200_000
"""The longest SKILL.md read or saved: a skill's body may end up whole in a prompt."""


class SkillRequires(BaseModel):
    """What a skill needs to be usable: commands on PATH and set environment variables."""

    # A typo ("bin") must not silently drop a requirement.
    model_config = ConfigDict(extra="forbid")

    bins: list[str] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list)

    @field_validator("bins", "env", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """`bins: ffmpeg` means `bins: [ffmpeg]`; an empty value means none."""
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        return value

    @field_validator("bins", "env")
    @classmethod
    def _no_blanks(cls, values: list[str]) -> list[str]:
        cleaned = [value.strip() for value in values]
        if any(not value for value in cleaned):
            raise ValueError("requirement names must not be blank")
        return cleaned


class Skill(BaseModel):
    """One skill as listed: its front matter, body, where it lives and whether it can be used."""

    name: str
    description: str = ""
    always: bool = False
    requires: SkillRequires = Field(default_factory=SkillRequires)
    source: SkillSource
    path: str
    """Absolute path of the SKILL.md."""
    folder: str
    """Absolute path of the skill's folder (SKILL.md and any files beside it)."""
    body: str = ""
    """The Markdown after the front matter."""
    content: str = ""
    """The whole SKILL.md as written, so an editor can save it back without losing a key."""
    available: bool = True
    missing: list[str] = Field(default_factory=list)
    """Unmet requirements, e.g. "command ffmpeg", "environment variable GITHUB_TOKEN"."""
    error: str | None = None
    """Why the SKILL.md cannot be used (unreadable, bad front matter); such a skill is unavailable."""
    shadows: list[SkillSource] = Field(default_factory=list)
    """Lower-precedence sources that also hold a skill of this name, overridden by this one."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> str:
        """Either "available", or "unavailable: " and the reason (the error, else what is missing)."""
        if self.available:
            return "available"
        if self.error:
            return f"unavailable: {self.error}"
        return "unavailable: missing " + ", ".join(self.missing)


class SkillError(BadRequest):
    """A skill name or SKILL.md that cannot be used, or a skill that cannot be deleted; the message says why."""


class UnknownSkill(NotFound):
    """No skill of that name in any source; the message lists the ones there are."""

    def __init__(self, name: str, known: list[str] | tuple[str, ...] = ()) -> None:
        self.name = name
        listing = ", ".join(known) if known else "none"
        super().__init__(f"unknown skill {name!r}; skills: {listing}")
