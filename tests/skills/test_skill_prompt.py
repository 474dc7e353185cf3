"""Skills as prompt text: the summary, always-on bodies and attached bodies."""

from __future__ import annotations

from backend.skills.model import Skill, SkillRequires
from backend.skills.prompt import always_on_section, attached_skills_section, skills_summary


def skill(name: str, **fields) -> Skill:
    folder = f"/skills/{name}"
    values = {
        "description": f"About {name}.",
        "body": f"Body of {name}.",
        "path": f"{folder}/SKILL.md",
        **fields,
    }
    return Skill(name=name, source="builtin", folder=folder, **values)


def missing_ffmpeg(name: str, **fields) -> Skill:
    return skill(
        name, requires=SkillRequires(bins=["ffmpeg"]), available=False, missing=["command ffmpeg"], **fields
    )


# ---------------------------------------------------------------- summary


def test_the_summary_is_empty_without_skills():
    assert skills_summary([]) == ""


def test_the_summary_lists_each_skill_with_location_and_status():
    summary = skills_summary([skill("review"), missing_ffmpeg("video")])
    preamble, block = summary.split("\n", 1)
    assert "mcp__file__read_file" in preamble and "SKILL.md" in preamble and "unavailable" in preamble
    assert block.startswith("<available_skills>\n") and block.endswith("\n</available_skills>")
    assert (
        "<skill>\n<name>review</name>\n<description>About review.</description>\n"
        "<location>/skills/review/SKILL.md</location>\n<status>available</status>\n</skill>"
    ) in block
    assert "<status>unavailable: missing command ffmpeg</status>" in block
    assert block.count("<skill>") == 2


def test_the_summary_escapes_xml_in_values():
    summary = skills_summary(
        [skill("tricky", description="Use <b> & </skill> tags", path="/a&b/<x>/SKILL.md")]
    )
    assert "<description>Use &lt;b&gt; &amp; &lt;/skill&gt; tags</description>" in summary
    assert "<location>/a&amp;b/&lt;x&gt;/SKILL.md</location>" in summary
    assert summary.count("</skill>") == 1


def test_the_summary_never_carries_bodies():
    assert "Body of review." not in skills_summary([skill("review")])


def test_a_broken_skill_shows_its_error_as_its_status():
    broken = skill("broken", available=False, error="SKILL.md: front matter is not valid YAML")
    assert "<status>unavailable: SKILL.md: front matter is not valid YAML</status>" in skills_summary(
        [broken]
    )


# ---------------------------------------------------------------- always-on


def test_the_always_on_section_holds_only_available_always_skills():
    section = always_on_section(
        [
            skill("style", always=True, body="Use British spelling."),
            skill("review"),
            missing_ffmpeg("video", always=True, body="SECRET VIDEO BODY"),
        ]
    )
    assert (
        '<skill name="style" location="/skills/style/SKILL.md">\nUse British spelling.\n</skill>' in section
    )
    assert "Body of review." not in section
    assert "SECRET VIDEO BODY" not in section and 'name="video"' not in section


def test_the_always_on_section_is_empty_without_always_skills():
    assert always_on_section([skill("review"), missing_ffmpeg("video", always=True)]) == ""


def test_skill_attributes_are_escaped():
    section = always_on_section([skill("style", always=True, path='/a"b&c/SKILL.md')])
    assert 'location="/a&quot;b&amp;c/SKILL.md"' in section


# ---------------------------------------------------------------- attached


def test_attached_skills_carry_their_whole_bodies():
    section = attached_skills_section([skill("review", body="Step 1.\n\nStep 2.\n"), skill("notes")])
    assert "attached" in section.split("\n", 1)[0]
    assert '<skill name="review" location="/skills/review/SKILL.md">\nStep 1.\n\nStep 2.\n</skill>' in section
    assert "Body of notes." in section


def test_an_attached_unavailable_skill_says_why_and_never_includes_its_body():
    section = attached_skills_section([missing_ffmpeg("video", body="SECRET VIDEO BODY")])
    assert "SECRET VIDEO BODY" not in section
    assert "'video'" in section and "unavailable: missing command ffmpeg" in section
    assert "<skill" not in section


def test_no_attached_skills_mean_no_section():
    assert attached_skills_section([]) == ""
