"""Every route of the app, called with every kind of credential: each role gets what the table says.

The table names the least role each route needs. It is checked against the app's own route table
(hidden routes, the WebSocket and /mcp included), so a new route fails here until someone decides
who may call it. Every call below its role must be refused before it does anything (403; 401
without a credential); every call at or above it must get past authorization (any answer but 401
or 403). Bodies are deliberately invalid (`[]`) so an allowed call is refused by validation, not run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import httpx
import pytest
import pytest_asyncio
from fastapi.routing import APIRoute, APIWebSocketRoute
from starlette.routing import Route

from backend.api.app import create_app
from backend.app.host import Host
from backend.auth import ROLE_RANK, Principal, Role, hash_password
from backend.testing import ScriptedModelServer
from backend.testing.harness import scripted_settings

pytestmark = pytest.mark.asyncio(loop_scope="module")

Need = Literal["public", "signed", "viewer", "approver", "admin"]
"""`signed`: the route's credential is a signed link in its path, checked by the route itself."""

ROUTES: dict[tuple[str, str], Need] = {
    # Login, health and the documents anyone may read.
    ("GET", "/api/health"): "public",
    ("POST", "/api/auth/login"): "public",
    ("GET", "/login"): "public",
    ("GET", "/oauth/callback"): "public",
    ("GET", "/openapi.json"): "public",
    ("GET", "/docs"): "public",
    ("GET", "/docs/oauth2-redirect"): "public",
    ("GET", "/redoc"): "public",
    ("GET", "/{path:path}"): "public",  # the dashboard's files; /api/* under it is a 404
    ("GET", "/answer/{token}"): "signed",
    ("POST", "/answer/{token}"): "signed",
    # Who am I, and signing out.
    ("POST", "/api/auth/logout"): "viewer",
    ("GET", "/api/me"): "viewer",
    # Sessions: reading is a viewer's; starting, talking to and stopping a session an approver's.
    ("GET", "/api/sessions"): "viewer",
    ("GET", "/api/sessions/{session_id}"): "viewer",
    ("GET", "/api/sessions/{session_id}/events"): "viewer",
    ("GET", "/api/sessions/{session_id}/media/{name}"): "viewer",
    ("GET", "/api/sessions/{session_id}/refused-calls"): "viewer",
    ("GET", "/api/sessions/{session_id}/checkpoints"): "viewer",
    ("GET", "/api/sessions/{session_id}/checkpoints/{step}/diff"): "viewer",
    ("GET", "/api/sessions/{session_id}/checkpoints/status"): "viewer",  # whether this host takes checkpoints
    ("GET", "/api/sessions/{session_id}/standing-rules"): "viewer",
    ("POST", "/api/sessions"): "approver",
    ("PATCH", "/api/sessions/{session_id}"): "viewer",  # then its owner or an admin (test_session_edits_api)
    ("DELETE", "/api/sessions/{session_id}"): "approver",
    ("POST", "/api/sessions/{session_id}/rewind"): "approver",  # then its owner or an admin (test_checkpoints_api)
    ("POST", "/api/sessions/{session_id}/messages"): "approver",
    ("POST", "/api/sessions/{session_id}/stop"): "approver",
    ("POST", "/api/sessions/{session_id}/tool-calls/{call_id}/retry"): "approver",
    # Approvals: a viewer sees them, an approver answers them.
    ("GET", "/api/approvals"): "viewer",
    ("GET", "/api/approvals/{approval_id}"): "viewer",
    ("GET", "/api/approvals/{approval_id}/file"): "approver",  # a file on disk, for the card's diff
    ("POST", "/api/approvals/{approval_id}"): "approver",
    # Policy, audit and spend.
    ("GET", "/api/policies"): "viewer",
    ("PUT", "/api/policies"): "admin",
    ("GET", "/api/permissions"): "viewer",
    ("PUT", "/api/permissions"): "admin",
    ("GET", "/api/policy/managed"): "viewer",
    ("GET", "/api/audit"): "viewer",
    ("GET", "/api/spend"): "viewer",
    ("PUT", "/api/spend/budgets"): "admin",
    ("GET", "/api/workspace-trust"): "admin",
    ("POST", "/api/workspace-trust"): "admin",
    ("GET", "/api/workspaces"): "viewer",  # the folders a session may run in
    # Tool servers: what runs on the host is an admin's to change.
    ("GET", "/api/servers"): "viewer",
    ("POST", "/api/servers"): "admin",
    ("GET", "/api/servers/{name}/log"): "viewer",  # credential-shaped text redacted
    ("GET", "/api/servers/{name}/config"): "admin",
    ("PUT", "/api/servers/{name}"): "admin",
    ("DELETE", "/api/servers/{name}"): "admin",
    ("POST", "/api/servers/{name}/disable"): "admin",
    ("POST", "/api/servers/{name}/enable"): "admin",
    ("POST", "/api/servers/{name}/restart"): "admin",
    ("POST", "/api/servers/{name}/tools/{tool}/accept"): "admin",  # a changed tool's new definition
    ("POST", "/api/servers/{name}/login"): "admin",
    ("GET", "/api/servers/{name}/sign-in"): "viewer",  # where a sign-in stands, never its tokens
    # Agents, modes, skills, schedules and workflows: configuration is an admin's, running an approver's.
    ("GET", "/api/agents"): "viewer",
    ("POST", "/api/agents"): "admin",
    ("PUT", "/api/agents/{agent_id}"): "admin",
    ("POST", "/api/agents/invoke"): "approver",
    ("GET", "/api/modes"): "viewer",
    ("GET", "/api/modes/{name}"): "viewer",
    ("GET", "/api/modes/{name}/builtin"): "viewer",
    ("PUT", "/api/modes/{name}"): "admin",
    ("DELETE", "/api/modes/{name}"): "admin",
    ("GET", "/api/skills"): "viewer",
    ("GET", "/api/skills/{name}"): "viewer",
    ("PUT", "/api/skills/{name}"): "admin",
    ("DELETE", "/api/skills/{name}"): "admin",
    ("GET", "/api/schedules"): "viewer",
    ("GET", "/api/schedules/{schedule_id}"): "viewer",
    ("POST", "/api/schedules"): "admin",
    ("PATCH", "/api/schedules/{schedule_id}"): "admin",
    ("DELETE", "/api/schedules/{schedule_id}"): "approver",  # an approver may stop what an admin scheduled
    ("POST", "/api/schedules/{schedule_id}/pause"): "approver",  # stopping is anyone's who may answer
    ("POST", "/api/schedules/{schedule_id}/resume"): "admin",
    ("POST", "/api/schedules/{schedule_id}/run"): "approver",  # as starting a session is
    ("GET", "/api/workflows"): "viewer",
    ("GET", "/api/workflows/{name}"): "viewer",
    ("GET", "/api/workflow-runs"): "viewer",
    ("GET", "/api/workflow-runs/{run_id}"): "viewer",
    ("POST", "/api/workflows/{name}/runs"): "approver",
    ("POST", "/api/workflow-runs/{run_id}/stop"): "approver",
    # Push subscriptions are each person's own.
    ("GET", "/api/push/vapid-key"): "viewer",
    ("POST", "/api/push/subscriptions"): "approver",  # a push asks for an answer
    ("DELETE", "/api/push/subscriptions"): "approver",
    # The model the host talks to, and its key.
    ("GET", "/api/settings/model"): "viewer",
    ("PUT", "/api/settings/model"): "admin",
    ("POST", "/api/settings/model/test"): "admin",
    ("GET", "/api/settings/checkpoints"): "admin",  # it names the host's folders
    ("GET", "/api/settings/rule-warnings"): "viewer",
    # The live feed and Overseer as an MCP server.
    ("WS", "/ws"): "viewer",
    # Each MCP tool checks its own role (the gateway's tests); the endpoint takes any credential.
    ("POST", "/mcp"): "viewer",
    ("GET", "/mcp"): "viewer",
    ("DELETE", "/mcp"): "viewer",
}


@dataclass(frozen=True)
class Caller:
    """One kind of credential: the role it carries and how it is sent."""

    label: str
    role: Role | None  # None: no credential at all

    @property
    def rank(self) -> int:
        return -1 if self.role is None else ROLE_RANK[self.role]


CALLERS = (
    Caller("anonymous", None),
    Caller("the token", "admin"),
    Caller("an admin's login", "admin"),
    Caller("an approver's login", "approver"),
    Caller("a viewer's login", "viewer"),
    Caller("an approver key", "approver"),
    Caller("a viewer key", "viewer"),
)

USERS = {"ada": "admin", "ann": "approver", "vic": "viewer"}


def app_routes(app) -> Iterator[tuple[str, str]]:
    """(method, path) of every route the app serves, those left out of the OpenAPI document included."""

    def walk(routes, prefix: str = ""):
        for route in routes:
            if hasattr(route, "original_router"):  # an included router, resolved lazily
                yield from walk(route.original_router.routes, prefix + route.include_context.prefix)
            else:
                yield prefix, route

    for prefix, route in walk(app.router.routes):
        path = prefix + route.path
        if isinstance(route, APIWebSocketRoute):
            yield "WS", path
        elif isinstance(route, (APIRoute, Route)) and route.methods:
            for method in sorted(route.methods - {"HEAD"}):
                yield method, path
        else:  # /mcp: a plain route object taking every method the MCP transport speaks
            yield "POST", path


@dataclass
class Table:
    app: object
    transport: httpx.ASGITransport
    credentials: dict[str, str | None]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def table(tmp_path_factory, pool) -> Iterator[Table]:
    root = tmp_path_factory.mktemp("roles")
    secret = hash_password("pw")
    users = [{"username": name, "password_hash": secret, "role": role} for name, role in USERS.items()]
    with ScriptedModelServer() as model:
        settings = scripted_settings(root, model, users=users)
        host = Host(settings, pool=pool)
        app = create_app(settings, host=host)
        await host.start()
        auth = app.state.auth
        credentials: dict[str, str | None] = {
            "anonymous": None,
            "the token": auth.token,
            "an approver key": auth.create_api_key("robot-approver", role="approver"),
            "a viewer key": auth.create_api_key("robot-viewer", role="viewer"),
        }
        try:
            yield Table(app=app, transport=httpx.ASGITransport(app=app), credentials=credentials)
        finally:
            await host.aclose()


def credential_for(table: Table, caller: Caller) -> str | None:
    """A fresh login for people (signing out revokes the one it is sent with), else the fixed credential."""
    person = {"an admin's login": "ada", "an approver's login": "ann", "a viewer's login": "vic"}.get(caller.label)
    if person is None:
        return table.credentials[caller.label]
    return table.app.state.auth.issue_jwt(Principal(name=person, role=USERS[person], kind="user"))


def concrete(path: str) -> str:
    return path.replace("{path:path}", "index.html").replace("{token}", "not-a-signed-link").replace(
        "{session_id}", "x"
    ).replace("{approval_id}", "x").replace("{call_id}", "x").replace("{name}", "x").replace(
        "{agent_id}", "x"
    ).replace("{schedule_id}", "x").replace("{run_id}", "x").replace("{step}", "1")


async def test_the_role_table_names_every_route_the_app_serves(table):
    served = set(app_routes(table.app))
    unlisted = sorted(served - ROUTES.keys())
    stale = sorted(ROUTES.keys() - served)
    assert not unlisted, f"routes nobody has decided roles for (add them to ROUTES): {unlisted}"
    assert not stale, f"ROUTES lists routes the app no longer serves: {stale}"


@pytest.mark.parametrize("caller", CALLERS, ids=lambda caller: caller.label)
async def test_every_route_admits_exactly_the_roles_the_table_gives(table, caller):
    wrong: list[str] = []
    async with httpx.AsyncClient(transport=table.transport, base_url="http://127.0.0.1") as client:
        for (method, path), need in sorted(ROUTES.items()):
            if method == "WS":
                continue  # the WebSocket's own test below
            credential = credential_for(table, caller)
            headers = {"Authorization": f"Bearer {credential}"} if credential else {}
            if path == "/mcp":
                headers |= {"Accept": "application/json, text/event-stream"}
            response = await client.request(method, concrete(path), headers=headers, json=[])
            refused = response.status_code in (401, 403)
            if need == "public":
                expected_refused = False
            elif need == "signed":  # a bearer credential opens no link: a forged one is refused for everyone
                expected_refused = True
            else:
                expected_refused = caller.rank < ROLE_RANK[need]
            if refused != expected_refused:
                wrong.append(f"{method} {path} (needs {need}) answered {response.status_code}: {response.text[:120]}")
            elif expected_refused:
                expected = 401 if caller.role is None and need != "signed" else 403
                if response.status_code != expected:
                    wrong.append(f"{method} {path} answered {response.status_code}, not {expected}")
    assert not wrong, f"{caller.label}:\n" + "\n".join(wrong)


class Socket:
    """One WebSocket connection driven straight through the ASGI app, on the test's own loop."""

    def __init__(self, app, credential: str | None) -> None:
        query = f"token={credential}" if credential else ""
        self.scope = {
            "type": "websocket", "path": "/ws", "raw_path": b"/ws", "query_string": query.encode(),
            "headers": [(b"host", b"127.0.0.1")], "scheme": "ws", "server": ("127.0.0.1", 80),
            "client": ("127.0.0.1", 50000), "root_path": "", "subprotocols": [], "asgi": {"version": "3.0"},
        }
        self.app = app
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.outbox: asyncio.Queue = asyncio.Queue()
        self.task: asyncio.Task | None = None

    async def __aenter__(self) -> Socket:
        await self.inbox.put({"type": "websocket.connect"})
        self.task = asyncio.create_task(self.app(self.scope, self.inbox.get, self.outbox.put))
        accepted = await self.next()
        assert accepted["type"] == "websocket.accept"
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.inbox.put({"type": "websocket.disconnect", "code": 1000})
        assert self.task is not None
        async with asyncio.timeout(10):
            await self.task

    async def next(self) -> dict:
        async with asyncio.timeout(10):
            return await self.outbox.get()

    async def ask(self, message: dict) -> dict:
        """Send `message`; the next frame the server sends (or its close)."""
        await self.inbox.put({"type": "websocket.receive", "text": json.dumps(message)})
        frame = await self.next()
        return json.loads(frame["text"]) if frame["type"] == "websocket.send" else frame


@pytest.mark.parametrize("caller", CALLERS, ids=lambda caller: caller.label)
async def test_the_websocket_lets_every_role_watch_and_only_approvers_answer(table, caller):
    async with Socket(table.app, credential_for(table, caller)) as socket:
        if caller.role is None:
            closed = await socket.next()
            assert closed == {"type": "websocket.close", "code": 4001, "reason": "authentication required"}
            return
        subscribed = await socket.ask({"type": "subscribe", "session_id": "x"})
        assert subscribed["type"] == "subscribed"
        answered = await socket.ask({"type": "answer", "id": "x", "decision": "allow_once"})
        assert answered["type"] == "error"
        if caller.rank < ROLE_RANK["approver"]:
            assert "needs the approver role" in answered["message"]
        else:
            assert answered["message"] == "no approval 'x'"


async def test_health_tells_a_caller_without_a_credential_that_a_multi_user_server_asks_for_a_username_and_password(table):
    async with httpx.AsyncClient(transport=table.transport, base_url="http://127.0.0.1") as client:
        assert (await client.get("/api/health")).json() == {"status": "ok", "sign_in": "password"}
