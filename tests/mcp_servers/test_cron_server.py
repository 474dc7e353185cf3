"""The cron tool server (mcp_servers/cron): in memory against a real running host, against no host,
and once over real stdio, where the process boundary (argv, environment) is what is tested."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from tool_server_helpers import REPO_ROOT, text

from backend.domain.session_options import SessionOptions
from backend.testing.web import WebHarness, serve_scripted
from mcp_servers.cron.server import create_server

TOOLS = {"cron_create", "cron_list", "cron_delete", "cron_pause", "cron_resume"}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[WebHarness]:
    """The whole product on a free port (no tool servers of its own: this test is the client)."""
    with serve_scripted(tmp_path / "host", [], builtin_servers=False) as h:
        yield h


def connect(h: WebHarness | None, tmp_path: Path, *, trust_meta: bool = False, token: str | None = None) -> Client:
    server = create_server(
        tmp_path, trust_meta=trust_meta, host_url=h.url if h else None, token=token or (h.token if h else "")
    )
    return Client(server)


async def test_a_created_job_is_stored_on_the_host_and_listed(host, tmp_path):
    async with connect(host, tmp_path) as client:
        created = await client.call_tool(
            "cron_create",
            {"schedule": "0 9 * * 1-5", "prompt": "Check the build", "name": "Build", "timezone": "Europe/Berlin"},
        )
        listed = await client.call_tool("cron_list", {})
    assert not created.is_error, text(created)
    job = created.structured_content["schedule"]
    assert (job["name"], job["kind"], job["timezone"], job["status"]) == ("Build", "cron", "Europe/Berlin", "active")
    assert job["id"] in text(created) and "next run" in text(created) and "CE" in text(created)
    stored = host.call(host.host.store.get_schedule(job["id"]))
    assert stored.prompt == "Check the build" and stored.created_by_session is None
    assert [j["id"] for j in listed.structured_content["schedules"]] == [job["id"]]
    assert text(listed).startswith("1 scheduled job:")


async def test_pause_resume_and_delete_change_the_job_on_the_host(host, tmp_path):
    async with connect(host, tmp_path) as client:
        created = await client.call_tool("cron_create", {"schedule": "every 1h", "prompt": "p"})
        job_id = created.structured_content["schedule"]["id"]
        paused = await client.call_tool("cron_pause", {"id": job_id})
        assert host.call(host.host.store.get_schedule(job_id)).status == "paused"
        resumed = await client.call_tool("cron_resume", {"id": job_id})
        assert host.call(host.host.store.get_schedule(job_id)).status == "active"
        deleted = await client.call_tool("cron_delete", {"id": job_id})
        empty = await client.call_tool("cron_list", {})
    assert paused.structured_content["schedule"]["status"] == "paused"
    assert resumed.structured_content["schedule"]["status"] == "active"
    assert not deleted.is_error and deleted.structured_content == {"deleted": job_id}
    assert text(empty) == "No scheduled jobs."


async def test_the_hosts_refusal_comes_back_as_an_error_result_with_its_detail(host, tmp_path):
    async with connect(host, tmp_path) as client:
        bad = await client.call_tool("cron_create", {"schedule": "every 30s", "prompt": "p"})
        missing = await client.call_tool("cron_pause", {"id": "no-such-job"})
        sneaky = await client.call_tool("cron_delete", {"id": "../../sessions"})
    assert bad.is_error and "minimum of 1 minute" in text(bad)
    assert missing.is_error and "schedule 'no-such-job' does not exist" in text(missing)
    assert sneaky.is_error and "is not a job id" in text(sneaky)


async def test_inside_overseer_the_calling_session_is_recorded_and_can_be_the_target(host, tmp_path):
    session = host.call(host.host.runner.create(options=SessionOptions(title="asker")))
    meta = {"overseer/session_id": session.id, "overseer/workspace": str(host.workspace)}
    async with connect(host, tmp_path, trust_meta=True) as client:
        result = await client.call_tool(
            "cron_create", {"schedule": "@daily", "prompt": "p", "session_id": "current"}, meta=meta
        )
    assert not result.is_error, text(result)
    job = host.call(host.host.store.get_schedule(result.structured_content["schedule"]["id"]))
    assert (job.created_by_session, job.session_id, job.workspace) == (session.id, session.id, str(host.workspace))
    assert f"sends to session {session.id}" in text(result)


async def test_a_standalone_server_ignores_the_callers_meta(host, tmp_path):
    meta = {"overseer/session_id": "forged", "overseer/workspace": "/"}
    async with connect(host, tmp_path, trust_meta=False) as client:
        result = await client.call_tool("cron_create", {"schedule": "@daily", "prompt": "p"}, meta=meta)
        current = await client.call_tool(
            "cron_create", {"schedule": "@daily", "prompt": "p", "session_id": "current"}, meta=meta
        )
    job = result.structured_content["schedule"]
    assert (job["created_by_session"], job["workspace"]) == (None, None)
    assert current.is_error and "only works inside Overseer" in text(current)


async def test_without_a_host_every_tool_says_how_to_connect_one(tmp_path):
    calls = {
        "cron_create": {"schedule": "@daily", "prompt": "p"},
        "cron_list": {},
        "cron_delete": {"id": "x"},
        "cron_pause": {"id": "x"},
        "cron_resume": {"id": "x"},
    }
    async with connect(None, tmp_path) as client:
        for name, arguments in calls.items():
            result = await client.call_tool(name, arguments)
            assert result.is_error, name
            assert "overseer serve" in text(result) and "--host-url" in text(result) and "OVERSEER_TOKEN" in text(result)


async def test_a_wrong_token_is_an_error_that_names_the_token_variable(host, tmp_path):
    async with connect(host, tmp_path, token="wrong") as client:
        result = await client.call_tool("cron_list", {})
    assert result.is_error and "401" in text(result) and "OVERSEER_TOKEN" in text(result)


async def test_tools_declare_honest_annotations(tmp_path):
    async with connect(None, tmp_path) as client:
        tools = {tool.name: tool.annotations for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    assert tools["cron_list"].read_only_hint is True
    assert (tools["cron_create"].read_only_hint, tools["cron_create"].destructive_hint) == (False, False)
    assert tools["cron_delete"].destructive_hint is True
    assert tools["cron_pause"].idempotent_hint is True and tools["cron_resume"].idempotent_hint is True
    assert all(a.open_world_hint is False for a in tools.values())


async def test_stdio_cron_server_takes_the_url_from_argv_and_the_token_from_the_environment(host, tmp_path):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.cron", "--host-url", host.url],
        env={"PYTHONPATH": str(REPO_ROOT), "OVERSEER_TOKEN": host.token, "PATH": os.environ.get("PATH", "")},
        cwd=REPO_ROOT,
    )
    async with Client(params) as client:
        created = await client.call_tool("cron_create", {"schedule": "every 2h", "prompt": "over stdio"})
        listed = await client.call_tool("cron_list", {})
    assert not created.is_error, text(created)
    job_id = created.structured_content["schedule"]["id"]
    assert host.call(host.host.store.get_schedule(job_id)).prompt == "over stdio"
    assert job_id in text(listed)
