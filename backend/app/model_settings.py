"""The model a person chose in the dashboard: kept in the data dir, applied without a restart.

The choice (model, API base, API key, extended thinking) lives in `<data dir>/model.json`, owner-only (0600), since it
may hold the key. Saved, it is laid over the configuration (environment and `overseer.yaml`) at
start and at once on the running host: sessions created from then on use it. A field the person
never set from the dashboard keeps the configured value, so an `OVERSEER_API_KEY` stays in use when
only the model is changed. The key is written and never read back out: the dashboard is told only
whether one is set.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, SecretStr

from backend.config import Settings, ThinkingConfig
from backend.domain.redact import redact
from backend.engine.models.client import LiteLLMClient
from backend.engine.models.model_map import litellm
from backend.paths import private_dir, private_opener

log = logging.getLogger(__name__)

FILE_NAME = "model.json"
TEST_TIMEOUT = 20.0
"""Seconds the test call may take to start answering: long enough for a cold provider."""
TEST_PROMPT = "Reply with the single word OK."

ModelSource = Literal["dashboard", "config", "demo"]


class RunnerDefaults(Protocol):
    """What of the session runner a model change touches: the model of new sessions and the
    secrets it keeps out of stored errors."""

    default_model: str
    secrets: tuple[str, ...]


class SavedModel(BaseModel):
    """The file's content: only what the person set from the dashboard (None: not set there)."""

    model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    demo: bool = False
    """True when the person chose the offline demo (no model) over a configured one."""
    thinking: ThinkingConfig | None = None


@dataclass(kw_only=True)
class ModelView:
    """The model settings as the dashboard sees them: never the key itself."""

    model: str | None
    api_base: str | None
    api_key_set: bool
    demo: bool
    source: ModelSource
    thinking: ThinkingConfig


@dataclass(kw_only=True)
class ConnectionResult:
    """The outcome of one small test call."""

    ok: bool
    message: str
    latency_ms: int


class ModelSettings:
    """Loads, saves and applies the dashboard's model choice onto the host's settings and runner."""

    def __init__(self, *, settings: Settings, runner: RunnerDefaults, data_dir: Path, demo_model: str) -> None:
        self._settings = settings
        self._runner = runner
        self._path = data_dir / FILE_NAME
        self._demo_model = demo_model
        self._saved = self._load()
        self._apply()

    def view(self) -> ModelView:
        s = self._settings
        demo = s.model is None
        source: ModelSource = "demo" if demo else ("dashboard" if self._saved.model else "config")
        return ModelView(
            model=s.model, api_base=s.api_base, api_key_set=s.api_key is not None, demo=demo, source=source, thinking=s.thinking
        )

    def save(
        self,
        *,
        model: str | None,
        api_base: str | None,
        api_key: str | None,
        clear_api_key: bool,
        thinking: ThinkingConfig | None = None,
    ) -> ModelView:
        """Save and apply. `model` None or empty: the offline demo. `api_key` None keeps the key;
        `thinking` None keeps the thinking setting."""
        key = None if clear_api_key else (api_key or self._saved.api_key)
        self._saved = SavedModel(
            model=model or None,
            api_base=api_base or None,
            api_key=key,
            demo=not model,
            thinking=thinking or self._saved.thinking,
        )
        self._write()
        if clear_api_key:
            self._settings.api_key = None
        self._apply()
        return self.view()

    async def test(self, *, model: str | None, api_base: str | None, api_key: str | None) -> ConnectionResult:
        """One small call to `model` at `api_base` as given (the saved pair when `model` is None),
        with the key given, else the one set."""
        s = self._settings
        if not model:
            model, api_base = s.model, s.api_base
        if not model:
            return ConnectionResult(ok=True, message="The offline demo needs no connection.", latency_ms=0)
        key = api_key or (s.api_key.get_secret_value() if s.api_key else None)
        client = LiteLLMClient(
            model=model,
            api_base=api_base,
            api_key=key,
            retries=0,
            request_timeout=TEST_TIMEOUT,
            stream_silence_timeout=TEST_TIMEOUT,
            extra={"max_tokens": 16},
            direct=s.model_transport == "auto",
        )
        started = time.monotonic()
        try:
            turn = await client.complete(messages=[{"role": "user", "content": TEST_PROMPT}], tools=[], on_delta=_ignore, on_retry=_ignore)
        except Exception as exc:  # every failure is the answer the person asked for
            message = redact(str(exc) or type(exc).__name__, [key])
            return ConnectionResult(ok=False, message=message, latency_ms=_since(started))
        reply = " ".join(turn.text.split())[:80]
        return ConnectionResult(ok=True, message=f"{model} answered: {reply!r}", latency_ms=_since(started))

    def _apply(self) -> None:
        s, saved = self._settings, self._saved
        if saved.demo:
            s.model = None
        elif saved.model:
            s.model = saved.model
            s.api_base = saved.api_base
        if saved.api_key:
            s.api_key = SecretStr(saved.api_key)
        if saved.thinking is not None:
            s.thinking = saved.thinking
        self._runner.default_model = s.model or self._demo_model
        if s.api_key is not None and s.api_key.get_secret_value() not in self._runner.secrets:
            self._runner.secrets = (*self._runner.secrets, s.api_key.get_secret_value())

    def _load(self) -> SavedModel:
        try:
            text = self._path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return SavedModel()
        if self._path.stat().st_mode & 0o077:
            self._path.chmod(0o600)  # copied with a permissive umask: the key must stay owner-only
        try:
            return SavedModel.model_validate_json(text)
        except ValueError:
            log.warning("ignoring %s: it is not a saved model choice", self._path)
            return SavedModel()

    def _write(self) -> None:
        private_dir(self._path.parent)
        temp = self._path.with_name(f".{FILE_NAME}.tmp")
        temp.unlink(missing_ok=True)
        with open(temp, "w", encoding="utf-8", opener=private_opener) as handle:
            json.dump(self._saved.model_dump(mode="json"), handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, self._path)


async def warm_up() -> None:
    """Import the model library (LiteLLM: seconds) off the event loop, so a first run does not wait for it."""
    await asyncio.to_thread(litellm)


async def _ignore(_: Any) -> None:
    return None


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
