"""Skills as prompt text: the summary every system prompt carries, always-on and attached bodies."""

from __future__ import annotations

from xml.sax.saxutils import escape

from backend.skills.model import Skill

SUMMARY_PREAMBLE = (
    "Skills are instructions for particular tasks: before following one, read its SKILL.md "
    "with the file tool (mcp__file__read_file; the absolute path in <location> works), and "
    "do not use a skill whose status is unavailable."
)
ALWAYS_ON_PREAMBLE = "These skills are always on: follow them whenever they apply."
ATTACHED_PREAMBLE = "The person attached these skills to this message: follow them for this request."


def skills_summary(skills: list[Skill]) -> str:
    """An `<available_skills>` block naming each skill, where its SKILL.md is and whether it works."""
    if not skills:
        return ""
    entries = [
        "<skill>\n"
        f"<name>{escape(skill.name)}</name>\n"
        f"<description>{escape(skill.description)}</description>\n"
        f"<location>{escape(skill.path)}</location>\n"
        f"<status>{escape(skill.status)}</status>\n"
        "</skill>"
        for skill in skills
    ]
    return "\n".join([SUMMARY_PREAMBLE, "<available_skills>", *entries, "</available_skills>"])


def always_on_section(skills: list[Skill]) -> str:
    """The whole bodies of the available skills marked `always`; "" when there are none."""
    chosen = [skill for skill in skills if skill.always and skill.available]
    if not chosen:
        return ""
    return "\n\n".join([ALWAYS_ON_PREAMBLE, *(_wrapped(skill) for skill in chosen)])


def attached_skills_section(skills: list[Skill]) -> str:
    """The skills a person attached to a message, whole; an unavailable one only says why."""
    if not skills:
        return ""
    parts = [ATTACHED_PREAMBLE]
    for skill in skills:
        if skill.available:
            parts.append(_wrapped(skill))
        else:
            # Its requirements are unmet or it cannot be read: the model must not act on it.
            parts.append(
                f"The skill {skill.name!r} was attached but is {skill.status}, so it cannot be used."
            )
    return "\n\n".join(parts)


def _wrapped(skill: Skill) -> str:
    # The body is Markdown meant for the model as written; only the attributes are escaped.
    return (
        f'<skill name="{_attribute(skill.name)}" location="{_attribute(skill.path)}">\n'
        f"{skill.body.strip()}\n"
        "</skill>"
    )


def _attribute(value: str) -> str:
    return escape(value, {'"': "&quot;"})
