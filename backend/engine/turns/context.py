"""User content beyond the typed text: context paths, attached skills and images.

Everything is captured when the message is sent (see `Attachment`), and rendered for the model
by `user_content`: text blocks after the person's words, images as image blocks.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Any

from backend.domain.errors import BadRequest
from backend.domain.media import IMAGE_TYPES as MEDIA_IMAGE_TYPES
from backend.domain.media import MAX_MEDIA_BYTES
from backend.domain.models import Attachment, Message

MAX_CONTEXT_FILE_BYTES = 512 * 1024
TREE_DEPTH = 4
MAX_TREE_ENTRIES = 2000
MAX_IMAGE_BYTES = MAX_MEDIA_BYTES
IMAGE_TYPES = tuple(MEDIA_IMAGE_TYPES)
"""The same types and limit as images of tool results: what models read."""
# Folders nobody wants in a tree: they dwarf the project and say nothing about it.
SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"})


class ContextError(BadRequest):
    """A context path, image or skill that cannot be attached; the message says which and why."""


def context_attachments(workspace: Path, paths: list[str]) -> list[Attachment]:
    """Files (up to 512 KB, UTF-8 text) and folder trees (depth 4) inside the workspace."""
    root = workspace.resolve()
    attachments = []
    for raw in paths:
        try:
            target = (root / os.path.expanduser(raw)).resolve()
            is_dir, is_file = target.is_dir(), target.is_file()
        except (OSError, ValueError) as exc:
            # A NUL byte (ValueError) or a name over 255 bytes (ENAMETOOLONG): no file has that name.
            raise ContextError(f"context path {raw!r} is not a usable path: {exc}") from exc
        if not target.is_relative_to(root):
            raise ContextError(f"context path {raw!r} is outside the workspace {root}")
        if is_dir:
            tree = _tree(target)
            attachments.append(
                Attachment(kind="directory", name=raw, text=f'<directory path="{raw}" depth="{TREE_DEPTH}">\n{tree}\n</directory>')
            )
        elif is_file:
            attachments.append(Attachment(kind="file", name=raw, text=f'<file path="{raw}">\n{_file_text(target, raw)}\n</file>'))
        else:
            raise ContextError(f"context path {raw!r} does not exist in the workspace {root}")
    return attachments


def image_attachment(*, name: str, data: str, mime_type: str) -> Attachment:
    """An image given as base64; refused when it is not one of the types models read, or too big."""
    if mime_type not in IMAGE_TYPES:
        raise ContextError(f"image {name!r} is {mime_type}; images must be one of {', '.join(IMAGE_TYPES)}")
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise ContextError(f"image {name!r} is not valid base64: {exc}") from exc
    if size > MAX_IMAGE_BYTES:
        raise ContextError(f"image {name!r} is {size / 1e6:.1f} MB; images are limited to {MAX_IMAGE_BYTES // 2**20} MB")
    return Attachment(kind="image", name=name, data=data, mime_type=mime_type)


def user_content(message: Message) -> str | list[dict[str, Any]]:
    """The model's view of a user message: the text, attached blocks after it, then images."""
    texts = [a.text for a in message.attachments if a.kind != "image" and a.text]
    text = "\n\n".join([message.content, *texts]) if texts else message.content
    images = [a for a in message.attachments if a.kind == "image" and a.data]
    if not images:
        return text
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        url = f"data:{image.mime_type};base64,{image.data}"
        blocks.append({"type": "image_url", "image_url": {"url": url}})
    return blocks


def _file_text(path: Path, shown: str) -> str:
    size = path.stat().st_size
    if size > MAX_CONTEXT_FILE_BYTES:
        raise ContextError(
            f"context file {shown!r} is {size / 1024:.0f} KB; files are attached up to 512 KB "
            "(name it in the message instead and the agent can read it in pages)"
        )
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise ContextError(f"context file {shown!r} is binary; only text files can be attached")
    return data.decode("utf-8", errors="replace")


def _tree(root: Path) -> str:
    lines: list[str] = []

    def walk(folder: Path, depth: int) -> None:
        try:
            entries = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
        except OSError as exc:
            lines.append("  " * depth + f"[unreadable: {exc.strerror or exc}]")
            return
        for entry in entries:
            if len(lines) >= MAX_TREE_ENTRIES:
                return
            is_dir = entry.is_dir() and not entry.is_symlink()
            lines.append("  " * depth + entry.name + ("/" if is_dir else ""))
            if is_dir and entry.name not in SKIPPED_DIRS and depth + 1 < TREE_DEPTH:
                walk(entry, depth + 1)

    walk(root, 0)
    if len(lines) >= MAX_TREE_ENTRIES:
        lines.append(f"[... more entries; the listing stops at {MAX_TREE_ENTRIES}]")
    return "\n".join(lines) or "(empty)"
