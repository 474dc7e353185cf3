"""Signing in to remote MCP servers from the dashboard: begin, where it stands, finish.

The browser half (the authorization URL, the callback's page) is the API's; what is signed in
to, the vault and the reconnection after a sign-in are the pool's, reached only from here.
"""

from __future__ import annotations

from pydantic import BaseModel

from backend.domain.errors import Conflict, NotFound
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_login import AuthorizationResponse, SignIns
from backend.mcp.pool import McpPool


class SignInState(BaseModel):
    """Whether a server signs in with OAuth, and where its sign-in stands."""

    server: str
    oauth: bool
    """The server is remote without an Authorization header: a 401 from it asks for a sign-in."""
    signed_in: bool
    """A sign-in is stored (whether or not the server still accepts it)."""
    needs_sign_in: bool
    """The server refused every token we have: its tools wait for a sign-in."""
    pending: bool
    """A sign-in begun here waits for the browser to come back."""
    unreachable: str | None = None
    """The server cannot be reached at all ("name not found", "connection refused"): no sign-in is in question."""
    state: str
    error: str | None


class ServerSignIns:
    """The sign-ins begun on this host; the host abandons those still waiting when it stops."""

    def __init__(self, pool: McpPool) -> None:
        self._pool = pool
        self._flows = SignIns(pool.oauth, on_signed_in=self._reconnect)

    async def begin(self, name: str, *, redirect_uri: str) -> str:
        """The authorization URL for the browser to open (SignInFailed when the server's cannot be had)."""
        return await self._flows.begin(name, self._oauth_config(name), redirect_uri=redirect_uri)

    def state(self, name: str) -> SignInState:
        config = self._pool.config_of(name)
        found = next((s for s in self._pool.statuses() if s.name == name), None)
        if config is None or found is None:
            raise NotFound(f"no running MCP server named {name!r}")
        return SignInState(
            server=name,
            oauth=config.signs_in_with_oauth,
            signed_in=config.signs_in_with_oauth and self._pool.oauth.has_tokens(name),
            needs_sign_in=found.needs_sign_in,
            unreachable=found.unreachable,
            pending=self._flows.pending(name),
            state=found.state,
            error=found.error,
        )

    async def finish(self, answer: AuthorizationResponse) -> str:
        """Complete the sign-in `answer` belongs to; the server's name (SignInFailed else)."""
        return await self._flows.finish(answer)

    async def aclose(self) -> None:
        await self._flows.aclose()

    async def _reconnect(self, name: str) -> None:
        if self._pool.config_of(name) is not None:
            await self._pool.restart_server(name, reason="signed in")

    def _oauth_config(self, name: str) -> McpServerConfig:
        config = self._pool.config_of(name)
        if config is None:
            raise NotFound(f"no running MCP server named {name!r}")
        if not config.signs_in_with_oauth:
            why = "it sends its own Authorization header" if config.is_remote else "it is not a remote server"
            raise Conflict(f"MCP server {name!r} does not sign in with OAuth: {why}")
        return config
