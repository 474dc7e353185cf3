"""A server's request to sample the model (`sampling/createMessage`), asked as an approval of its own kind.

The person sees what the server wants the session's model to read (its system prompt and
messages) and the limits it runs under, and answers:

    allow_once                      -> run as asked
    allow_once + updated_arguments  -> run with the texts edited (system prompt, message texts,
                                       a lower max_tokens); roles, order and non-text parts stay
    deny (with a reason)            -> refused; the server receives the reason
    no answer in time, a stop       -> refused

Nothing reaches a model before an allow is recorded on the approval.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

import mcp_types

from backend.domain.errors import Invalid
from backend.domain.models import Approval
from backend.domain.sampling import prompt_text as prompt_text  # where the terminal finds it
from backend.mcp.elicitation import CallInFlight
from backend.approvals.broker import ApprovalBroker
from backend.approvals.asking import WaitingSink, ask_and_wait

EDITABLE = ("system_prompt", "messages", "max_tokens")


class SamplingEditInvalid(Invalid):
    """An edited prompt that changes more than its texts and limit; names the field."""


def prompt_of(params: mcp_types.CreateMessageRequestParams, *, server: str, model: str, max_tokens: int) -> dict[str, Any]:
    """The approval's arguments: what the model will read, as a person reviews it.

    Images and audio are described (type, MIME type, size), not copied into the approval row;
    the request itself keeps their data until the model runs.
    """
    messages: list[dict[str, Any]] = []
    for message in params.messages:
        for part in parts_of(message.content):
            if isinstance(part, mcp_types.TextContent):
                messages.append({"role": message.role, "type": "text", "text": part.text})
            elif isinstance(part, mcp_types.ImageContent | mcp_types.AudioContent):
                size = len(base64.b64decode(part.data, validate=False)) if part.data else 0
                messages.append({"role": message.role, "type": part.type, "mime_type": part.mime_type, "bytes": size})
            else:
                messages.append({"role": message.role, "type": part.type, "text": f"[{part.type} content]"})
    hints = [hint.name for hint in (params.model_preferences.hints or [])] if params.model_preferences else []
    return {
        "server": server,
        "model": model,
        "system_prompt": params.system_prompt,
        "messages": messages,
        "max_tokens": min(params.max_tokens, max_tokens),
        "asked_max_tokens": params.max_tokens,
        "temperature": params.temperature,
        "stop_sequences": list(params.stop_sequences or []),
        "model_hints": [hint for hint in hints if hint],
    }


def parts_of(content: Any) -> list[Any]:
    """A sampling message's content as a list of parts (it may be one part or several)."""
    return list(content) if isinstance(content, list) else [content]


def checked_edit(arguments: dict[str, Any], updated: dict[str, Any] | None) -> dict[str, Any]:
    """The prompt as it will run: `arguments` with the person's edits, or SamplingEditInvalid naming the field.

    Only texts change: the system prompt, the text of text messages, and max_tokens (down to
    1, never above the limit shown). The arguments a person sent back whole are accepted as
    long as everything else is as it was.
    """
    if updated is None:
        return arguments
    extra = sorted(key for key in updated if key not in arguments)
    if extra:
        raise SamplingEditInvalid(f"field {extra[0]!r} is not part of the request")
    fixed = [key for key in arguments if key not in EDITABLE and key in updated and updated[key] != arguments[key]]
    if fixed:
        raise SamplingEditInvalid(f"field {fixed[0]!r} cannot be edited; edit the prompt's texts or max_tokens")
    result = dict(arguments)
    if "system_prompt" in updated:
        system = updated["system_prompt"]
        if system is not None and not isinstance(system, str):
            raise SamplingEditInvalid("field 'system_prompt' must be text")
        result["system_prompt"] = system or None
    if "max_tokens" in updated:
        limit = updated["max_tokens"]
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= arguments["max_tokens"]:
            raise SamplingEditInvalid(f"field 'max_tokens' must be a whole number from 1 to {arguments['max_tokens']}")
        result["max_tokens"] = limit
    if "messages" in updated:
        result["messages"] = _edited_messages(arguments["messages"], updated["messages"])
    return result


def _edited_messages(original: list[dict[str, Any]], edited: Any) -> list[dict[str, Any]]:
    if not isinstance(edited, list) or len(edited) != len(original):
        raise SamplingEditInvalid(f"field 'messages' must keep its {len(original)} messages; edit their texts only")
    result = []
    for index, (before, after) in enumerate(zip(original, edited, strict=True)):
        if not isinstance(after, dict):
            raise SamplingEditInvalid(f"field 'messages.{index}' must be a message")
        changed = sorted(key for key in after if key != "text" and after[key] != before.get(key))
        if changed or ("text" in after and before["type"] != "text" and after["text"] != before.get("text")):
            raise SamplingEditInvalid(
                f"field 'messages.{index}.{changed[0] if changed else 'text'}' cannot be edited; "
                "only the text of text messages can"
            )
        text = after.get("text", before.get("text"))
        if before["type"] == "text" and not isinstance(text, str):
            raise SamplingEditInvalid(f"field 'messages.{index}.text' must be text")
        result.append({**before, "text": text} if before["type"] == "text" else before)
    return result


def refusal_of(approval: Approval) -> str | None:
    """Why the request was refused, or None when it was allowed."""
    if approval.status == "allowed":
        return None
    message = approval.decision.message if approval.decision is not None else None
    if approval.status == "denied":
        return f"The person declined the sampling request{f': {message}' if message else '.'}"
    if approval.status == "expired":
        return "Nobody answered the sampling request in time."
    return f"The sampling request was withdrawn{f': {message}' if message else '.'}"


class SamplingDesk:
    """Puts a server's sampling request to the person as an approval; returns the closed approval."""

    def __init__(self, broker: ApprovalBroker, sessions: WaitingSink) -> None:
        self._broker = broker
        self._sessions = sessions

    async def ask(self, call: CallInFlight, arguments: dict[str, Any]) -> Approval:
        """Open the approval in the call's session and wait for it (bounded by its expiry)."""
        return await ask_and_wait(
            self._broker,
            self._sessions,
            session_id=call.session_id,
            kind="sampling",
            tool_call_id=f"sampling:{call.call_id or '-'}:{uuid.uuid4().hex[:8]}",
            tool_name=call.tool,
            arguments={**arguments, "call_id": call.call_id},
            reason=f"MCP server {call.server!r} asks to run the session's model on its own prompt",
        )
