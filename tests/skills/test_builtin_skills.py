"""The skills shipped in skills/: each parses, is available anywhere, and points at real files."""

from __future__ import annotations

import re
from pathlib import Path

from backend.paths import BUILTIN_SKILLS_DIR
from backend.skills.catalog import SkillCatalog

SHIPPED = {"code-review", "summarize", "skill-creator"}


def builtin_skills(tmp_path: Path):
    # No commands and no environment: a built-in skill must need neither.
    return SkillCatalog(BUILTIN_SKILLS_DIR, tmp_path / "none", environ={}, which=lambda _: None).list()


def test_every_built_in_skill_parses_and_is_available(tmp_path):
    skills = builtin_skills(tmp_path)
    assert {s.name for s in skills} >= SHIPPED
    for skill in skills:
        assert skill.source == "builtin"
        assert (skill.available, skill.error, skill.missing) == (True, None, []), skill.name
        assert len(skill.description) >= 40, skill.name
        assert "Use when" in skill.description, skill.name
        assert skill.body.startswith("# "), skill.name
        assert not skill.always, skill.name


def test_built_in_skills_are_concise(tmp_path):
    for skill in builtin_skills(tmp_path):
        assert len(skill.body.splitlines()) <= 300, skill.name


def test_files_a_built_in_skill_refers_to_exist_beside_it(tmp_path):
    for skill in builtin_skills(tmp_path):
        for name in re.findall(r"`([\w-]+\.md)`", skill.body):
            if name != "SKILL.md":
                assert (Path(skill.folder) / name).is_file(), (skill.name, name)


def test_the_skill_creator_explains_overseer_fields_and_where_to_save(tmp_path):
    creator = next(s for s in builtin_skills(tmp_path) if s.name == "skill-creator")
    for needle in (
        "`always`",
        "`requires`",
        "`bins`",
        "`env`",
        ".overseer/skills/<name>/SKILL.md",
        "template.md",
    ):
        assert needle in creator.body, needle


def test_the_skill_creator_template_is_a_valid_skill_once_saved(tmp_path):
    template = (BUILTIN_SKILLS_DIR / "skill-creator" / "template.md").read_text()
    saved = SkillCatalog(tmp_path / "builtin", tmp_path / "user").save("my-skill", template)
    assert saved.available and saved.description.startswith("What this skill does")
