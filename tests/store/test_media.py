"""The media folder: tool results' images and audio as owner-only files named by their content."""

from __future__ import annotations

import base64
import hashlib
import stat
from pathlib import Path

import pytest

from backend.store.media import MediaNotFound, MediaStore


def test_a_saved_image_is_an_owner_only_file_named_by_its_sha256(tmp_path: Path) -> None:
    media = MediaStore(tmp_path / "media")
    saved = media.save("s1", "image", "image/PNG", b"png bytes")
    assert saved.name == hashlib.sha256(b"png bytes").hexdigest() + ".png"
    assert (saved.kind, saved.mime_type, saved.size) == ("image", "image/png", 9)
    path = media.path("s1", saved.name)
    assert path.read_bytes() == b"png bytes"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert media.read_base64("s1", saved.name) == base64.b64encode(b"png bytes").decode()


def test_the_same_image_twice_is_one_file(tmp_path: Path) -> None:
    media = MediaStore(tmp_path)
    first = media.save("s1", "image", "image/png", b"same")
    second = media.save("s1", "image", "image/png", b"same")
    assert first == second
    assert [p.name for p in (tmp_path / "s1").iterdir()] == [first.name]


def test_a_type_that_is_not_kept_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        MediaStore(tmp_path).save("s1", "image", "image/svg+xml", b"<svg/>")


@pytest.mark.parametrize(
    ("session_id", "name"),
    [("s1", "../s2/" + "a" * 64 + ".png"), ("..", "a" * 64 + ".png"), ("s1", "a" * 64 + ".png"), ("s/1", "x.png")],
)
def test_only_a_stored_media_name_of_the_session_is_found(tmp_path: Path, session_id: str, name: str) -> None:
    media = MediaStore(tmp_path / "media")
    media.save("s2", "image", "image/png", b"other session")
    with pytest.raises(MediaNotFound):
        media.path(session_id, name)
    assert media.read_base64(session_id, name) is None


def test_removing_a_session_deletes_its_media_and_only_its_media(tmp_path: Path) -> None:
    media = MediaStore(tmp_path)
    gone = media.save("s1", "audio", "audio/wav", b"RIFF")
    kept = media.save("s2", "audio", "audio/wav", b"RIFF")
    media.remove_session("s1")
    assert media.read_base64("s1", gone.name) is None
    assert media.read_base64("s2", kept.name) is not None
