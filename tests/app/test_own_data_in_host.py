"""A host whose workspace holds one of its own folders, or a way into one: no file tool reaches
them, whatever the rules allow, and each refusal is audited with its reason.

A workspace that holds the data dir itself never gets a session (backend/engine/workspaces.py);
`checkpoints.dir` inside a workspace, or a symlink into the data dir, is where a model could
reach them. The real file server runs as a stdio process, as in production; the model is scripted.
"""

from __future__ import annotations

import os
from pathlib import Path

from backend.domain.models import AuditEntry, ToolCallRecord
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import Harness, only_servers, scripted_host

BOUND = 60
MARK = "quokka-5519"
"""Text that lives only in Overseer's folders."""
ALLOW_ALL = {"allow": ["Read(./**)", "Edit(./**)"]}


def calls(*specs: tuple[str, dict]) -> list[Reply]:
    """One reply making every call (ids c0, c1, ...), then a closing text."""
    made = [
        ScriptedToolCall(id=f"c{i}", name=f"mcp__file__{tool}", arguments=args) for i, (tool, args) in enumerate(specs)
    ]
    return [Reply(tool_calls=made), Reply(text="done")]


async def audit_of(h: Harness, records: dict[str, ToolCallRecord]) -> dict[str, AuditEntry]:
    session_id = next(iter(records.values())).session_id
    return {a.tool_call_id: a for a in await h.host.store.list_audit(session_id=session_id) if a.tool_call_id}


async def run(h: Harness) -> dict[str, ToolCallRecord]:
    session = await h.run("look around", timeout=BOUND)
    assert session.status == "completed"
    return {r.id: r for r in await h.host.store.list_tool_calls(session.id)}


def plant(folder: Path, name: str) -> None:
    """A text file holding MARK inside one of Overseer's folders (a checkpoint's file, say)."""
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"{MARK}\n")


def denied_for(record: ToolCallRecord, audit: dict[str, AuditEntry], shown: str, which: str) -> bool:
    reason = f"'{shown}' is Overseer's own data (its {which}, "
    return (
        record.status == "denied"
        and record.result is not None
        and record.result.startswith(f"Denied: {reason}")
        and "never open to tools" in record.result
        and (audit[record.id].decision, audit[record.id].detail[: len(reason)]) == ("deny", reason)
    )


async def test_a_checkpoints_dir_inside_the_workspace_is_closed_to_every_file_tool(tmp_path: Path) -> None:
    workspace = (tmp_path / "workspace").resolve()
    moved = workspace / ".snapshots"
    object_path = ".snapshots/ws-1/objects/ab12"
    spellings = [object_path, f"src/../{object_path}", f"link/ws-1/objects/ab12", str(workspace / object_path)]
    script = calls(
        *[("read_file", {"path": p}) for p in spellings],
        ("list_dir", {"path": ".snapshots"}),
        ("grep", {"pattern": MARK, "path": ".snapshots"}),
        ("write_file", {"path": ".snapshots/ws-1/objects/cd34", "content": "forged"}),
        ("edit_file", {"path": object_path, "old_text": MARK, "new_text": "gone"}),
        ("grep", {"pattern": MARK}),
        ("list_dir", {"path": "."}),
        ("glob", {"pattern": "**/ab12"}),
        ("read_file", {"path": "src/README.md"}),  # calls of one reply may run at once: not the edited file
        ("edit_file", {"path": "src/main.py", "old_text": "hi", "new_text": "hello"}),
    )
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "main.py").write_text("print('hi')\n")
    (workspace / "src" / "README.md").write_text("read me\n")
    plant(moved, "ws-1/objects/ab12")
    os.symlink(moved, workspace / "link")
    async with scripted_host(
        tmp_path, script, in_process=False, mcp_servers=only_servers("file"), permissions=ALLOW_ALL,
        checkpoints={"dir": str(moved)},
    ) as h:
        records = await run(h)
        audit = await audit_of(h, records)

    refused = [*spellings, ".snapshots", ".snapshots", ".snapshots/ws-1/objects/cd34", object_path]
    for index, shown in enumerate(refused):
        record = records[f"c{index}"]
        assert denied_for(record, audit, shown, "checkpoints dir"), (index, record.result)
    assert sorted(p.name for p in (moved / "ws-1" / "objects").iterdir()) == ["ab12"]
    assert (moved / "ws-1" / "objects" / "ab12").read_text() == f"{MARK}\n"
    assert records["c8"].result == f"no matches for {MARK!r} under ."
    listed = records["c9"].result.split("\n")
    assert listed[0] == "src/" and "link/" not in listed  # the link's line is hidden too (hides)
    assert records["c10"].result == "no paths match '**/ab12' under ."
    assert records["c11"].result == "read me\n"
    assert records["c12"].status == "done" and (workspace / "src" / "main.py").read_text() == "print('hello')\n"


async def test_a_symlink_from_the_workspace_into_the_data_dir_is_refused_as_overseers_data(tmp_path: Path) -> None:
    data = (tmp_path / "data").resolve()
    workspace = (tmp_path / "workspace").resolve()
    workspace.mkdir()
    os.symlink(data, workspace / "state")
    script = calls(
        ("read_file", {"path": "state/overseer.db"}),
        ("list_dir", {"path": "state"}),
        ("grep", {"pattern": MARK, "path": "state/logs"}),
        ("write_file", {"path": "state/checkpoints/x", "content": "x"}),
        ("read_file", {"path": "../data/overseer.db"}),
    )
    async with scripted_host(
        tmp_path, script, in_process=False, mcp_servers=only_servers("file"), permissions=ALLOW_ALL
    ) as h:
        plant(data, "logs/notes.log")
        records = await run(h)
        audit = await audit_of(h, records)

    assert denied_for(records["c0"], audit, "state/overseer.db", "data dir")
    assert denied_for(records["c1"], audit, "state", "data dir")
    assert denied_for(records["c2"], audit, "state/logs", "data dir")
    assert denied_for(records["c3"], audit, "state/checkpoints/x", "checkpoints dir")
    assert denied_for(records["c4"], audit, "../data/overseer.db", "data dir")
    assert not (data / "checkpoints" / "x").exists()
