"""`/api/skills` through the ASGI app: list, read, save, delete, roles and error details."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.workspace_trust import TrustStore, folder

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

SKILL = "---\ndescription: Take notes in Markdown.\n---\nWrite notes as bullet points.\n"


def workspace_skill(workspace: Path, name: str, description: str, *, trusted_in: Path) -> None:
    """Write a workspace skill, and trust the workspace's skills as `overseer trust` would (in the
    host's data dir `trusted_in`): untrusted, they are left out."""
    skills = workspace / ".overseer" / "skills"
    (skills / name).mkdir(parents=True)
    (skills / name / "SKILL.md").write_text(f"---\ndescription: {description}\n---\nbody\n")
    TrustStore.in_data_dir(trusted_in).trust(folder(skills))


async def test_a_skill_is_saved_listed_read_and_deleted(api):
    saved = await api.client.put("/api/skills/notes", json={"content": SKILL})
    assert saved.status_code == 200, saved.text
    skill = saved.json()
    assert (skill["name"], skill["source"], skill["status"]) == ("notes", "user", "available")
    assert skill["body"] == "Write notes as bullet points.\n"
    assert Path(skill["path"]) == api.host.data_dir / "skills" / "notes" / "SKILL.md"

    listed = (await api.client.get("/api/skills")).json()
    assert "notes" in [s["name"] for s in listed]
    assert {"code-review", "summarize", "skill-creator"} <= {s["name"] for s in listed}
    assert (await api.client.get("/api/skills/notes")).json() == skill

    assert (await api.client.delete("/api/skills/notes")).status_code == 204
    missing = await api.client.get("/api/skills/notes")
    assert missing.status_code == 404
    assert missing.json()["detail"].startswith("unknown skill 'notes'; skills: ")


async def test_the_default_workspace_s_skills_override_the_others(api):
    workspace = api.host.settings.resolved_workspace
    workspace_skill(workspace, "summarize", "This repo's summaries.", trusted_in=api.host.data_dir)
    skill = (await api.client.get("/api/skills/summarize")).json()
    assert (skill["source"], skill["description"], skill["shadows"]) == (
        "workspace",
        "This repo's summaries.",
        ["builtin"],
    )


async def test_another_workspace_is_chosen_by_query(api, tmp_path):
    other = api.host.settings.resolved_workspace / "other"  # a folder sessions may work in
    workspace_skill(other, "deploy", "Deploy this one.", trusted_in=api.host.data_dir)
    listed = await api.client.get("/api/skills", params={"workspace": str(other)})
    assert "deploy" in [s["name"] for s in listed.json()]
    assert "deploy" not in [s["name"] for s in (await api.client.get("/api/skills")).json()]
    one = await api.client.get("/api/skills/deploy", params={"workspace": str(other)})
    assert one.json()["source"] == "workspace"


async def test_a_folder_no_session_may_work_in_is_refused_so_its_files_are_not_read(api, tmp_path):
    # The data dir holds the token and the keys; a folder under no allowed root is nobody's workspace.
    outside = tmp_path / "elsewhere"
    workspace_skill(outside, "deploy", "Deploy this one.", trusted_in=api.host.data_dir)
    for folder, why in ((api.host.data_dir, "a session may never work there"), (outside, "under none of the allowed roots")):
        for path in ("/api/skills", "/api/skills/deploy"):
            response = await api.client.get(path, params={"workspace": str(folder)})
            assert response.status_code == 403 and why in response.json()["detail"], response.text


async def test_a_workspace_that_is_relative_or_missing_is_a_400(api, tmp_path):
    relative = await api.client.get("/api/skills", params={"workspace": "some/dir"})
    assert relative.status_code == 400 and "absolute" in relative.json()["detail"]
    missing = await api.client.get("/api/skills", params={"workspace": str(tmp_path / "nope")})
    assert missing.status_code == 400 and "does not exist" in missing.json()["detail"]


async def test_an_invalid_skill_is_a_400_naming_the_fault(api):
    no_description = await api.client.put(
        "/api/skills/notes", json={"content": "---\nalways: true\n---\nx\n"}
    )
    assert no_description.status_code == 400
    assert "description" in no_description.json()["detail"]
    mismatch = await api.client.put(
        "/api/skills/notes", json={"content": "---\nname: other\ndescription: d\n---\n"}
    )
    assert mismatch.status_code == 400 and "differs from the folder name" in mismatch.json()["detail"]
    bad_name = await api.client.put("/api/skills/Bad_Name", json={"content": SKILL})
    assert bad_name.status_code == 400 and "invalid skill name" in bad_name.json()["detail"]
    assert (await api.client.get("/api/skills/notes")).status_code == 404


async def test_the_body_must_be_content_alone_and_bounded(api):
    extra = await api.client.put("/api/skills/notes", json={"content": SKILL, "always": True})
    assert extra.status_code == 422
    huge = await api.client.put("/api/skills/notes", json={"content": SKILL + "x" * 200_000})
    assert huge.status_code == 422


async def test_deleting_a_built_in_is_a_400_and_an_unknown_skill_a_404(api):
    built_in = await api.client.delete("/api/skills/summarize")
    assert built_in.status_code == 400 and "built in" in built_in.json()["detail"]
    unknown = await api.client.delete("/api/skills/no-such-skill")
    assert unknown.status_code == 404 and "unknown skill 'no-such-skill'" in unknown.json()["detail"]


async def test_skills_need_authentication(api):
    assert (await api.anonymous.get("/api/skills")).status_code == 401
    assert (await api.anonymous.get("/api/skills/summarize")).status_code == 401
    assert (await api.anonymous.put("/api/skills/notes", json={"content": SKILL})).status_code == 401
    assert (await api.anonymous.delete("/api/skills/summarize")).status_code == 401


async def test_a_viewer_can_read_skills_but_not_change_them(api):
    key = api.app.state.auth.create_api_key("watcher", role="viewer")
    as_viewer = {"Authorization": f"Bearer {key}"}
    assert (await api.anonymous.get("/api/skills", headers=as_viewer)).status_code == 200
    put = await api.anonymous.put("/api/skills/notes", json={"content": SKILL}, headers=as_viewer)
    assert put.status_code == 403
    assert (await api.anonymous.delete("/api/skills/summarize", headers=as_viewer)).status_code == 403
    assert not (api.host.data_dir / "skills" / "notes").exists()


async def test_a_skill_is_returned_with_its_file_as_written_so_unknown_keys_survive_an_edit(api) -> None:
    content = "---\nname: tidy\ndescription: Keep it tidy\nlicense: MIT  # ours\n---\n\nTidy up.\n"
    assert (await api.client.put("/api/skills/tidy", json={"content": content})).status_code == 200
    got = (await api.client.get("/api/skills/tidy")).json()
    assert got["content"] == content and got["body"].strip() == "Tidy up."


async def test_a_workspace_the_os_will_not_look_up_is_a_400_not_a_500(api):
    # Found by schemathesis (issue 13): ENAMETOOLONG and an unknown `~user` raised in pathlib.
    for workspace in ("/" + "a" * 300, "~no-such-user-for-overseer/x"):
        response = await api.client.get("/api/skills", params={"workspace": workspace})
        assert response.status_code == 400, (workspace, response.text)
        assert "not a directory" in response.json()["detail"]
