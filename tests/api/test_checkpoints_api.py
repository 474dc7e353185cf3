"""GET /api/sessions/{id}/checkpoints, .../checkpoints/{step}/diff and POST .../rewind
(backend/api/routes/checkpoints.py over backend/app/checkpoints.py): each step's changes from the
shadow repository, and a rewind that restores the workspace, is audited, can itself be undone,
can fork the conversation, and is refused while the session runs and to anyone but its owner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from backend.testing import Reply, ScriptedToolCall
from tests.api.conftest import Api, serve_api

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

BOUND = 30  # seconds; a bound on waits, never a timing assertion
CHANGING = ["mcp__file__write_file", "mcp__file__edit_file", "mcp__shell__exec"]


@pytest_asyncio.fixture(loop_scope="module")
async def api(tmp_path, pool):
    """The API with the file and shell tools allowed by rule, so a session's steps run unasked."""
    async with serve_api(tmp_path, pool, permissions={"allow": CHANGING}) as started:
        yield started


def key(api: Api, name: str, role: str = "approver") -> dict[str, str]:
    return {"X-API-Key": api.app.state.auth.create_api_key(name, role=role)}


def call(name: str, id: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=f"mcp__{name}", arguments=arguments, id=id)])


async def run_session(api: Api, headers: dict[str, str], prompt: str = "change the files") -> str:
    """Start a session as `headers`' owner and drive it to its end (answering any ask as them)."""
    events = api.host.bus.subscribe(None)
    try:
        response = await api.anonymous.post("/api/sessions", json={"prompt": prompt}, headers=headers)
        assert response.status_code == 201, response.text
        session_id = response.json()["id"]
        while True:
            event = await events.get(timeout=BOUND)
            if event.session_id != session_id:
                continue
            if event.type == "approval.requested":  # a command the sandbox cannot confine still asks
                answer = {"decision": "allow_once"}
                await api.anonymous.post(f"/api/approvals/{event.data['id']}", json=answer, headers=headers)
            if event.type == "session.status" and event.data["status"] in ("completed", "error", "stopped"):
                assert event.data["status"] == "completed", event.data
                return session_id
    finally:
        api.host.bus.unsubscribe(events)


async def start_until_running(api: Api, events: Any, headers: dict[str, str], call_id: str) -> str:
    """Start a session as `headers`' owner and return its id once its call `call_id` runs
    (answering any ask as them); `events` is a subscription made before."""
    response = await api.anonymous.post("/api/sessions", json={"prompt": "wait"}, headers=headers)
    session_id = response.json()["id"]
    while True:
        event = await events.get(timeout=BOUND)
        if event.session_id != session_id:
            continue
        if event.type == "approval.requested":
            answer = {"decision": "allow_once"}
            await api.anonymous.post(f"/api/approvals/{event.data['id']}", json=answer, headers=headers)
        if event.type == "tool.started" and event.data["id"] == call_id:
            return session_id


def three_steps(api: Api) -> Path:
    """A workspace with kept.txt and gone.txt, and a script that writes new.txt, edits kept.txt
    and deletes gone.txt with a shell command."""
    workspace = api.host.settings.resolved_workspace
    (workspace / "kept.txt").write_text("one\ntwo\n")
    (workspace / "gone.txt").write_bytes(b"\x00binary\xff")
    api.model.push(
        call("file__write_file", "w1", path="new.txt", content="fresh\n"),
        call("file__edit_file", "e1", path="kept.txt", old_text="two", new_text="TWO"),
        call("shell__exec", "x1", command="rm gone.txt"),
        Reply(text="done"),
    )
    return workspace


async def test_a_rewind_over_rest_restores_written_edited_and_deleted_files_and_the_audit_names_who(api):
    alice = key(api, "alice")
    workspace = three_steps(api)
    session_id = await run_session(api, alice)
    assert (workspace / "new.txt").exists() and not (workspace / "gone.txt").exists()

    listed = await api.anonymous.get(f"/api/sessions/{session_id}/checkpoints", headers=key(api, "vera", "viewer"))
    assert listed.status_code == 200, listed.text
    steps = listed.json()
    assert [(s["step"], s["tool_call_id"], s["kind"]) for s in steps] == [(1, "w1", "step"), (2, "e1", "step"), (3, "x1", "step")]
    assert [[(f["path"], f["status"]) for f in s["files"]] for s in steps] == [
        [("new.txt", "added")], [("kept.txt", "modified")], [("gone.txt", "deleted")]
    ]
    assert "+TWO" in steps[1]["files"][0]["diff"]
    diff = await api.client.get(f"/api/sessions/{session_id}/checkpoints/1/diff")
    assert sorted(f["path"] for f in diff.json()) == ["gone.txt", "kept.txt", "new.txt"]

    rewound = await api.anonymous.post(f"/api/sessions/{session_id}/rewind", json={"step": 1}, headers=alice)
    assert rewound.status_code == 200, rewound.text
    assert rewound.json() | {"restored": sorted(rewound.json()["restored"])} == {
        "step": 1,
        "tool_name": "mcp__file__write_file",
        "workspace": str(workspace.resolve()),
        "restored": ["gone.txt", "kept.txt", "new.txt"],
        "checkpoint_step": 4,
        "forked_session_id": None,
    }
    assert not (workspace / "new.txt").exists()
    assert (workspace / "kept.txt").read_text() == "one\ntwo\n"
    assert (workspace / "gone.txt").read_bytes() == b"\x00binary\xff"

    audit = (await api.client.get("/api/audit", params={"session_id": session_id, "tool": "rewind"})).json()
    [row] = audit["items"]
    assert (row["decider"]["name"], row["decider"]["via"], row["decision"]) == ("alice", "rest", "allow")
    assert "before step 1" in row["detail"]


async def test_rewinding_a_rewind_restores_the_workspace_as_it_was_after_the_session(api):
    alice = key(api, "alice")
    workspace = three_steps(api)
    session_id = await run_session(api, alice)
    first = await api.anonymous.post(f"/api/sessions/{session_id}/rewind", json={"step": 2}, headers=alice)
    assert (workspace / "new.txt").exists() and (workspace / "kept.txt").read_text() == "one\ntwo\n"

    # Without a step: before the last one, which is the rewind's own checkpoint.
    undone = await api.anonymous.post(f"/api/sessions/{session_id}/rewind", json={}, headers=alice)
    assert undone.status_code == 200, undone.text
    assert undone.json()["step"] == first.json()["checkpoint_step"] == 4
    assert (workspace / "new.txt").read_text() == "fresh\n"
    assert (workspace / "kept.txt").read_text() == "one\nTWO\n"
    assert not (workspace / "gone.txt").exists()
    steps = (await api.client.get(f"/api/sessions/{session_id}/checkpoints")).json()
    assert [(s["kind"], s["by"] and s["by"]["name"]) for s in steps[3:]] == [("rewind", "alice"), ("rewind", "alice")]


async def test_a_rewind_of_chosen_files_restores_only_them_and_refuses_a_file_that_did_not_change(api):
    alice = key(api, "alice")
    workspace = three_steps(api)
    session_id = await run_session(api, alice)
    refused = await api.anonymous.post(
        f"/api/sessions/{session_id}/rewind", json={"step": 1, "files": ["nope.txt"]}, headers=alice
    )
    assert refused.status_code == 422 and "nope.txt did not change" in refused.json()["detail"]
    outside = await api.anonymous.post(
        f"/api/sessions/{session_id}/rewind", json={"step": 1, "files": ["../etc/passwd"]}, headers=alice
    )
    assert outside.status_code == 422 and "relative to it" in outside.json()["detail"]
    rewound = await api.anonymous.post(
        f"/api/sessions/{session_id}/rewind", json={"step": 1, "files": ["gone.txt"]}, headers=alice
    )
    assert rewound.json()["restored"] == ["gone.txt"]
    assert (workspace / "gone.txt").read_bytes() == b"\x00binary\xff"
    assert (workspace / "new.txt").exists() and (workspace / "kept.txt").read_text() == "one\nTWO\n"


async def test_a_rewind_is_refused_with_409_while_the_session_is_running_a_step(api):
    alice = key(api, "alice")
    workspace = api.host.settings.resolved_workspace
    api.model.push(
        call("file__write_file", "w1", path="new.txt", content="fresh\n"),
        call("shell__exec", "x1", command="while [ ! -e go ]; do sleep 0.05; done; echo late > late.txt"),
        Reply(text="done"),
    )
    events = api.host.bus.subscribe(None)
    try:
        session_id = await start_until_running(api, events, alice, "x1")
        refused = await api.anonymous.post(f"/api/sessions/{session_id}/rewind", json={"step": 1}, headers=alice)
        assert refused.status_code == 409
        assert "running a step" in refused.json()["detail"]
        assert (workspace / "new.txt").exists()
        (workspace / "go").touch()
        done = await api.host.runner.wait(session_id, timeout=BOUND)
        assert done.status == "completed"
    finally:
        api.host.bus.unsubscribe(events)
    assert (workspace / "late.txt").read_text() == "late\n"
    assert [s["kind"] for s in (await api.client.get(f"/api/sessions/{session_id}/checkpoints")).json()] == ["step", "step"]


async def test_a_rewind_is_refused_while_another_session_runs_a_step_in_the_same_workspace(api):
    alice = key(api, "alice")
    workspace = api.host.settings.resolved_workspace
    api.model.push(call("file__write_file", "w1", path="mine.txt", content="mine\n"), Reply(text="done"))
    finished = await run_session(api, alice, "write mine")
    api.model.push(
        call("shell__exec", "x1", command="while [ ! -e go2 ]; do sleep 0.05; done; echo theirs > theirs.txt"),
        Reply(text="done"),
    )
    events = api.host.bus.subscribe(None)
    try:
        running = await start_until_running(api, events, alice, "x1")
        refused = await api.anonymous.post(f"/api/sessions/{finished}/rewind", json={"step": 1}, headers=alice)
        assert refused.status_code == 409
        assert f"session {running} is running a step in the same workspace" in refused.json()["detail"]
        assert (workspace / "mine.txt").read_text() == "mine\n"  # nothing was restored
        (workspace / "go2").touch()
        assert (await api.host.runner.wait(running, timeout=BOUND)).status == "completed"
    finally:
        api.host.bus.unsubscribe(events)
    rewound = await api.anonymous.post(f"/api/sessions/{finished}/rewind", json={"step": 1}, headers=alice)
    assert rewound.status_code == 200, rewound.text
    assert not (workspace / "mine.txt").exists()


async def test_a_fork_starts_a_session_whose_transcript_ends_before_the_step(api):
    alice = key(api, "alice")
    three_steps(api)
    session_id = await run_session(api, alice)
    forked = await api.anonymous.post(
        f"/api/sessions/{session_id}/rewind", json={"step": 2, "fork": True}, headers=alice
    )
    assert forked.status_code == 200, forked.text
    fork_id = forked.json()["forked_session_id"]
    fork = (await api.client.get(f"/api/sessions/{fork_id}")).json()
    original = (await api.client.get(f"/api/sessions/{session_id}")).json()
    assert fork["created_by"]["name"] == "alice" and fork["workspace"] == original["workspace"]
    said = [(m["role"], m["content"], [c["id"] for c in m["tool_calls"]], m["tool_call_id"]) for m in fork["messages"]]
    before = [(m["role"], m["content"], [c["id"] for c in m["tool_calls"]], m["tool_call_id"]) for m in original["messages"]]
    # The prompt, the write and its result: up to the assistant message that asked for the edit.
    assert [(role, calls, result) for role, _, calls, result in said] == [
        ("user", [], None), ("assistant", ["w1"], None), ("tool", [], "w1")
    ]
    assert said == before[:3]
    assert fork["status"] == "idle"


async def test_an_approver_cannot_rewind_another_users_session(api):
    alice = key(api, "alice")
    workspace = three_steps(api)
    session_id = await run_session(api, alice)
    refused = await api.anonymous.post(f"/api/sessions/{session_id}/rewind", json={"step": 1}, headers=key(api, "mallory"))
    assert refused.status_code == 403 and "alice" in refused.json()["detail"]
    viewer = await api.anonymous.post(f"/api/sessions/{session_id}/rewind", json={}, headers=key(api, "vera", "viewer"))
    assert viewer.status_code == 403
    assert (workspace / "new.txt").exists() and not (workspace / "gone.txt").exists()
    audit = (await api.client.get("/api/audit", params={"session_id": session_id, "tool": "rewind"})).json()
    assert audit["items"] == []
    assert len((await api.client.get(f"/api/sessions/{session_id}/checkpoints")).json()) == 3
    by_admin = await api.client.post(f"/api/sessions/{session_id}/rewind", json={"step": 1})
    assert by_admin.status_code == 200


async def test_an_unknown_step_is_404_naming_the_steps_there_are(api):
    alice = key(api, "alice")
    three_steps(api)
    session_id = await run_session(api, alice)
    missing = await api.anonymous.post(f"/api/sessions/{session_id}/rewind", json={"step": 9}, headers=alice)
    assert missing.status_code == 404 and "steps are 1 to 3" in missing.json()["detail"]
    assert (await api.client.get(f"/api/sessions/{session_id}/checkpoints/9/diff")).status_code == 404
    assert (await api.client.get("/api/sessions/nope/checkpoints")).status_code == 404


async def test_a_workspace_that_is_gone_lists_its_steps_without_files_and_a_rewind_is_409(api):
    alice = key(api, "alice")
    workspace = three_steps(api)
    session_id = await run_session(api, alice)
    moved = workspace.with_name("moved-away")
    workspace.rename(moved)
    try:
        steps = (await api.client.get(f"/api/sessions/{session_id}/checkpoints")).json()
        assert [(s["step"], s["files"]) for s in steps] == [(1, []), (2, []), (3, [])]
        refused = await api.anonymous.post(f"/api/sessions/{session_id}/rewind", json={"step": 1}, headers=alice)
        assert refused.status_code == 409 and "no longer exists" in refused.json()["detail"]
    finally:
        moved.rename(workspace)
