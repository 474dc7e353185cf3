"""A write the database refuses for want of room or permission, told as `StorageUnavailable`.

SQLite reports a full disk as SQLITE_FULL and a database it may not write (an immutable or
read-only file, a read-only mount) as SQLITE_READONLY; Postgres as SQLSTATE 53100 (disk full)
and 25006 (read-only transaction, a standby). The files beside the database (media) fail with
ENOSPC or EROFS. Each becomes one error with a reason a person can act on; any other error is
left as it is.
"""

from __future__ import annotations

import errno
import sqlite3

from backend.domain.errors import StorageUnavailable

DISK_FULL = "the disk is full"
READ_ONLY = "the database is read-only"

_SQLITE = {sqlite3.SQLITE_FULL: DISK_FULL, sqlite3.SQLITE_READONLY: READ_ONLY}
_SQLSTATE = {"53100": DISK_FULL, "25006": READ_ONLY}
_ERRNO = {errno.ENOSPC: DISK_FULL, errno.EDQUOT: DISK_FULL, errno.EROFS: READ_ONLY}


def storage_fault(exc: BaseException) -> StorageUnavailable | None:
    """The `StorageUnavailable` that `exc` means, or None when it means something else."""
    if isinstance(exc, StorageUnavailable):
        return exc
    reason: str | None = None
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None:
            reason = _SQLITE.get(code & 0xFF)  # extended codes keep the base in the low byte
    elif isinstance(exc, OSError):
        reason = _ERRNO.get(exc.errno or 0)
    else:
        reason = _SQLSTATE.get(str(getattr(exc, "sqlstate", "") or ""))  # psycopg's errors
    return StorageUnavailable(reason) if reason is not None else None


def told(exc: BaseException) -> BaseException:
    """`exc` as a `StorageUnavailable` when it is one (its cause kept), else `exc` itself."""
    fault = storage_fault(exc)
    if fault is None or fault is exc:
        return exc
    fault.__cause__ = exc
    return fault
