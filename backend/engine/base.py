"""One Engine interface, two implementations: our loop over LiteLLM and the Claude Agent SDK.

The runner owns everything around a run (the session row, consolidation, mode switches,
restarts); an engine only drives the model and hands each tool call to the gate.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from backend.domain.models import Session, Usage
from backend.engine.events import EventBus
from backend.engine.loop import LoopLimits, LoopResult, run_agent_loop
from backend.engine.models.client import ModelClient
from backend.engine.models.tool_media import tool_image_style
from backend.engine.turns.turn import Turn
from backend.approvals.gate import ToolGate
from backend.store.base import Store


class Engine(Protocol):
    """Drives one run of a session until the model answers, a limit, a stop, or an error."""

    compacts_own_transcript: bool
    """True when the engine keeps (and compacts) its own transcript, so the runner does not
    consolidate old messages into memory for it."""

    async def run(
        self,
        *,
        session: Session,
        turn: Turn,
        limits: LoopLimits,
        on_usage: Callable[[Usage], Awaitable[None]],
        on_sdk_session: Callable[[str], Awaitable[object]],
    ) -> LoopResult: ...


class LiteLlmEngine:
    """Our own loop: the model through LiteLLM (any provider), every tool call through the gate."""

    compacts_own_transcript = False

    def __init__(
        self, *, store: Store, bus: EventBus, gate: ToolGate, model_for: Callable[[Session], ModelClient]
    ) -> None:
        self.store = store
        self.bus = bus
        self.gate = gate
        self.model_for = model_for

    async def run(
        self,
        *,
        session: Session,
        turn: Turn,
        limits: LoopLimits,
        on_usage: Callable[[Usage], Awaitable[None]],
        on_sdk_session: Callable[[str], Awaitable[object]],
    ) -> LoopResult:
        model = self.model_for(session)
        # Every model a request may go to (LiteLLMClient's primary and fallbacks) decides the form.
        models = [getattr(model, "model", session.model), *getattr(model, "fallback_models", [])]
        return await run_agent_loop(
            session=turn.gate_session,
            system_prompt=turn.system_prompt,
            tools=turn.tools,
            model=model,
            gate=self.gate,
            store=self.store,
            bus=self.bus,
            limits=limits,
            on_usage=on_usage,
            history_from=session.memory_from,
            read_media=self.gate.media.read_base64 if self.gate.media is not None else None,
            tool_images=tool_image_style(models),
            selection=turn.selection,
        )
