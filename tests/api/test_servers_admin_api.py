"""Admins add, edit, switch off, remove and restart MCP servers through /api/servers, with real
server processes; the config file in use is rewritten as the person wrote it, bar the one entry."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
import pytest_asyncio
import yaml

from backend.api.app import create_app
from backend.app.host import Host
from backend.mcp.pool import McpPool
from backend.testing import ScriptedModelServer
from backend.testing.harness import scripted_settings
from tests.mcp.fixtures.remote_server import RemoteServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "echo_server.py"
BOUND = 30
CONFIG = """\
# My Overseer settings.
model: openai/kept   # the model I use
mcpServers:
  # switched off while I travel
  parked:
    command: parked-server
    disabled: true
permissions:
  allow: ["Bash(git status)"]  # safe
"""


@dataclass
class Api:
    client: httpx.AsyncClient
    anonymous: httpx.AsyncClient
    host: Host
    app: object


def echo_entry(**extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(ECHO_SERVER)], **extra}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    """This module's own pool, empty at first: the tests add to it."""
    async with McpPool({}, log_dir=tmp_path_factory.mktemp("servers-admin") / "logs") as started:
        yield started


@pytest_asyncio.fixture(loop_scope="module")
async def api(tmp_path: Path, pool: McpPool, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Api]:
    """A host reading a config file with comments (through OVERSEER_CONFIG, as a person's would)."""
    config = tmp_path / "overseer.yaml"
    config.write_text(CONFIG)
    monkeypatch.setenv("OVERSEER_CONFIG", str(config))
    with ScriptedModelServer() as model:
        settings = scripted_settings(tmp_path, model)
        assert settings.config_file == config
        host = Host(settings, pool=pool)
        app = create_app(settings, host=host)
        await host.start()
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {app.state.auth.token}"}
        try:
            async with (
                httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers) as client,
                httpx.AsyncClient(transport=transport, base_url="http://test") as anonymous,
            ):
                yield Api(client=client, anonymous=anonymous, host=host, app=app)
        finally:
            for name in [s.name for s in pool.statuses()]:
                await pool.remove_server(name)
            await host.aclose()


def config_of(api: Api) -> dict:
    return yaml.safe_load(api.host.settings.writable_config_file.read_text())


async def listed(api: Api) -> dict[str, dict]:
    response = await api.client.get("/api/servers")
    assert response.status_code == 200
    return {server["name"]: server for server in response.json()}


async def until_state(api: Api, name: str, state: str) -> dict:
    """The server once it is in `state`, waited for on the pool (bounded), never by sleeping."""
    with anyio.fail_after(BOUND):
        await api.host.pool.wait_ready()
    server = (await listed(api))[name]
    assert server["state"] == state, server
    return server


async def test_an_added_server_is_written_to_the_config_file_and_starts_without_a_restart(api):
    response = await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry()})
    assert response.status_code == 201, response.text
    assert response.json()["editable"] is True

    server = await until_state(api, "echo", "ready")
    assert "mcp__echo__echo" in {tool["name"] for tool in server["tools"]}
    result = await api.host.pool.call("mcp__echo__echo", {"text": "hi"}, workspace=Path("/"), session_id="s")
    assert '"text": "hi"' in result.text
    assert config_of(api)["mcpServers"]["echo"] == echo_entry()


async def test_the_rest_of_the_config_file_keeps_its_comments_and_settings(api):
    await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry()})
    text = api.host.settings.writable_config_file.read_text()
    for kept in ("# My Overseer settings.", "model: openai/kept   # the model I use",
                 "  # switched off while I travel", 'allow: ["Bash(git status)"]  # safe'):
        assert kept in text
    assert config_of(api)["mcpServers"]["parked"] == {"command": "parked-server", "disabled": True}


async def test_a_server_switched_off_in_the_file_is_listed_as_disabled(api):
    parked = (await listed(api))["parked"]
    assert (parked["state"], parked["enabled"], parked["editable"]) == ("stopped", False, True)


async def test_an_edit_restarts_the_server_with_its_new_config(api):
    await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry(env={"FLAVOUR": "old"})})
    response = await api.client.put("/api/servers/echo", json={"entry": echo_entry(env={"FLAVOUR": "new"})})
    assert response.status_code == 200, response.text
    with anyio.fail_after(BOUND):
        flavour = await api.host.pool.call("mcp__echo__getenv", {"name": "FLAVOUR"}, workspace=Path("/"), session_id="s")
    assert flavour.text == "new"
    assert config_of(api)["mcpServers"]["echo"]["env"] == {"FLAVOUR": "new"}


async def test_literal_env_values_are_hidden_when_read_back_and_kept_when_sent_back_hidden(api):
    entry = echo_entry(env={"TOKEN": "s3cret-value", "HOME_REF": "${HOME}"})
    await api.client.post("/api/servers", json={"name": "echo", "entry": entry})
    shown = (await api.client.get("/api/servers/echo/config")).json()["entry"]
    assert shown["env"] == {"TOKEN": "********", "HOME_REF": "${HOME}"}

    response = await api.client.put("/api/servers/echo", json={"entry": {**shown, "args": [str(ECHO_SERVER)]}})
    assert response.status_code == 200, response.text
    assert config_of(api)["mcpServers"]["echo"]["env"] == {"TOKEN": "s3cret-value", "HOME_REF": "${HOME}"}
    with anyio.fail_after(BOUND):
        token = await api.host.pool.call("mcp__echo__getenv", {"name": "TOKEN"}, workspace=Path("/"), session_id="s")
    assert token.text == "s3cret-value"


async def test_disabling_stops_the_server_and_enabling_starts_it_again(api):
    await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry()})
    off = await api.client.post("/api/servers/echo/disable")
    assert off.status_code == 200 and off.json()["enabled"] is False
    assert api.host.pool.config_of("echo") is None
    assert config_of(api)["mcpServers"]["echo"]["disabled"] is True

    on = await api.client.post("/api/servers/echo/enable")
    assert on.status_code == 200 and on.json()["enabled"] is True
    await until_state(api, "echo", "ready")
    assert "disabled" not in config_of(api)["mcpServers"]["echo"]


async def test_a_removed_server_leaves_the_file_the_pool_and_the_list(api):
    await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry()})
    response = await api.client.delete("/api/servers/echo")
    assert response.status_code == 204
    assert "echo" not in await listed(api)
    assert "echo" not in config_of(api)["mcpServers"]
    assert api.host.pool.tool("mcp__echo__echo") is None


async def test_a_restart_runs_a_new_process_and_says_who_restarted_it(api):
    await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry()})
    before = await api.host.pool.call("mcp__echo__pid", {}, workspace=Path("/"), session_id="s")
    response = await api.client.post("/api/servers/echo/restart")
    assert response.status_code == 200
    after = await api.host.pool.call("mcp__echo__pid", {}, workspace=Path("/"), session_id="s")
    assert after.text != before.text
    server = (await listed(api))["echo"]
    assert (server["restarts"], server["last_restart"]) == (1, "was restarted by admin")


async def test_the_log_tail_shows_what_the_server_wrote_to_stderr(api):
    await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry()})
    await until_state(api, "echo", "ready")
    response = await api.client.get("/api/servers/echo/log?lines=20")
    assert response.status_code == 200
    assert "echo server starting" in response.json()["lines"]


@pytest.mark.parametrize(
    ("entry", "names"),
    [
        ({"command": ""}, ("mcpServers.bad", "command")),
        ({"command": "x", "arg": ["typo"]}, ("mcpServers.bad.arg",)),
        ({"command": "x", "start_timeout": -1}, ("mcpServers.bad.start_timeout",)),
        ({"command": "${OVERSEER_TEST_SURELY_UNSET}"}, ("mcpServers.bad.command: ${OVERSEER_TEST_SURELY_UNSET}",)),
    ],
)
async def test_a_bad_entry_is_a_422_naming_the_field_and_changes_nothing(api, entry, names):
    before = api.host.settings.writable_config_file.read_text()
    response = await api.client.post("/api/servers", json={"name": "bad", "entry": entry})
    assert response.status_code == 422
    for name in names:
        assert name in response.json()["detail"]
    assert api.host.settings.writable_config_file.read_text() == before
    assert "bad" not in await listed(api)


async def test_a_built_in_servers_name_is_refused_and_built_ins_cannot_be_edited(api):
    response = await api.client.post("/api/servers", json={"name": "memory", "entry": echo_entry()})
    assert response.status_code == 422
    assert "memory-server" in response.json()["detail"]
    edit = await api.client.put("/api/servers/memory", json={"entry": echo_entry()})
    assert edit.status_code == 400


async def test_adding_a_name_that_exists_is_a_409_and_unknown_names_are_404(api):
    await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry()})
    again = await api.client.post("/api/servers", json={"name": "echo", "entry": echo_entry()})
    assert again.status_code == 409
    for method, path in (("PUT", "/api/servers/nobody"), ("DELETE", "/api/servers/nobody"),
                         ("POST", "/api/servers/nobody/restart"), ("GET", "/api/servers/nobody/log")):
        response = await api.client.request(method, path, json={"entry": echo_entry()} if method == "PUT" else None)
        assert response.status_code == 404, (method, path, response.text)


async def test_only_admins_change_servers_while_viewers_may_look(api):
    for role in ("viewer", "approver"):
        key = {"X-API-Key": api.app.state.auth.create_api_key(f"{role}-key", role=role)}
        assert (await api.anonymous.get("/api/servers", headers=key)).status_code == 200
        for method, path, body in (
            ("POST", "/api/servers", {"name": "echo", "entry": echo_entry()}),
            ("PUT", "/api/servers/parked", {"entry": {"command": "x"}}),
            ("POST", "/api/servers/parked/enable", None),
            ("POST", "/api/servers/parked/restart", None),
            ("DELETE", "/api/servers/parked", None),
            ("GET", "/api/servers/parked/config", None),
        ):
            response = await api.anonymous.request(method, path, json=body, headers=key)
            assert response.status_code == 403, (role, method, path)
    assert config_of(api)["mcpServers"] == {"parked": {"command": "parked-server", "disabled": True}}
    assert api.host.pool.statuses() == []


async def test_a_remote_server_added_by_url_connects_and_keeps_its_token_a_reference(api, monkeypatch):
    monkeypatch.setenv("DOCS_TOKEN", "s3cret-token")
    async with RemoteServer(token="s3cret-token", legacy=True) as remote:
        entry = {"type": "http", "url": remote.url, "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
        response = await api.client.post("/api/servers", json={"name": "docs", "entry": entry})
        assert response.status_code == 201, response.text
        docs = await until_state(api, "docs", "ready")
        with anyio.fail_after(BOUND):
            echoed = await api.host.pool.call("mcp__docs__echo", {"text": "in"}, workspace=Path("/"), session_id="s")
        shown = (await api.client.get("/api/servers/docs/config")).json()["entry"]
        running = api.host.pool.config_of("docs")
        assert running is not None and running.headers == {"Authorization": "Bearer ${DOCS_TOKEN}"}
        await api.client.delete("/api/servers/docs")
    assert (docs["type"], docs["url"]) == ("http", remote.url)
    assert echoed.text == "echo: in"
    assert shown["headers"] == {"Authorization": "Bearer ${DOCS_TOKEN}"}
    assert "s3cret-token" not in api.host.settings.writable_config_file.read_text()


async def test_a_remote_entry_without_its_type_is_a_422_saying_what_to_add(api):
    response = await api.client.post("/api/servers", json={"name": "docs", "entry": {"url": "http://127.0.0.1:9/mcp"}})
    assert response.status_code == 422
    assert "mcpServers.docs" in response.json()["detail"] and "type: http" in response.json()["detail"]
