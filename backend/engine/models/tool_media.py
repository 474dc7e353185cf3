"""Images of tool results on the wire: in each provider's native form, within a request budget.

Anthropic takes images inside a `tool_result`; LiteLLM turns an OpenAI-shape tool message whose
content holds `image_url` parts into exactly that. OpenAI-style APIs take no images in tool
messages, so for them the images follow the turn's tool messages in one user message, as
LiteLLM documents. Each request re-sends the transcript, so only the newest images are sent
whole (`MAX_IMAGES_PER_REQUEST`, `MAX_IMAGE_BYTES_PER_REQUEST`); older ones become a note.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from backend.domain.media import MediaFile, human_size
from backend.domain.models import Message

ToolImageStyle = Literal["in_result", "user_message"]
"""Where a tool result's images go: inside the tool message, or in a user message after the turn."""

MAX_IMAGES_PER_REQUEST = 20
MAX_IMAGE_BYTES_PER_REQUEST = 15 * 1024 * 1024
"""Decoded; as base64 about 20 MB, under Anthropic's 32 MB per request with room for the rest."""

TOOL_IMAGES_PREAMBLE = "Images returned by the tool calls above (tools cannot send images in their own messages here):"
"""The first words of the user message that carries tool images for OpenAI-style APIs."""

ReadMedia = Callable[[str, str], str | None]
"""(session id, media file name) -> its bytes as base64, or None when the file is gone."""


def tool_image_style(models: Sequence[str]) -> ToolImageStyle:
    """Images in the tool result only when every model a request may go to (the primary and its
    fallbacks) is one LiteLLM sends to Anthropic's API; anything else gets the portable form."""
    for model in models:
        provider, slash, name = model.partition("/")
        if not (provider == "anthropic" or (not slash and provider.lower().startswith("claude"))):
            return "user_message"
    return "in_result" if models else "user_message"


Sent = dict[tuple[int, str], str | None]
"""(message idx, media file name) -> the data URL sent, or None for a file that is gone."""


def images_to_send(history: Sequence[Message], read: ReadMedia | None) -> Sent:
    """The images sent whole this request, newest first within the budget. Images not in it
    are sent as a note (see `image_parts`)."""
    sent: Sent = {}
    if read is None:
        return sent
    total = 0
    for message in reversed(history):
        if message.role != "tool":
            continue
        for media in reversed(_images(message)):
            if len(sent) >= MAX_IMAGES_PER_REQUEST or total + media.size > MAX_IMAGE_BYTES_PER_REQUEST:
                return sent
            data = read(message.session_id, media.name)
            sent[(message.idx, media.name)] = None if data is None else f"data:{media.mime_type};base64,{data}"
            total += media.size if data is not None else 0
    return sent


def image_parts(message: Message, sent: Sent) -> list[dict[str, Any]]:
    """A tool message's images as `image_url` parts, or a text note for each one not sent whole."""
    parts: list[dict[str, Any]] = []
    for media in _images(message):
        key = (message.idx, media.name)
        url = sent.get(key)
        if url is not None:
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif key in sent:
            parts.append({"type": "text", "text": f"[an image ({media.mime_type}) whose file is gone]"})
        else:
            parts.append({"type": "text", "text": _left_out(media)})
    return parts


def tool_message(message: Message, sent: Sent, style: ToolImageStyle) -> dict[str, Any]:
    """The OpenAI-shape tool message of a result; with `in_result`, its images inside it."""
    entry: dict[str, Any] = {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    images = _images(message)
    if not images:
        return entry
    if style == "in_result":
        # Anthropic refuses an empty text block: an image-only result is its images alone.
        text = [{"type": "text", "text": message.content}] if message.content else []
        entry["content"] = [*text, *image_parts(message, sent)]
    else:
        count = f"{len(images)} image{'s' if len(images) > 1 else ''}"
        entry["content"] = (message.content + "\n" if message.content else "") + f"[{count}: in the next user message]"
    return entry


def images_message(results: Sequence[Message], sent: Sent) -> dict[str, Any] | None:
    """For `user_message`: the one user message after a turn's tool messages holding their images."""
    parts: list[dict[str, Any]] = []
    for result in results:
        if _images(result):
            parts.append({"type": "text", "text": f"From {result.name} (call {result.tool_call_id}):"})
            parts += image_parts(result, sent)
    if not parts:
        return None
    return {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_PREAMBLE}, *parts]}


def _images(message: Message) -> list[MediaFile]:
    """The images a model may see: not those the tool meant for the person alone."""
    return [m for m in message.media if m.kind == "image" and not m.for_user_only]


def _left_out(media: MediaFile) -> str:
    return (
        f"[an earlier image ({media.mime_type}, {human_size(media.size)}) is not sent again: each request "
        f"carries only the newest {MAX_IMAGES_PER_REQUEST} images, up to {human_size(MAX_IMAGE_BYTES_PER_REQUEST)}]"
    )
