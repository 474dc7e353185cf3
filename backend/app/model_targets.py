"""Where a session's model requests go: its own model, else the configured one, else the demo.

With no model configured Overseer runs the offline demo: the scripted model server from
`backend.testing`, started on first use and reached through the same LiteLLM HTTP path (or the
Claude Agent SDK's base URL) a real provider takes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from backend.config import Settings
from backend.domain.models import Session
from backend.engine.claude_sdk import SdkTarget, sdk_base_url, sdk_model
from backend.engine.models.client import LiteLLMClient

DEMO_MODEL = "openai/overseer-demo"


class ModelTargets:
    """The model client or SDK target of each session, from the settings and the runner's default."""

    def __init__(self, settings: Settings, *, default_model: Callable[[], str]) -> None:
        """`default_model()`: the model of a session that names none (the dashboard may change it)."""
        self.settings = settings
        self._default_model = default_model
        self.demo: Any = None
        """The offline demo's scripted model server, once started."""

    def demo_server(self) -> Any:
        if self.demo is None:
            from backend.testing.demo import demo_script
            from backend.testing.model_server import ScriptedModelServer

            self.demo = ScriptedModelServer(demo_script(str(self.settings.resolved_workspace))).start()
        return self.demo

    def stop_demo(self) -> None:
        if self.demo is not None:
            self.demo.stop()

    def model_for(self, session: Session) -> LiteLLMClient:
        """The model client for a session: its own model, else the configured one, else the demo."""
        s = self.settings
        if (session.model or self._default_model()) == DEMO_MODEL:
            return LiteLLMClient(model=DEMO_MODEL, api_base=self.demo_server().openai_base, api_key="demo", retries=0)
        return LiteLLMClient(
            model=session.model or s.model or DEMO_MODEL,
            api_base=s.api_base,
            api_key=s.api_key.get_secret_value() if s.api_key else None,
            fallback_models=s.fallback_models,
            retries=s.model_retries,
            backoff=s.retry_backoff,
            request_timeout=s.model_request_timeout,
            stream_silence_timeout=s.model_stream_silence_timeout,
            direct=s.model_transport == "auto",
            thinking=s.thinking,
        )

    def sampling_model_for(self, session: Session, options: dict[str, Any]) -> LiteLLMClient:
        """The session's model for a server's sampling request (either engine), with its limits;
        without thinking, whose budget the request's `max_tokens` would have to hold."""
        return dataclasses.replace(self.model_for(session), extra=options, thinking=None)

    def sdk_target_for(self, session: Session) -> SdkTarget:
        """Where a claude-sdk session's CLI sends model requests: the same model and base as LiteLLM's."""
        s = self.settings
        model = session.model or self._default_model()
        if model == DEMO_MODEL:
            return SdkTarget(model=model, base_url=self.demo_server().anthropic_base)
        return SdkTarget(
            model=sdk_model(model),
            base_url=sdk_base_url(s.api_base),
            api_key=s.api_key.get_secret_value() if s.api_key else None,
            request_timeout=s.model_request_timeout,
            thinking_budget=s.thinking.budget_tokens if s.thinking.enabled else None,
        )
