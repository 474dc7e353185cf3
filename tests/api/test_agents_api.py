"""Named agents over REST (issue 19): GET /api/agents for anyone signed in, POST/PUT for admins
(written to the config file, in force at once), and sessions and invocations routed to agents."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
import yaml

from backend.api.app import create_app
from backend.app.host import Host
from backend.mcp.pool import McpPool
from backend.testing import Reply, ScriptedModelServer
from backend.testing.harness import scripted_settings

pytestmark = pytest.mark.asyncio(loop_scope="module")

CONFIG = """\
# the person's own comments stay
agents:
  - id: reviewer
    name: Code reviewer
    model: openai/review-model
    permissions: {deny: ["Bash(git push *)"]}
routes:
  - {channel: rest, user: robot, agent: reviewer}
"""


@dataclass
class Api:
    client: httpx.AsyncClient
    anonymous: httpx.AsyncClient
    host: Host
    app: object
    model: ScriptedModelServer

    def as_role(self, role: str) -> dict[str, str]:
        return {"X-API-Key": self.app.state.auth.create_api_key(f"{role}-key", role=role)}  # type: ignore[attr-defined]

    def config(self) -> dict:
        return yaml.safe_load(self.host.settings.writable_config_file.read_text())


@pytest_asyncio.fixture(loop_scope="module")
async def api(tmp_path: Path, pool: McpPool, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Api]:
    config = tmp_path / "overseer.yaml"
    config.write_text(CONFIG)
    monkeypatch.setenv("OVERSEER_CONFIG", str(config))
    with ScriptedModelServer() as model:
        settings = scripted_settings(tmp_path, model)
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
                yield Api(client=client, anonymous=anonymous, host=host, app=app, model=model)
        finally:
            await host.aclose()


async def test_anyone_signed_in_lists_the_agents_main_first_and_nobody_else_does(api: Api):
    response = await api.anonymous.get("/api/agents", headers=api.as_role("viewer"))
    assert response.status_code == 200
    listed = response.json()
    assert [a["id"] for a in listed] == ["main", "reviewer"]
    reviewer = listed[1]
    assert (reviewer["name"], reviewer["model"], reviewer["servers"]) == ("Code reviewer", "openai/review-model", None)
    assert reviewer["permissions"]["deny"] == ["Bash(git push *)"]
    assert reviewer["workspace"].endswith("agents/reviewer/workspace")
    assert (await api.anonymous.get("/api/agents")).status_code == 401


async def test_an_admin_creates_and_edits_an_agent_written_to_the_file_and_used_at_once(api: Api):
    created = await api.client.post("/api/agents", json={"id": "ops", "servers": ["file"], "mode": "ask"})
    assert created.status_code == 201, created.text
    assert created.json()["servers"] == ["file"]
    edited = await api.client.put("/api/agents/ops", json={"id": "ops", "name": "Operations", "model": "openai/ops-model"})
    assert edited.status_code == 200 and edited.json()["name"] == "Operations"
    config = api.config()
    assert config["agents"][1] == {"id": "ops", "name": "Operations", "model": "openai/ops-model"}
    assert config["routes"] == [{"channel": "rest", "user": "robot", "agent": "reviewer"}]
    api.model.push(Reply(text="ops here"))
    session = await api.client.post("/api/sessions", json={"prompt": "hi", "agent": "ops"})
    assert session.status_code == 201 and session.json()["agent_id"] == "ops"
    await api.host.runner.wait(session.json()["id"], timeout=60)
    assert api.model.requests[-1].model == "ops-model"


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"id": "reviewer"}, 409, "exists already"),
        ({"id": "x", "servers": ["nope"]}, 422, "'nope' is not a configured MCP server"),
        ({"id": "x", "mode": "nope"}, 422, "no mode 'nope'"),
        ({"id": "Bad Id"}, 422, "id"),
        ({"id": "x", "permissions": {"deny": ["Bash(unclosed"]}}, 422, "permissions"),
    ],
)
async def test_an_agent_that_does_not_validate_is_refused_and_the_file_is_unchanged(api: Api, body, status, words):
    before = api.host.settings.writable_config_file.read_text()
    response = await api.client.post("/api/agents", json=body)
    assert response.status_code == status, response.text
    assert words in response.text
    assert api.host.settings.writable_config_file.read_text() == before
    assert [a.id for a in api.host.agents.list()] == ["main", "reviewer"]


async def test_only_admins_create_or_edit_agents(api: Api):
    for role in ("viewer", "approver"):
        key = api.as_role(role)
        assert (await api.anonymous.post("/api/agents", json={"id": "sneaky"}, headers=key)).status_code == 403
        assert (await api.anonymous.put("/api/agents/reviewer", json={"id": "reviewer"}, headers=key)).status_code == 403
    assert [a.id for a in api.host.agents.list()] == ["main", "reviewer"]
    assert (await api.client.put("/api/agents/ghost", json={"id": "ghost"})).status_code == 404


async def test_a_session_or_invocation_naming_an_unknown_agent_is_a_404_and_leaves_no_session(api: Api):
    for path in ("/api/sessions", "/api/agents/invoke"):
        response = await api.client.post(path, json={"prompt": "hi", "agent": "ghost"})
        assert response.status_code == 404 and "no agent 'ghost'" in response.text
    assert await api.host.store.list_sessions() == []


async def test_a_rest_session_naming_no_agent_follows_the_rest_route_for_its_caller(api: Api):
    api.model.push(Reply(text="main"), Reply(text="reviewer"))
    as_main = await api.client.post("/api/agents/invoke", json={"prompt": "who?"})
    robot = {"X-API-Key": api.app.state.auth.create_api_key("robot", role="approver")}  # type: ignore[attr-defined]
    as_robot = await api.anonymous.post("/api/agents/invoke", json={"prompt": "who?"}, headers=robot)
    assert as_main.status_code == as_robot.status_code == 200, as_robot.text
    sessions = [await api.host.store.get_session(r.json()["session_id"]) for r in (as_main, as_robot)]
    assert [s.agent_id for s in sessions] == ["main", "reviewer"]
    assert [r.model for r in api.model.requests[-2:]] == ["scripted", "review-model"]
