"""The MCP servers' start, as the turns and the log hear of it.

Servers start in the background. A turn waits for them (bounded) before it lists the tools, and
is told of a server that failed before it goes on without that server's tools. The host's start
reports failures on stderr once every server has listed (or the pool's bound has passed), even
while no session runs (`serve`, `mcp`), and says loudly which deny rules turned out to cover no
tool (issue 35, item 12).
"""

from __future__ import annotations

import contextlib
import logging

from backend.app.rule_references import RuleReferences
from backend.app.servers import ServerFailures
from backend.domain.tools import ToolInfo
from backend.mcp.errors import McpPoolError
from backend.mcp.pool import McpPool

log = logging.getLogger(__name__)

TOOLS_READY_TIMEOUT = 60.0


class ServerWatch:
    """Waits on the pool's servers for each turn and for the start, and reports what failed."""

    def __init__(self, *, pool: McpPool, failures: ServerFailures, rule_references: RuleReferences) -> None:
        self._pool = pool
        self._failures = failures
        self._rule_references = rule_references

    async def ready_tools(self) -> list[ToolInfo]:
        """The tools of a turn, once the servers are ready (bounded)."""
        await self._pool.wait_ready(timeout=TOOLS_READY_TIMEOUT)
        # Inside the turn, so its session hears of a failed server before going on without it.
        await self._failures.report()
        return self._pool.tools()

    async def check_rules_once_listed(self) -> None:
        """Issue 35, item 12: a deny rule naming a built-in server's tool is checked once the server
        has listed its tools (bounded); ConfigError for one that covers nothing."""
        if not self._rule_references.awaited_servers():
            return
        with contextlib.suppress(TimeoutError, McpPoolError):
            await self._pool.wait_ready()
        self._rule_references.check_at_start(warn=False)

    async def report_start_failures(self) -> None:
        """Once the servers have listed: the failed ones, and deny rules that cover no tool, on stderr."""
        # A server still starting at the pool's bound is not a failure yet; the next turn looks again.
        with contextlib.suppress(TimeoutError, McpPoolError):
            await self._pool.wait_ready()
        try:
            await self._failures.report()
        except Exception:  # a report that cannot be written must not go unseen either
            log.exception("reporting failed MCP servers failed")
        # Once every server has listed, a deny rule that turns out to cover no tool (a remote
        # server's, checked by name alone at the start) is said loudly; Settings shows it too.
        for finding in self._rule_references.findings():
            if finding.level == "error":
                log.error("%s", finding.message)
