"""A server's `elicitation/create` and `sampling/createMessage`, routed to the session whose call it is part of.

The pool's connection to a server is shared by every session, so a question coming in from a
server must first be placed: which session's tool call is it part of? Two ways to tell:
- 2026-07-28: the question rides the call's own `InputRequiredResult`, and the SDK asks the
  callback inside the calling task, so the call's context (a contextvar) says whose it is;
- handshake era: the question arrives on the connection's read loop, with nothing on the
  stdio wire linking it to a request; it is placed when every call in flight on that server
  belongs to one session. Otherwise nobody can be asked honestly, and it is declined.

The question itself is answered by a handler the host attaches (the approval desk); a pool
without one declines, saying why. While it is open the call's clock stops, and a call that ends
first withdraws it (call_clock.py). A request to sample the model is placed the same way and
answered by the host's sampler; one that cannot be placed is refused with an error.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp_types
from mcp.client.session import ClientRequestContext, ElicitationFnT, SamplingFnT

from backend.mcp.call_clock import CallClock, running

logger = logging.getLogger(__name__)

DECLINE_REASON_META_KEY = "overseer/reason"
"""Where a decline Overseer gave by itself says why (in the result's `_meta`)."""


@dataclass(frozen=True, kw_only=True)
class CallInFlight:
    """One tool call running on a server: whose it is."""

    server: str
    tool: str
    session_id: str
    call_id: str | None = None
    clock: CallClock = field(default_factory=CallClock, compare=False, repr=False)
    """Stopped while a question of the call is open; ends with the call, withdrawing what is still asked."""


@dataclass(frozen=True, kw_only=True)
class Elicitation:
    """A form question from `server`, placed in the session of the call it belongs to."""

    call: CallInFlight
    message: str
    requested_schema: dict[str, Any]


ElicitationHandler = Callable[[Elicitation], Awaitable[mcp_types.ElicitResult]]
"""Puts the question to a person and returns their answer (accept with content, decline, cancel)."""


@dataclass(frozen=True, kw_only=True)
class SamplingRequest:
    """A server asking for a model completion, placed in the session of the call it belongs to."""

    call: CallInFlight
    params: mcp_types.CreateMessageRequestParams


SamplingHandler = Callable[[SamplingRequest], Awaitable[mcp_types.CreateMessageResult | mcp_types.ErrorData]]
"""Asks the person, then runs the session's model; an ErrorData says why it did not."""

_current_call: contextvars.ContextVar[CallInFlight | None] = contextvars.ContextVar("mcp_call", default=None)


def declined(reason: str) -> mcp_types.ElicitResult:
    """A decline Overseer gives by itself, with its reason in `_meta` (and the log)."""
    logger.info("declined an elicitation: %s", reason)
    return mcp_types.ElicitResult(action="decline", _meta={DECLINE_REASON_META_KEY: reason})  # type: ignore[call-arg]


def refused(reason: str) -> mcp_types.ErrorData:
    """A sampling request Overseer refuses by itself (the spec's user-rejected code, -1)."""
    logger.info("refused a sampling request: %s", reason)
    return mcp_types.ErrorData(code=-1, message=reason)


class ElicitationRouter:
    """Knows the calls in flight on each server, and hands each server's questions to `handler`."""

    def __init__(self) -> None:
        self.handler: ElicitationHandler | None = None
        self.sampler: SamplingHandler | None = None
        self._in_flight: dict[str, list[CallInFlight]] = {}

    @contextmanager
    def calling(self, call: CallInFlight) -> Iterator[None]:
        """Around one tool call: its questions are asked in its session."""
        calls = self._in_flight.setdefault(call.server, [])
        calls.append(call)
        token = _current_call.set(call)
        try:
            with running(call.clock):
                yield
        finally:
            _current_call.reset(token)
            calls.remove(call)

    def callback_for(self, server: str) -> ElicitationFnT:
        """The SDK client's `elicitation_callback` for one server's connection."""

        async def on_elicit(
            context: ClientRequestContext, params: mcp_types.ElicitRequestParams
        ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
            return await self.route(server, params)

        return on_elicit

    def sampling_callback_for(self, server: str) -> SamplingFnT:
        """The SDK client's `sampling_callback` for one server's connection."""

        async def on_sample(
            context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
        ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
            return await self.sample(server, params)

        return on_sample

    async def sample(
        self, server: str, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        """Place the request and hand it to the sampler; refuse (saying why) what cannot be placed."""
        call = self.place(server)
        if call is None:
            return refused(
                f"MCP server {server!r} asked to sample the model outside a single session's tool call, "
                "so there is no session whose model and approvals it could use"
            )
        if self.sampler is None:
            return refused("this Overseer pool has no model to sample")
        with call.clock.asking():
            return await self.sampler(SamplingRequest(call=call, params=params))
        return refused(f"the call of {call.tool} ended before the request was answered")

    def place(self, server: str) -> CallInFlight | None:
        """The call a question from `server` belongs to, or None when it cannot be told."""
        current = _current_call.get()
        if current is not None and current.server == server:
            return current
        calls = self._in_flight.get(server, [])
        if not calls or len({c.session_id for c in calls}) != 1:
            return None
        if len(calls) == 1:
            return calls[0]
        # One session, several calls: the session is known, the call is not.
        return CallInFlight(server=server, tool=calls[0].tool, session_id=calls[0].session_id)

    async def route(self, server: str, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        """Place the question and ask it; decline (saying why) what cannot be asked."""
        if not isinstance(params, mcp_types.ElicitRequestFormParams):
            return declined(f"MCP server {server!r} asked for a URL elicitation, which Overseer does not offer")
        call = self.place(server)
        if call is None:
            return declined(
                f"MCP server {server!r} asked a question outside a single session's tool call, "
                "so there is nobody Overseer can ask"
            )
        if self.handler is None:
            return declined("this Overseer pool has no one to put questions to")
        question = Elicitation(
            call=call, message=params.message, requested_schema=dict(params.requested_schema)
        )
        with call.clock.asking():
            return await self.handler(question)
        return mcp_types.ElicitResult(action="cancel")  # the call ended while the person was asked
