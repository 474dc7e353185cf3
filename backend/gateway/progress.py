"""Progress for one gateway request: sent only when the client asked for it, with the token it gave.

A client that sends no `_meta.progressToken` has registered no handler, and some (Claude Code on
2026-07-28) log every notification they cannot match as "progress notification for an unknown
token". So a request without a token gets no progress at all, in both protocol eras, and a
request with one gets it under exactly that token, never another. The SDK's `report_progress`
holds to both today; this module makes it the gateway's rule rather than a property of the SDK
version, and lets a long wait skip the work of describing itself (a store query every heartbeat)
for a client that will never hear it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.direct_dispatcher import DIRECT_TRANSPORT_KIND

ProgressToken = str | int


def progress_token(meta: Mapping[str, Any] | None) -> ProgressToken | None:
    """The request's `_meta.progressToken` (wire or Python spelling); a bool is not a token."""
    if not meta:
        return None
    for key in ("progressToken", "progress_token"):
        token = meta.get(key)
        if isinstance(token, str | int) and not isinstance(token, bool):
            return token
    return None


@dataclass(kw_only=True)
class RequestProgress:
    """Progress notifications of one request; silent when the request carried no token."""

    context: Context
    token: ProgressToken | None
    in_process: bool = False
    """Called in process (the SDK's direct dispatcher): progress is the caller's callback, not a
    notification, so there is no token to match (the SDK calls the callback if there is one)."""

    @classmethod
    def of(cls, context: Context) -> RequestProgress:
        try:
            request = context.request_context
        except ValueError:  # outside a request: nobody to tell
            return cls(context=context, token=None)
        return cls(context=context, token=progress_token(request.meta), in_process=_in_process(context))

    @property
    def wanted(self) -> bool:
        """Whether the caller asked for progress on this request."""
        return self.token is not None or self.in_process

    async def report(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """One notification under the client's token; nothing when it gave none."""
        if not self.wanted:
            return
        # The SDK's dispatch context sends under the token it read from this same request.
        await self.context.report_progress(progress, total, message)


def _in_process(context: Context) -> bool:
    """Whether the request came through the SDK's direct dispatcher (a test's in-memory client).

    The request context does not carry its transport; the session's request channel does, under
    a private name. Unreadable means not in process: then only a token lets progress out.
    """
    channel = getattr(context.session, "_request_outbound", None)
    return getattr(getattr(channel, "transport", None), "kind", None) == DIRECT_TRANSPORT_KIND
