"""A server's sampling request as its approval carries it, shown as text.

The approval's arguments (`backend/approvals/sampling_desk.py` writes them) hold what the model
would read: a system prompt, messages (texts, and media described by type and size) and the
token limit. Clients and terminals that show no form show this text instead.
"""

from __future__ import annotations

from typing import Any


def prompt_text(arguments: dict[str, Any]) -> str:
    """The prompt as plain text, for a client or a terminal that shows no form."""
    lines = [f"[system] {arguments['system_prompt']}"] if arguments.get("system_prompt") else []
    for message in arguments.get("messages") or []:
        if message.get("type") == "text":
            lines.append(f"[{message['role']}] {message.get('text', '')}")
        else:
            lines.append(f"[{message['role']}] ({message.get('type')}, {message.get('mime_type')}, {message.get('bytes')} bytes)")
    lines.append(f"(at most {arguments.get('max_tokens')} tokens)")
    return "\n".join(lines)
