"""Tool-call arguments as models really send them: usually JSON, sometimes almost JSON."""

from __future__ import annotations

import json
from typing import Any

import json_repair


def parse_arguments(raw: str | dict[str, Any] | None, *, tool: str) -> tuple[dict[str, Any], str | None]:
    """Parse a model's arguments; repair near-JSON; else return an error the model can act on.

    Returns (arguments, error). An empty string means no arguments.
    """
    if isinstance(raw, dict):
        return raw, None
    text = (raw or "").strip()
    if not text:
        return {}, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = json_repair.loads(text)
        except Exception:  # json_repair gives up on some inputs by raising
            value = None
    if isinstance(value, dict):
        return value, None
    shown = text if len(text) <= 200 else text[:200] + "..."
    return {}, (
        f"The arguments for {tool} were not a JSON object and could not be repaired: {shown!r}. "
        "Send the call again with the arguments as one JSON object."
    )
