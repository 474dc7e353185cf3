"""Credentials never reach a log line, a stored error or an event.

A provider that echoes the API key in its error ("Incorrect API key provided: sk-..."), a
WebSocket URL with `?token=` in uvicorn's connection line: each was written verbatim. What is
known to be secret (the configured API key, the host's token) is replaced wherever it appears,
and so is anything shaped like a credential.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"

_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1" + REDACTED),
    (re.compile(r"(?i)([?&](?:token|access_token|api_key|apikey|key)=)[^&\s\"'#]+"), r"\1" + REDACTED),
    (re.compile(r"(?i)(\b(?:x-api-key|api[_-]?key)[\"']?\s*[:=]\s*[\"']?)[^\s\"',;}]{8,}"), r"\1" + REDACTED),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,}"), REDACTED),  # OpenAI- and Anthropic-style keys
    (re.compile(r"\bovr_[A-Za-z0-9_-]{12,}"), REDACTED),  # Overseer's own API keys (backend.auth.API_KEY_PREFIX)
)

_MIN_SECRET = 6
"""Shorter known 'secrets' are not replaced: "test" would be struck from every message."""


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every known secret and everything shaped like a credential replaced."""
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET:
            text = text.replace(secret, REDACTED)
    for shape, replacement in _SHAPES:
        text = shape.sub(replacement, text)
    return text
