"""ServerFailures: a failed MCP server is told once per failure episode, on stderr and to the
sessions running when it is first reported; not again in every new session."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from typing import Any

from backend.app.servers import ServerFailures
from backend.mcp.config import McpServerConfig
from backend.mcp.server import ServerStatus
from backend.testing import Reply
from backend.testing.harness import only_servers, scripted_host

BROKEN = McpServerConfig(
    command=sys.executable,
    args=["-c", "import sys; print('boom: GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(3)"],
)


async def server_failed_events(host, session_id: str) -> list[dict]:
    return [e.data for e in await host.store.list_events(session_id) if e.type == "server.failed"]


async def test_a_failed_server_is_logged_once_and_told_once_to_the_session_whose_turn_goes_on_without_it(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="backend.app.servers")
    script = [Reply(text="first"), Reply(text="second"), Reply(text="other")]
    async with scripted_host(tmp_path, script, mcp_servers={**only_servers(), "broken": BROKEN}) as h:
        first = await h.run("one")
        await h.host.runner.send(first.id, "two")
        first = await h.host.runner.wait(first.id, timeout=30)
        other = await h.run("three")
        told_first = await server_failed_events(h.host, first.id)
        told_other = await server_failed_events(h.host, other.id)
        events = [e.type for e in await h.host.store.list_events(first.id)]
    assert first.status == other.status == "completed"
    assert [t["server"] for t in told_first] == ["broken"]
    assert "boom: GITHUB_TOKEN is not set" in told_first[0]["error"]
    # Told before the turn went on without the server's tools: ahead of the model's answer.
    assert events.index("server.failed") < events.index("usage")
    # A session started later in the same failure is not told again (the Servers page says it).
    assert told_other == []
    logged = [r.getMessage() for r in caplog.records if "broken" in r.getMessage()]
    assert len(logged) == 1 and "boom: GITHUB_TOKEN is not set" in logged[0]


async def test_working_servers_make_no_report(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="backend.app.servers")
    async with scripted_host(tmp_path, [Reply(text="fine")], mcp_servers=only_servers("shell")) as h:
        session = await h.run("hi")
        assert await server_failed_events(h.host, session.id) == []
    assert not [r for r in caplog.records if r.name == "backend.app.servers"]


# The episodes, with a pool whose states the test sets and the sessions that run.


def status(name: str, state: str, error: str | None = None) -> ServerStatus:
    return ServerStatus(name=name, state=state, error=error, tools=[], pid=None, restarts=0)  # type: ignore[arg-type]


@dataclass
class FakePool:
    states: list[ServerStatus] = field(default_factory=list)

    def statuses(self) -> list[ServerStatus]:
        return list(self.states)


@dataclass
class Running:
    id: str


@dataclass
class FakeStore:
    running: list[str] = field(default_factory=list)

    async def list_sessions(self, **_: Any) -> list[Running]:
        return [Running(id=i) for i in self.running]


@dataclass
class FakeBus:
    published: list[tuple[str, str, dict]] = field(default_factory=list)

    async def publish(self, session_id: str, type_: str, data: dict) -> None:
        self.published.append((session_id, type_, data))


def failures(pool: FakePool, store: FakeStore, bus: FakeBus) -> ServerFailures:
    return ServerFailures(pool=pool, bus=bus, store=store, is_running=lambda _: True)  # type: ignore[arg-type]


async def test_a_failure_seen_with_no_session_running_is_told_to_the_first_sessions_that_run_then_to_no_new_one():
    pool, store, bus = FakePool([status("gh", "error", "gh: no token")]), FakeStore(), FakeBus()
    reporter = failures(pool, store, bus)
    await reporter.report()  # at the host's start: nobody to tell yet
    assert bus.published == []
    store.running = ["a", "b"]
    await reporter.report()
    assert sorted(s for s, _, _ in bus.published) == ["a", "b"]
    store.running = ["a", "b", "c"]
    await reporter.report()
    await reporter.report()
    assert len(bus.published) == 2  # c, a new session in the same failure, hears nothing


async def test_a_server_that_recovers_and_fails_again_is_a_new_failure_told_again(caplog):
    caplog.set_level(logging.WARNING, logger="backend.app.servers")
    pool, store, bus = FakePool([status("gh", "error", "gh: no token")]), FakeStore(["a"]), FakeBus()
    reporter = failures(pool, store, bus)
    await reporter.report()
    pool.states = [status("gh", "ready")]
    store.running = ["b"]
    await reporter.report()
    pool.states = [status("gh", "error", "gh: crashed again")]
    await reporter.report()
    assert [(s, d["error"]) for s, _, d in bus.published] == [("a", "gh: no token"), ("b", "gh: crashed again")]
    assert [r.getMessage().splitlines()[0] for r in caplog.records] == ["gh: no token", "gh: crashed again"]


async def test_each_failing_server_is_its_own_episode():
    pool, store, bus = FakePool([status("gh", "error", "gh: no token")]), FakeStore(["a"]), FakeBus()
    reporter = failures(pool, store, bus)
    await reporter.report()
    pool.states.append(status("jira", "error", "jira: no token"))
    store.running = ["a", "b"]
    await reporter.report()
    assert [(s, d["server"]) for s, _, d in bus.published] == [("a", "gh"), ("a", "jira"), ("b", "jira")]
