"""What a model call gives back, and how it fails: shared by every path to a model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from backend.domain.models import SignedThinking, ToolCallRequest, Usage

OnDelta = Callable[[str], Awaitable[None]]
OnRetry = Callable[[str], Awaitable[None]]


class ModelError(Exception):
    """The model could not be reached or refused; the message is meant for the person."""


class ModelTimeout(ModelError):
    """A limit on waiting for the model tripped. Retried like any timeout; the message names the
    setting and its value, so the person knows what to raise if the model is just slow."""

    def __init__(self, message: str, *, setting: str, seconds: float) -> None:
        super().__init__(message)
        self.setting = setting
        self.seconds = seconds

    @classmethod
    def not_started(cls, seconds: float) -> ModelTimeout:
        """No response (no headers, or no first chunk) within the request limit."""
        setting = "model_request_timeout"
        message = f"the model did not start answering within {seconds:g} s ({setting})"
        return cls(message, setting=setting, seconds=seconds)

    @classmethod
    def went_silent(cls, seconds: float) -> ModelTimeout:
        """A started stream sent nothing for the silence limit."""
        setting = "model_stream_silence_timeout"
        message = f"the model sent nothing for {seconds:g} s mid-stream ({setting})"
        return cls(message, setting=setting, seconds=seconds)


class NoAnswer(ModelError):
    """A 200 that carried neither text nor a tool call: an empty or malformed body, not an answer.

    Worth another try, like a broken connection; never a session that "completed" saying nothing.
    """


@dataclass(kw_only=True)
class ModelTurn:
    """One complete assistant turn."""

    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    thinking: str = ""
    """The reasoning the model showed before answering (stored for the person, never resent)."""
    thinking_blocks: list[SignedThinking] = field(default_factory=list)
    """Anthropic's signed blocks of it, for the continuation of this turn's tool loop."""


class ModelHttpError(ModelError):
    """The model's server answered with an HTTP error; `status_code` decides whether to retry."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code


class ModelUnreachable(ModelError, ConnectionError):
    """The connection to the model's server failed or broke: worth another try."""
