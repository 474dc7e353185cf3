"""Checkpoints before steps (issue 32), in a running host with the real file and shell servers:
which calls get one, their numbering and state, that the row is stored before the tool runs,
that a checkpoint that cannot be taken is said and does not block the step, and retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from backend.checkpoints.steps import Checkpointer, needs_checkpoint
from backend.domain.checkpoints import Checkpoint
from backend.domain.models import AuditEntry, Session, ToolCallRecord
from backend.domain.tools import ToolAnnotations
from backend.engine.events import EventBus
from backend.mcp.pool import McpPool
from backend.store.ready import then
from backend.store.sqlite import SqliteStore
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

# The shared file + shell pool (tests/conftest.py) runs on the module's event loop.
pytestmark = pytest.mark.asyncio(loop_scope="module")

WRITE, READ, EXEC = "mcp__file__write_file", "mcp__file__read_file", "mcp__shell__exec"
ALLOWED = {"policies": {WRITE: "always_allow", READ: "always_allow", EXEC: "always_allow"}}


def call(name: str, **arguments: Any) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


def workspace_with(tmp_path: Path, text: str) -> Path:
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    (workspace / "a.txt").write_text(text)
    return workspace


async def events_of(host: Any, session_id: str, type_: str) -> list[dict[str, Any]]:
    return [e.data for e in await host.store.list_events(session_id) if e.type == type_]


async def test_a_write_and_a_shell_command_get_checkpoints_1_and_2_holding_the_workspace_before_each(
    tmp_path: Path, pool: McpPool
) -> None:
    workspace = workspace_with(tmp_path, "one\n")
    script = [call(WRITE, path="a.txt", content="two\n"), call(EXEC, command="echo three > a.txt"), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **ALLOWED) as h:
        session = await h.run("go", timeout=60)
        first, second = await h.host.store.list_checkpoints(session.id)
        calls = await h.host.store.list_tool_calls(session.id)
        shadow = await h.host.checkpointer.shadow_for(workspace)
        before_write = shadow.changes(first.commit, second.commit)
        before_exec = shadow.changes(second.commit)
        created = await events_of(h.host, session.id, "checkpoint.created")
        events = await h.host.store.list_events(session.id)
    assert [c.status for c in calls] == ["done", "done"]
    # Each step's start and its checkpoint were written together (one transaction, seq and seq + 1).
    starts = [(e.seq, e.data["id"]) for e in events if e.type == "tool.started"]
    assert [(e.seq, e.data["id"]) for e in events if e.type == "checkpoint.created"] == [(n + 1, i) for n, i in starts]
    assert (first.step, first.tool_name, first.tool_call_id) == (1, WRITE, calls[0].id)
    assert (second.step, second.tool_name, second.tool_call_id) == (2, EXEC, calls[1].id)
    assert first.workspace == str(workspace) and first.kind == "step"
    # Before the write the file said one; before the command, two (the command made it three).
    assert [(c.path, c.status) for c in before_write] == [("a.txt", "modified")]
    assert "-one" in before_write[0].diff and "+two" in before_write[0].diff
    assert "-two" in before_exec[0].diff and "+three" in before_exec[0].diff
    assert [(e["step"], e["id"], e["commit"]) for e in created] == [
        (1, calls[0].id, first.commit),
        (2, calls[1].id, second.commit),
    ]


async def test_a_read_only_call_gets_no_checkpoint(tmp_path: Path, pool: McpPool) -> None:
    workspace = workspace_with(tmp_path, "one\n")
    script = [call(READ, path="a.txt"), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **ALLOWED) as h:
        session = await h.run("go", timeout=60)
        [record] = await h.host.store.list_tool_calls(session.id)
        assert record.status == "done"
        assert await h.host.store.list_checkpoints(session.id) == []
        assert await events_of(h.host, session.id, "checkpoint.created") == []


class RowCheckingRunner:
    """The pool, but each call first notes whether its checkpoint row is already stored."""

    def __init__(self, pool: McpPool, store: Any) -> None:
        self.pool, self.store = pool, store
        self.seen: list[tuple[str, list[str | None]]] = []

    def tool(self, name: str) -> Any:
        return self.pool.tool(name)

    def tools(self) -> list[Any]:
        return self.pool.tools()

    async def call(self, name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        stored = await self.store.list_checkpoints(kwargs["session_id"])
        self.seen.append((kwargs["call_id"], [c.tool_call_id for c in stored]))
        return await self.pool.call(name, arguments, **kwargs)


async def test_the_checkpoint_row_is_stored_before_the_tool_runs(tmp_path: Path, pool: McpPool) -> None:
    workspace = workspace_with(tmp_path, "one\n")
    script = [call(WRITE, path="a.txt", content="two\n"), Reply(text="ok")]
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **ALLOWED) as h:
        runner = RowCheckingRunner(pool, h.host.store)
        h.host.gate.tools = runner
        session = await h.run("go", timeout=60)
        [record] = await h.host.store.list_tool_calls(session.id)
    assert runner.seen == [(record.id, [record.id])]


async def test_a_checkpoint_that_cannot_be_taken_does_not_block_the_step_and_says_why(
    tmp_path: Path, pool: McpPool
) -> None:
    workspace = workspace_with(tmp_path, "one\n")
    not_a_folder = tmp_path / "not-a-folder"
    not_a_folder.write_text("")
    script = [call(WRITE, path="a.txt", content="two\n"), Reply(text="ok")]
    settings = {**ALLOWED, "checkpoints": {"dir": not_a_folder}}
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **settings) as h:
        session = await h.run("go", timeout=60)
        [record] = await h.host.store.list_tool_calls(session.id)
        [said] = await events_of(h.host, session.id, "checkpoint.created")
        assert await h.host.store.list_checkpoints(session.id) == []
    assert record.status == "done" and (workspace / "a.txt").read_text() == "two\n"
    assert (said["id"], said["commit"], said["step"]) == (record.id, None, None)
    assert said["error"].startswith("no checkpoint: ")


async def test_checkpoints_off_take_none(tmp_path: Path, pool: McpPool) -> None:
    workspace = workspace_with(tmp_path, "one\n")
    script = [call(WRITE, path="a.txt", content="two\n"), Reply(text="ok")]
    settings = {**ALLOWED, "checkpoints": {"enabled": False}}
    async with scripted_host(tmp_path, script, pool=pool, workspace=workspace, **settings) as h:
        session = await h.run("go", timeout=60)
        assert await h.host.store.list_checkpoints(session.id) == []
        assert h.host.gate.checkpoints is None


@pytest.mark.parametrize("enabled", [True, False])
async def test_a_host_with_checkpoints_on_makes_their_folder_private_at_start_so_every_commands_sandbox_hides_it(
    tmp_path: Path, pool: McpPool, enabled: bool
) -> None:
    # A command's sandbox hides only a folder that exists when the command starts.
    folder = tmp_path / "elsewhere" / "checkpoints"
    settings = {**ALLOWED, "checkpoints": {"enabled": enabled, "dir": str(folder)}}
    async with scripted_host(tmp_path, [Reply(text="ok")], pool=pool, workspace=workspace_with(tmp_path, ""), **settings) as h:
        assert folder.is_dir() is enabled
        if enabled:
            assert folder.stat().st_mode & 0o777 == 0o700
            assert folder in h.host.gate.confinement.hidden


async def test_writers_and_unannotated_third_party_tools_get_a_checkpoint_read_only_ones_do_not() -> None:
    read_only, writes, unsaid = ToolAnnotations(readOnlyHint=True), ToolAnnotations(readOnlyHint=False), None
    for name in (WRITE, "mcp__file__edit_file", EXEC, "mcp__memory__memory_save", "mcp__memory__memory_forget"):
        assert needs_checkpoint(name, writes)
        assert needs_checkpoint(name, read_only)  # the built-in writers whatever their hints say
    assert needs_checkpoint("mcp__github__create_file", unsaid)
    assert needs_checkpoint("mcp__github__create_file", writes)
    assert needs_checkpoint("mcp__browser__screenshot", writes)  # saves a PNG into the workspace
    assert not needs_checkpoint("mcp__github__get_file", read_only)
    assert not needs_checkpoint(READ, read_only)
    assert not needs_checkpoint("mcp__memory__memory_search", read_only)
    for name in ("mcp__cron__cron_create", "mcp__invoke_agent__invoke_agent", "mcp__browser__click"):
        assert not needs_checkpoint(name, writes)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def take(checkpointer: Checkpointer, workspace: Path, session_id: str, n: int, *, first: int = 0) -> list[str]:
    commits = []
    for i in range(first, first + n):
        (workspace / "a.txt").write_text(f"{session_id} {i}\n")
        cp = await checkpointer.before_step(
            session_id=session_id, workspace=workspace, call_id=f"{session_id}-{i}", tool_name=WRITE, annotations=None
        )
        assert cp is not None
        commits.append(cp.commit)
        # A checkpoint of a few files never yields to the loop: the retention it may have
        # started is let finish here, as a host's next awaits would.
        await checkpointer.aclose()
    return commits


async def test_retention_keeps_the_last_n_and_the_recent_ones_but_every_checkpoint_of_a_running_session(
    tmp_path: Path,
) -> None:
    workspace = workspace_with(tmp_path, "")
    clock = Clock(datetime(2026, 1, 1, tzinfo=UTC))
    async with SqliteStore(tmp_path / "o.db") as store:
        checkpointer = Checkpointer(
            store=store, bus=EventBus(store), root=tmp_path / "checkpoints", keep_last=3, keep_days=30, clock=clock
        )
        await store.create_session(Session(id="running", workspace=str(workspace), status="running"))
        running = await take(checkpointer, workspace, "running", 2)
        done = await take(checkpointer, workspace, "done", 11)
        await checkpointer.aclose()  # the background prunes after each checkpoint have finished
        shadow = await checkpointer.shadow_for(workspace)
        # keep_last and 10 more (a fifth, at least 10) are let be: pruning is done in batches.
        assert len(await store.list_checkpoints("done")) == 11
        done += await take(checkpointer, workspace, "done", 1, first=11)
        await checkpointer.aclose()
        # Past that: back to keep_last, done's oldest gone; the running session's older ones stay.
        assert [c.step for c in await store.list_checkpoints("done")] == [10, 11, 12]
        assert [c.step for c in await store.list_checkpoints("running")] == [1, 2]
        # Their snapshots wait for the sweep (a walk of the repository is not a step's cost).
        assert set(shadow.snapshots()) == {*running, *done}
        assert await checkpointer.prune(workspace) == 0  # the sweep: no row to drop, snapshots to
        assert set(shadow.snapshots()) == {*running, *done[9:]}
        # Past keep_days: everything of the finished session goes, the running one's stays.
        clock.now += timedelta(days=31)
        assert await checkpointer.prune(workspace) == 3
        assert await store.list_checkpoints("done") == []
        assert set(shadow.snapshots()) == set(running)
        usage = await checkpointer.usage()
    assert [(w.workspace, w.checkpoints) for w in usage.workspaces] == [(str(workspace), 2)]
    assert usage.bytes >= usage.workspaces[0].bytes > 0
    assert (usage.keep_last, usage.keep_days) == (3, 30)


async def test_retention_after_steps_reads_the_workspaces_rows_ever_more_rarely_while_nothing_can_go(
    tmp_path: Path,
) -> None:
    # Many running sessions in one workspace keep every checkpoint: each prune reads all rows
    # and frees none, so how often it runs must shrink as the rows grow.
    workspace = workspace_with(tmp_path, "")
    async with SqliteStore(tmp_path / "o.db") as store:
        checkpointer = Checkpointer(store=store, bus=EventBus(store), root=tmp_path / "checkpoints", keep_last=3)
        await store.create_session(Session(id="running", workspace=str(workspace), status="running"))
        reads = 0
        real_read = store.retained_checkpoints

        async def counted(workspace: str, **kwargs: Any):
            nonlocal reads
            reads += 1
            return await real_read(workspace, **kwargs)

        store.retained_checkpoints = counted  # type: ignore[method-assign]
        for first in range(0, 300, 50):
            await take(checkpointer, workspace, "running", 50, first=first)
            await checkpointer.aclose()  # the prunes begun meanwhile have finished
        assert len(await store.list_checkpoints("running")) == 300
    assert reads <= 16  # a prune every 10 steps would be 30; half more each time is ~11


async def test_a_workspace_named_by_a_link_that_is_repointed_is_checkpointed_where_the_link_now_leads(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    link = tmp_path / "ws"
    link.symlink_to(first)
    async with SqliteStore(tmp_path / "o.db") as store:
        checkpointer = Checkpointer(store=store, bus=EventBus(store), root=tmp_path / "checkpoints")
        (first / "a.txt").write_text("first\n")
        one = await checkpointer.before_step(session_id="s", workspace=link, call_id="c1", tool_name=WRITE, annotations=None)
        link.unlink()
        link.symlink_to(second)
        (second / "b.txt").write_text("second\n")
        two = await checkpointer.before_step(session_id="s", workspace=link, call_id="c2", tool_name=WRITE, annotations=None)
        await checkpointer.aclose()
    assert one is not None and two is not None
    assert (one.workspace, two.workspace) == (str(first.resolve()), str(second.resolve()))


async def test_a_step_number_another_writer_took_meanwhile_is_not_reused_and_the_step_still_starts(
    tmp_path: Path,
) -> None:
    # The host counts each session's checkpoints itself (a query a step fewer); a rewind from
    # the CLI numbers one behind its back. The next step's start is refused by the key, and
    # written once more, whole, under the next free number.
    workspace = workspace_with(tmp_path, "")
    async with SqliteStore(tmp_path / "o.db") as store:
        bus = EventBus(store)
        checkpointer = Checkpointer(store=store, bus=bus, root=tmp_path / "checkpoints")

        async def step(call_id: str) -> Checkpoint | None:
            record = ToolCallRecord(id=call_id, session_id="s", name=WRITE, status="running")
            allow = AuditEntry.of(record, "allow", "policy", "always_allow")

            async def start(checkpoint: Checkpoint | None, taken: dict[str, Any] | None) -> None:
                assert checkpoint is not None and taken is not None
                await bus.publish_pair(
                    "s",
                    ("tool.started", {"id": call_id}),
                    ("checkpoint.created", taken),
                    persist=lambda first, second: then(
                        store.record_start(allow, record, checkpoint, event=first, second=second),
                        lambda written: (written.event, written.second),
                    ),
                )

            (workspace / "a.txt").write_text(call_id)
            return await checkpointer.before_step(
                session_id="s", workspace=workspace, call_id=call_id, tool_name=WRITE, annotations=None, start=start
            )

        first = await step("c1")
        rewind = first.model_copy(update={"step": 2, "kind": "rewind", "tool_call_id": None, "tool_name": None})
        await store.add_checkpoint(rewind)  # as another process would: this host's count is now stale
        second = await step("c2")
        await checkpointer.aclose()
        rows = await store.list_checkpoints("s")
        events = await store.list_events("s")
    assert first is not None and second is not None
    assert [(c.step, c.tool_call_id) for c in rows] == [(1, "c1"), (2, None), (3, "c2")]
    assert second.step == 3
    # Each start was written once: one tool.started and one checkpoint.created per step.
    assert [(e.type, e.data.get("step")) for e in events] == [
        ("tool.started", None), ("checkpoint.created", 1), ("tool.started", None), ("checkpoint.created", 3)
    ]
