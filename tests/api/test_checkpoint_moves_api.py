"""A step's changes over REST as a person reads them (issue 33, item 8): a shell step's move is one
file "renamed" with where it was and its similarity, a deletion and an overwrite carry exact line
counts, a rewind of the moved file (by either path) puts it back where it was, and a host without
checkpoints says so (backend/app/checkpoints.py, backend/api/routes/checkpoints.py)."""

from __future__ import annotations

import pytest
import pytest_asyncio

from backend.testing import Reply, ScriptedToolCall
from tests.api.conftest import serve_api
from tests.api.test_checkpoints_api import key, run_session

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

SIX = "".join(f"line {n} of the old report\n" for n in range(1, 7))
COMMAND = "mv draft.md plan.md && rm old.txt && printf 'a\\nb\\nc\\n' > report.txt"


@pytest_asyncio.fixture(loop_scope="module")
async def api(tmp_path, pool):
    async with serve_api(tmp_path, pool, permissions={"allow": ["mcp__shell__exec"]}) as started:
        yield started


@pytest_asyncio.fixture(loop_scope="module")
async def api_without_checkpoints(tmp_path, pool):
    off = {"permissions": {"allow": ["mcp__shell__exec"]}, "checkpoints": {"enabled": False}}
    async with serve_api(tmp_path, pool, **off) as started:
        yield started


def one_shell_step(workspace) -> Reply:
    (workspace / "draft.md").write_text("# Plan\nfirst\nsecond\n")
    (workspace / "old.txt").write_text("gone soon\n")
    (workspace / "report.txt").write_text(SIX)
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__shell__exec", arguments={"command": COMMAND}, id="x1")])


async def test_a_shell_steps_move_deletion_and_overwrite_are_listed_with_exact_counts(api):
    workspace = api.host.settings.resolved_workspace
    api.model.push(one_shell_step(workspace), Reply(text="done"))
    session_id = await run_session(api, key(api, "alice"))

    steps = (await api.client.get(f"/api/sessions/{session_id}/checkpoints")).json()

    files = [
        {k: f[k] for k in ("path", "status", "old_path", "similarity", "added", "removed")} for f in steps[0]["files"]
    ]
    assert files == [
        {"path": "old.txt", "status": "deleted", "old_path": None, "similarity": None, "added": 0, "removed": 1},
        {"path": "plan.md", "status": "renamed", "old_path": "draft.md", "similarity": 100, "added": 0, "removed": 0},
        {"path": "report.txt", "status": "modified", "old_path": None, "similarity": None, "added": 3, "removed": 6},
    ]
    status = await api.anonymous.get(f"/api/sessions/{session_id}/checkpoints/status", headers=key(api, "vera", "viewer"))
    assert status.status_code == 200, status.text
    assert status.json() == {"enabled": True}


@pytest.mark.parametrize("chosen", ["plan.md", "draft.md"])
async def test_rewinding_a_moved_file_by_either_path_puts_it_back_where_it_was(api, chosen):
    workspace = api.host.settings.resolved_workspace
    api.model.push(one_shell_step(workspace), Reply(text="done"))
    alice = key(api, "alice")
    session_id = await run_session(api, alice)

    rewound = await api.anonymous.post(
        f"/api/sessions/{session_id}/rewind", json={"step": 1, "files": [chosen]}, headers=alice
    )

    assert rewound.status_code == 200, rewound.text
    assert sorted(rewound.json()["restored"]) == ["draft.md", "plan.md"]
    assert (workspace / "draft.md").read_text() == "# Plan\nfirst\nsecond\n"
    assert not (workspace / "plan.md").exists()
    assert not (workspace / "old.txt").exists()  # not chosen: still deleted
    assert (workspace / "report.txt").read_text() == "a\nb\nc\n"


async def test_a_host_without_checkpoints_says_so_and_lists_no_steps(api_without_checkpoints):
    api = api_without_checkpoints
    api.model.push(one_shell_step(api.host.settings.resolved_workspace), Reply(text="done"))
    session_id = await run_session(api, key(api, "alice"))

    assert (await api.client.get(f"/api/sessions/{session_id}/checkpoints/status")).json() == {"enabled": False}
    assert (await api.client.get(f"/api/sessions/{session_id}/checkpoints")).json() == []
    assert (await api.client.get("/api/sessions/nope/checkpoints/status")).status_code == 404
    assert (await api.anonymous.get(f"/api/sessions/{session_id}/checkpoints/status")).status_code == 401
