"""Private folders and files under the data dir (issue 13, item 14)."""

from __future__ import annotations

import os
import stat

from backend.paths import private_dir, private_file, private_opener


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_every_folder_private_dir_creates_is_owner_only_and_existing_ones_keep_their_mode(tmp_path):
    os.chmod(tmp_path, 0o755)
    old_umask = os.umask(0o022)
    try:
        made = private_dir(tmp_path / "data" / "logs")
    finally:
        os.umask(old_umask)
    assert made.is_dir()
    assert mode(tmp_path / "data") == mode(tmp_path / "data" / "logs") == 0o700
    assert mode(tmp_path) == 0o755  # a shared folder stays shared


def test_private_file_creates_an_owner_only_file_and_tightens_an_existing_one(tmp_path):
    fresh = private_file(tmp_path / "new.db")
    assert mode(fresh) == 0o600 and fresh.read_bytes() == b""
    old = tmp_path / "old.db"
    old.write_bytes(b"keep me")
    os.chmod(old, 0o644)
    private_file(old)
    assert mode(old) == 0o600 and old.read_bytes() == b"keep me"


def test_files_opened_with_private_opener_are_owner_only(tmp_path):
    old_umask = os.umask(0o022)
    try:
        with open(tmp_path / "server.log", "ab", opener=private_opener) as log:
            log.write(b"x")
    finally:
        os.umask(old_umask)
    assert mode(tmp_path / "server.log") == 0o600
