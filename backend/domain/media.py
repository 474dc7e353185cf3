"""Images and audio a tool returned: what is kept of them, and how big they may be.

Their bytes live in files under the data dir (see `backend.store.media`), named by the sha256 of
their content; a message refers to them by a `MediaFile`, so no database row holds base64.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

MAX_MEDIA_BYTES = 5 * 1024 * 1024
"""The largest image or audio clip (decoded) kept or sent to a model: Anthropic's limit per image."""

IMAGE_TYPES: dict[str, str] = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
"""The image types models read, with the file extension each is stored under."""

AUDIO_TYPES: dict[str, str] = {
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/wave": ".wav",
    "audio/mpeg": ".mp3",
    "audio/mp3": ".mp3",
    "audio/ogg": ".ogg",
    "audio/webm": ".webm",
    "audio/flac": ".flac",
    "audio/mp4": ".m4a",
    "audio/aac": ".aac",
}
"""Audio types a browser plays, with their file extensions. No model here listens to audio."""

MediaKind = Literal["image", "audio"]


def media_extension(kind: MediaKind, mime_type: str) -> str | None:
    """The file extension a type is stored under; None for a type that is not kept."""
    return (IMAGE_TYPES if kind == "image" else AUDIO_TYPES).get(mime_type.lower())


def media_type_of(name: str) -> str | None:
    """The type a stored file is served as, from its extension; None for no kept extension."""
    extension = "." + name.rpartition(".")[2].lower()
    for types in (IMAGE_TYPES, AUDIO_TYPES):
        for mime_type, ext in types.items():
            if ext == extension:
                return mime_type
    return None


def human_size(size: int) -> str:
    """`512 bytes`, `12.3 KB`, `6.2 MB`: sizes as the model and the person read them."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 2**20:.1f} MB"


class MediaFile(BaseModel):
    """An image or audio clip kept with a tool message: a file of the session's media folder."""

    kind: MediaKind
    name: str
    """The file's name in the session's media folder: `<sha256 of the bytes><extension>`."""
    mime_type: str
    size: int
    """Bytes, decoded."""
    for_user_only: bool = False
    """The tool meant it for the person alone (`audience: ["user"]`): shown, never sent to a model."""
