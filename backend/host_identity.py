"""A host's stable id among the hosts of one shared database.

Several `overseer serve` processes may share a Postgres database; each needs a name that stays
the same across its restarts (DBOS recovers a dead host's runs by this executor id, the logs and
`/api/health` say which host did what). `host_id` in the settings names it; unset, it is read
from `<data dir>/host_id`, and failing that derived from the machine's name and the data dir's
path, then written there at the host's first start, so a later rename of the machine keeps it.
"""

from __future__ import annotations

import hashlib
import re
import socket
from pathlib import Path

from backend.paths import private_opener

HOST_ID_FILE = "host_id"
HOST_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_host_id(value: str) -> str:
    """The id, or ValueError naming what a host id may be (it appears in logs, URLs and SQL rows)."""
    if not HOST_ID_PATTERN.match(value):
        raise ValueError(f"host_id {value!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    return value


def default_host_id(data_dir: Path) -> str:
    """The id kept in the data dir, else `<machine>-<8 hex of the data dir's path>`."""
    kept = data_dir.expanduser() / HOST_ID_FILE
    try:
        text = kept.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        text = ""
    if text:
        return check_host_id(text)
    machine = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname()).strip("-._")[:40] or "host"
    digest = hashlib.sha256(str(data_dir.expanduser().resolve()).encode()).hexdigest()[:8]
    return f"{machine}-{digest}"


def remember_host_id(data_dir: Path, host_id: str) -> None:
    """Write the id into the data dir unless one is kept there already (a configured id wins anyway)."""
    kept = data_dir.expanduser() / HOST_ID_FILE
    if not kept.exists():
        with open(kept, "w", encoding="utf-8", opener=private_opener) as f:
            f.write(host_id + "\n")
