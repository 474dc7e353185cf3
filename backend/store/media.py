"""Images and audio of tool results, as files: `<root>/<session id>/<sha256><ext>`, owner-only.

A message refers to its media by `MediaFile`; the bytes are never in a database row, so a
transcript with many screenshots stays small to read, and the same image returned twice is
one file. Blocking file I/O: call these from a worker thread.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import uuid
from pathlib import Path

from backend.domain.errors import NotFound
from backend.domain.media import MediaFile, MediaKind, media_extension
from backend.domain.tools import ToolResult
from backend.paths import private_dir, private_opener

_SESSION = re.compile(r"[A-Za-z0-9_-]{1,128}")
_NAME = re.compile(r"[0-9a-f]{64}\.[a-z0-9]{1,5}")


class MediaNotFound(NotFound):
    """No such media file in the session (or a name that could never be one)."""


class MediaStore:
    """The media folder under the data dir: one folder per session."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def save(self, session_id: str, kind: MediaKind, mime_type: str, data: bytes) -> MediaFile:
        """Write the bytes once (a file with the same content is reused) and describe them.

        `mime_type` must be one `backend.domain.media` keeps (ValueError otherwise).
        """
        extension = media_extension(kind, mime_type)
        if extension is None:
            raise ValueError(f"{mime_type} is not a {kind} type Overseer keeps")
        name = hashlib.sha256(data).hexdigest() + extension
        path = self._folder(session_id) / name
        if not path.exists():
            private_dir(path.parent)
            # Written aside and renamed into place: a reader never sees half a file.
            partial = path.with_name(f".{uuid.uuid4().hex}.part")
            try:
                with open(partial, "wb", opener=private_opener) as out:
                    out.write(data)
                os.replace(partial, path)
            finally:
                partial.unlink(missing_ok=True)
        return MediaFile(kind=kind, name=name, mime_type=mime_type.lower(), size=len(data))

    def save_base64(self, session_id: str, kind: MediaKind, mime_type: str, data: str) -> MediaFile:
        """`save` for base64 data, as MCP carries it."""
        return self.save(session_id, kind, mime_type, base64.b64decode(data))

    def keep(self, session_id: str, result: ToolResult) -> list[MediaFile]:
        """Write a tool result's images and audio; the message refers to the files, not the data."""
        kinds: list[tuple[MediaKind, dict[str, str]]] = [("image", i) for i in result.images]
        kinds += [("audio", a) for a in result.audio]
        kept = [self.save_base64(session_id, kind, m["mime_type"], m["data"]) for kind, m in kinds]
        for m in result.user_media:  # the person's alone: marked so no model request carries it
            kind: MediaKind = "audio" if m["kind"] == "audio" else "image"
            saved = self.save_base64(session_id, kind, m["mime_type"], m["data"])
            kept.append(saved.model_copy(update={"for_user_only": True}))
        return kept

    def path(self, session_id: str, name: str) -> Path:
        """The file of a session's media; MediaNotFound for a name that is not one (no `..`, no `/`)."""
        if not _NAME.fullmatch(name):
            raise MediaNotFound(f"no media {name!r} in session {session_id!r}")
        path = self._folder(session_id) / name
        if not path.is_file():
            raise MediaNotFound(f"no media {name!r} in session {session_id!r}")
        return path

    def read_base64(self, session_id: str, name: str) -> str | None:
        """The file's bytes as base64; None when it is gone."""
        try:
            return base64.b64encode(self.path(session_id, name).read_bytes()).decode("ascii")
        except (MediaNotFound, OSError):
            return None

    def remove_session(self, session_id: str) -> None:
        """Delete a session's media folder (a deleted session keeps nothing)."""
        try:
            folder = self._folder(session_id)
        except MediaNotFound:
            return
        shutil.rmtree(folder, ignore_errors=True)

    def _folder(self, session_id: str) -> Path:
        if not _SESSION.fullmatch(session_id):
            raise MediaNotFound(f"no media for session {session_id!r}")
        return self.root / session_id
