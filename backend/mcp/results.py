"""Turning an MCP `CallToolResult` into the host's `ToolResult`, and capping what the model sees.

A tool can return megabytes; the model gets the first `limit` bytes and a note naming a file
in the workspace that holds the whole text, so it can read on in parts if it needs to.
"""

from __future__ import annotations

import base64
import contextlib
import binascii
import html
import json
import os
import re
from pathlib import Path
from typing import Any, Literal

import mcp_types

from backend.domain.media import MAX_MEDIA_BYTES, MediaKind, human_size, media_extension
from backend.domain.tools import ToolResult

SPILL_DIR = Path(".overseer") / "spill"
"""Where cut results are written, relative to the session's workspace."""

DEFAULT_SPILL_LIMIT = 50_000


def to_tool_result(result: mcp_types.CallToolResult, *, max_media_bytes: int = MAX_MEDIA_BYTES) -> ToolResult:
    """The model's view of a result, losing nothing it could use, and saying what it cannot see.

    Text blocks are joined by newlines. Images of the types models read, up to `max_media_bytes`
    each, are kept for the model (an embedded resource holding one too); any other image is a
    note saying why it was left out. Audio is kept for the person, with a note for the model.
    Embedded resources and resource links are rendered with their URI and type. Structured
    content is kept for programs; the model reads it as JSON when the tool sent no text and no
    image or audio (a media block wins: server-filesystem's `read_media_file` repeats its image's
    base64 in `structuredContent`, which would reach the model as 50 KB of text).

    A block whose `annotations.audience` is `["user"]` alone is the person's: it goes to the
    tool card (`user_text`, `user_media`), never to the model. One for `["assistant"]` alone goes
    to the model as any block does, and is listed in `model_only` so the card can mark it.
    """
    texts: list[str] = []
    images: list[dict[str, str]] = []
    audio: list[dict[str, str]] = []
    user_texts: list[str] = []
    user_media: list[dict[str, str]] = []
    model_only: list[str] = []
    has_text = False
    has_media = False
    for_user = False  # the block being read is the person's alone

    def take(kind: MediaKind, data: str, mime_type: str) -> str | None:
        """Keep an image or audio clip; None if kept as is, else why it was left out."""
        nonlocal has_media
        has_media = has_media or not for_user  # the model's media, sent or a note saying why not
        try:
            size = len(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError):
            return f"[{kind} ({mime_type}) left out: its data is not valid base64]"
        what = f"{kind} ({mime_type}, {human_size(size)})"
        if media_extension(kind, mime_type) is None:
            if kind == "image":
                return f"[{what} left out: models read only PNG, JPEG, GIF and WebP images]"
            return f"[{what} left out: not an audio type a browser plays]"
        if size > max_media_bytes:
            return f"[{what} left out: over the {human_size(max_media_bytes)} limit for one {kind}]"
        if for_user:
            user_media.append({"kind": kind, "data": data, "mime_type": mime_type.lower()})
            return None
        (images if kind == "image" else audio).append({"data": data, "mime_type": mime_type.lower()})
        if kind == "audio":
            return f"[{what} returned: the model receives no audio, only this note]"
        return None

    for block in result.content:
        audience = _audience(block)
        for_user = audience == "user"
        if for_user:
            # The person's alone: rendered as the model's view would be, then moved to the card.
            model_texts, model_has_text, texts, has_text = texts, has_text, [], False
        elif audience == "assistant":
            before = len(texts)
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
            has_text = has_text or bool(block.text.strip())
        elif isinstance(block, mcp_types.ImageContent):
            if note := take("image", block.data, block.mime_type):
                texts.append(note)
        elif isinstance(block, mcp_types.AudioContent):
            if note := take("audio", block.data, block.mime_type):
                texts.append(note)
        elif isinstance(block, mcp_types.ResourceLink):
            texts.append(_link_text(block))
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            mime_type = (resource.mime_type or "").lower()
            kind: MediaKind | None = "image" if mime_type.startswith("image/") else (
                "audio" if mime_type.startswith("audio/") else None
            )
            if isinstance(resource, mcp_types.TextResourceContents):
                texts.append(_resource_text(resource.uri, resource.mime_type, resource.text))
                has_text = True
            elif (decoded := _as_text(resource.blob, mime_type) if kind is None else None) is not None:
                texts.append(_resource_text(resource.uri, mime_type, decoded))
                has_text = True
            elif kind is not None:
                note = take(kind, resource.blob, mime_type)
                texts.append(_resource_text(resource.uri, mime_type, note or f"[{kind}: sent with this result]"))
            else:
                size = _decoded_size(resource.blob)
                texts.append(_resource_text(resource.uri, mime_type or None, f"[binary content, {size}, not shown]"))
        else:  # a content type newer than this code
            texts.append(f"[{getattr(block, 'type', 'unknown')} content omitted]")
        if for_user:
            user_texts += [t for t in texts if t.strip()]
            texts, has_text = model_texts, model_has_text
        elif audience == "assistant":
            model_only += [t for t in texts[before:] if t.strip()]
    structured = result.structured_content
    if not has_text and not has_media and _says_something(structured):
        # A structured-only result: its JSON is what the model can read (MCP's own advice to servers).
        texts = [json.dumps(structured, ensure_ascii=False, default=str)] + [t for t in texts if t.strip()]
    if _repeats_media(structured, [*images, *audio, *user_media]):
        # Kept as files already; a copy here would put the base64 in events and API answers.
        structured = None
    return ToolResult(
        text="\n".join(texts),
        is_error=result.is_error,
        images=images,
        audio=audio,
        structured=_as_structured(structured),
        user_text=_cut_for_the_card("\n".join(user_texts)),
        user_media=user_media,
        model_only=model_only,
    )


Audience = Literal["user", "assistant"]


def _audience(block: object) -> Audience | None:
    """Whom a block is for when it is for one side only; None for both (or unsaid)."""
    annotations = getattr(block, "annotations", None)
    audience = set(getattr(annotations, "audience", None) or ())
    if audience == {"user"}:
        return "user"
    if audience == {"assistant"}:
        return "assistant"
    return None


def _cut_for_the_card(text: str, limit: int = DEFAULT_SPILL_LIMIT) -> str:
    """The person's text within the limit the model's has: it is stored with the call and sent
    in its events, and no model reads on in a spill file for it."""
    data = text.encode()
    if len(data) <= limit:
        return text
    head = data[:limit].decode(errors="ignore")
    return f"{head}\n\n[Cut: showing the first {limit:,} of {len(data):,} bytes the tool meant for you.]"


def _repeats_media(structured: Any, media: list[dict[str, str]]) -> bool:
    """Whether structured content holds the base64 of a media block of the same result."""
    if structured is None or not media:
        return False
    dumped = json.dumps(structured, default=str)
    return any(m["data"] and m["data"] in dumped for m in media)


def _attributes(**values: object) -> str:
    return "".join(f' {key}="{html.escape(str(value))}"' for key, value in values.items() if value not in (None, ""))


def _resource_text(uri: str, mime_type: str | None, body: str) -> str:
    return f"<resource{_attributes(uri=uri, mimeType=mime_type)}>\n{body}\n</resource>"


def _link_text(link: mcp_types.ResourceLink) -> str:
    size = human_size(link.size) if link.size is not None else None
    attributes = _attributes(uri=link.uri, name=link.name, title=link.title, mimeType=link.mime_type, size=size)
    if link.description:
        return f"<resource_link{attributes}>{link.description}</resource_link>"
    return f"<resource_link{attributes} />"


TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/x-yaml", "application/toml")


def _as_text(blob: str, mime_type: str) -> str | None:
    """A blob of a text type, decoded; None for binary (or data that is not UTF-8)."""
    if not (mime_type.startswith("text/") or mime_type in TEXT_TYPES or mime_type.endswith(("+json", "+xml"))):
        return None
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _decoded_size(blob: str) -> str:
    try:
        return human_size(len(base64.b64decode(blob, validate=True)))
    except (binascii.Error, ValueError):
        return "not valid base64"


def _says_something(value: Any) -> bool:
    """False for structured content that holds only empty values, e.g. `{"result": ""}` for a tool
    that returned an empty string: its empty text already says all of it."""
    if isinstance(value, dict):
        return any(_says_something(v) for v in value.values())
    if isinstance(value, list):
        return any(_says_something(v) for v in value)
    return value is not None and value != ""


def _as_structured(value: Any) -> dict[str, Any] | None:
    # `ToolResult.structured` is an object; 2026-07-28 servers may send any JSON value.
    if value is None or isinstance(value, dict):
        return value
    return {"result": value}


def spill_file_name(call_id: str) -> str:
    """A file name made from a call id, safe whatever characters the id holds."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", call_id)[:100] + ".txt"


def cap_result(
    result: ToolResult, *, workspace: Path, call_id: str, limit: int = DEFAULT_SPILL_LIMIT
) -> ToolResult:
    """Cut text over `limit` UTF-8 bytes, writing the full text to `<workspace>/.overseer/spill/`.

    Blocking file I/O: run it in a worker thread. Structured content larger than the limit is
    dropped from a cut result, since it usually repeats the text and would defeat the cut.
    """
    data = result.text.encode()
    if len(data) <= limit:
        return result
    # Cut on a character boundary: drop a partial UTF-8 sequence at the end.
    head = data[:limit].decode(errors="ignore")
    relative = SPILL_DIR / spill_file_name(call_id)
    try:
        write_inside(workspace, relative, data)
    except OSError as exc:
        note = (
            f"[Output cut: showing the first {limit:,} of {len(data):,} bytes. "
            f"The full output could not be saved ({exc.strerror or exc}).]"
        )
        spilled_to = None
    else:
        note = (
            f"[Output cut: showing the first {limit:,} of {len(data):,} bytes. "
            f"The full output is in {relative.as_posix()} (relative to the workspace); "
            f"read that file in parts, from an offset, to see the rest.]"
        )
        spilled_to = relative.as_posix()
    structured = result.structured
    if structured is not None and len(json.dumps(structured, default=str)) > limit:
        structured = None
    return result.model_copy(
        update={"text": f"{head}\n\n{note}", "structured": structured, "spilled_to": spilled_to}
    )


def write_inside(workspace: Path, relative: Path, data: bytes) -> None:
    """Write `data` to `workspace/relative`, folder by folder from the workspace, never through a
    symlink: a command may have planted one on the way (`.overseer/spill -> ../../other-agent`),
    and the host, unconfined, must not follow it out of the workspace.

    Only the host's user may read what was written: a result may hold what a tool read with the
    host's rights (a secret, a private file), so the file is 0600 and its folder 0700, whatever
    the umask or an earlier, looser folder.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    workspace.mkdir(parents=True, exist_ok=True)  # the workspace itself is the host's, trusted
    folder = os.open(workspace, flags & ~os.O_NOFOLLOW)
    try:
        for name in relative.parent.parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=folder)
            inner = os.open(name, flags, dir_fd=folder)
            os.close(folder)
            folder = inner
        os.fchmod(folder, 0o700)  # the file's own folder, even one made before files were private
        with contextlib.suppress(FileNotFoundError):  # a new file, never through a planted hard link
            os.unlink(relative.name, dir_fd=folder)
        created = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(relative.name, created, 0o600, dir_fd=folder)
        with os.fdopen(out, "wb") as file:
            file.write(data)
    finally:
        os.close(folder)
