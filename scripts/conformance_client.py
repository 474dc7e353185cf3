"""The client the MCP conformance suite drives (`make conformance`): Overseer's own MCP client.

The suite runs `conformance_client.py <server-url>` once per scenario, with the scenario's name in
MCP_CONFORMANCE_SCENARIO and, for some, JSON in MCP_CONFORMANCE_CONTEXT (a pre-registered client's
id and secret). This does what a session does with a remote server: the pool (backend/mcp/pool.py)
connects to it as a `type: http` server; if it asks for OAuth, a dashboard-style sign-in
(backend/mcp/oauth_login.py) runs with the consent given here (the suite's authorization server
redirects straight back with a code); then every listed tool is called once, with arguments made
from its input schema, the way the model would call it. The person's part is played here too: a
form a server asks for is submitted as the server filled it in (`{}`, Overseer fills the defaults,
backend/approvals/elicitation_desk.py), and a call refused for want of scope (SEP-835 step-up)
is followed by the new sign-in its message asks for, and tried once more.

auth/basic-cimd is run as by a person who publishes Overseer's client metadata document
(`oauth.client_metadata_url`, backend/mcp/oauth_cimd.py) at the URL the suite expects.

Where a scenario names the calls to make (`toolCalls` in its context: http-custom-headers), those
arguments are sent; json-schema-2020-12-preservation asks for a tool's input schema, as Overseer's
catalog holds it, to be echoed to its echo tool.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import mcp_types

from backend.approvals.elicitation_desk import checked_content
from backend.domain.tools import ToolInfo
from backend.mcp.config import McpServerConfig
from backend.mcp.elicitation import Elicitation
from backend.mcp.oauth_login import AuthorizationResponse, SignIns
from backend.mcp.pool import McpPool

NAME = "conformance"
REDIRECT = "http://127.0.0.1:8000/oauth/callback"  # the dashboard's callback; the suite redirects to it, no one listens
BOUND_S = 25.0  # under the suite's 30 s per scenario
STEP_UP = "needs more permission for this request"  # backend/mcp/oauth_step_up.py's refusal
SUITE_CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client id auth/basic-cimd expects: where the suite's own clients say their document is (never fetched there)."""
CIMD_SCENARIOS = frozenset({"auth/basic-cimd"})
"""Scenarios run as by a person who publishes Overseer's client metadata document (`oauth.client_metadata_url`)."""


def config_for(url: str, context: dict[str, Any], scenario: str = "") -> McpServerConfig:
    """A remote server entry as a person would write it: with a pre-registered client when the
    scenario gives one, with a published client metadata document where the scenario looks for one."""
    entry: dict[str, Any] = {"type": "http", "url": url, "start_timeout": 10, "call_timeout": 10}
    if context.get("client_id"):
        entry["oauth"] = {"client_id": context["client_id"], "client_secret": context.get("client_secret")}
    elif scenario in CIMD_SCENARIOS:
        entry["oauth"] = {"client_metadata_url": SUITE_CLIENT_METADATA_URL}
    return McpServerConfig.model_validate(entry)


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments a model would send: each required property with its default, or a plain value of its type."""
    plain: dict[str, Any] = {"number": 1, "integer": 1, "boolean": True, "string": "x", "array": [], "object": {}}
    arguments: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        spec = properties.get(name) or {}
        if "default" in spec:
            arguments[name] = spec["default"]
        elif spec.get("enum"):
            arguments[name] = spec["enum"][0]
        else:
            kind = spec.get("type", "string")
            arguments[name] = plain.get(kind if isinstance(kind, str) else kind[0], "x")
    return arguments


def arguments_in(scenario: str, tool: ToolInfo, tools: list[ToolInfo], context: dict[str, Any]) -> dict[str, Any]:
    """What the model sends to `tool` in this scenario: what the scenario's context names, else made up."""
    named = [c.get("arguments") or {} for c in context.get("toolCalls") or [] if c.get("name") == tool.tool]
    if named:
        return named[0]
    properties = (tool.input_schema or {}).get("properties") or {}
    if scenario == "json-schema-2020-12-preservation" and set(properties) == {"schema"}:
        focal = [t for t in tools if t is not tool]
        return {"schema": focal[0].input_schema if focal else {}}
    return arguments_for(tool.input_schema or {})


async def as_filled_in(question: Elicitation) -> mcp_types.ElicitResult:
    """The person submits the form without changing it: every field takes the server's default."""
    return mcp_types.ElicitResult(action="accept", content=checked_content(question.requested_schema, {}))


async def give_consent(authorization_url: str) -> AuthorizationResponse:
    """The person allows access: follow the authorization server's redirects to our callback; its query."""
    async with httpx.AsyncClient(timeout=10) as client:
        url = authorization_url
        for _ in range(5):
            response = await client.get(url)
            location = response.headers.get("location")
            if location is None:
                raise SystemExit(f"the authorization server answered {response.status_code} without a redirect")
            if location.startswith(REDIRECT):
                query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
                return AuthorizationResponse.model_validate(query)
            url = location
    raise SystemExit("too many redirects before the callback")


async def connect(pool: McpPool, config: McpServerConfig) -> None:
    """Wait for the server; sign in if it asks for OAuth, then wait for it again.

    Twice at most: a server whose protected-resource metadata moved to another authorization
    server after the first sign-in (auth/authorization-server-migration) refuses that sign-in's
    tokens, and the person signs in again, there.
    """
    await pool.wait_ready(timeout=BOUND_S)
    for _ in range(2):
        status = next(s for s in pool.statuses() if s.name == NAME)
        if not status.needs_sign_in:
            return
        await sign_in_again(pool, config)


async def sign_in_again(pool: McpPool, config: McpServerConfig) -> None:
    """A dashboard sign-in, the person allowing it; the server reconnected after it."""
    signed_in = asyncio.Event()

    async def reconnect(name: str) -> None:
        await pool.restart_server(name, reason="signed in")
        signed_in.set()

    flows = SignIns(pool.oauth, on_signed_in=reconnect)
    url = await flows.begin(NAME, config, redirect_uri=REDIRECT)
    await flows.finish(await give_consent(url))
    await signed_in.wait()
    await pool.wait_ready(timeout=BOUND_S)


async def main(url: str) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    config = config_for(url, context, scenario)
    with tempfile.TemporaryDirectory(prefix="overseer-conformance-client-") as home:
        pool = McpPool({NAME: config}, log_dir=Path(home) / "logs", oauth_dir=Path(home) / "oauth")
        pool.elicitations.handler = as_filled_in
        await pool.start()
        try:
            with anyio.fail_after(BOUND_S):
                await connect(pool, config)
                tools = pool.tools()
                for tool in tools:
                    arguments = arguments_in(scenario, tool, tools, context)
                    result = await pool.call(tool.name, arguments, workspace=Path(home), session_id="conformance")
                    if result.is_error and STEP_UP in result.text:
                        print(f"{tool.name}: {result.text[:300]}")
                        await sign_in_again(pool, config)
                        result = await pool.call(tool.name, arguments, workspace=Path(home), session_id="conformance")
                    print(f"{tool.name}: {'error' if result.is_error else 'ok'}: {result.text[:200]}")
        finally:
            await pool.aclose()
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    sys.exit(asyncio.run(main(sys.argv[-1])))
