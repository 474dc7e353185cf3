"""Authentication secrets on disk: generated secrets and the API key file, all owner-only (0600).

Every write goes to a private temporary file that then replaces (or, for a new secret, is
linked to) the real name, so a reader never sees half a file.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import tempfile
import threading
from datetime import UTC, datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

logger = logging.getLogger(__name__)


class StoredApiKey(BaseModel):
    """One row of `api_keys.json`: the key itself is never stored, only its SHA-256."""

    model_config = ConfigDict(extra="forbid")
    name: str
    role: str
    """Checked against the known roles by the caller, on the way in and on the way out."""
    created_at: float
    prefix: str
    sha256: str

    def public(self) -> dict[str, Any]:
        """What may be shown about a key: everything but the hash."""
        created = datetime.fromtimestamp(self.created_at, UTC).isoformat(timespec="seconds")
        return {"name": self.name, "role": self.role, "created_at": created, "prefix": self.prefix}


class _KeyFileContent(BaseModel):
    model_config = ConfigDict(extra="forbid")
    keys: list[StoredApiKey] = Field(default_factory=list)


class ApiKeyFile:
    """The API keys in one JSON file, re-read when another process (the CLI) changed it."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._cached: list[StoredApiKey] = []
        self._cached_stat: tuple[int, int, int] | None = None

    def all(self) -> list[StoredApiKey]:
        """Every key, oldest first; ValueError when the file is not a valid key file."""
        with self._lock:
            return list(self._load())

    def find(self, sha256: str) -> StoredApiKey | None:
        """The key with this hash, or None. An unreadable file matches nothing (fails closed)."""
        try:
            keys = self.all()
        except ValueError:
            logger.exception("API keys are unusable until %s is fixed", self._path)
            return None
        found = None
        for key in keys:
            if hmac.compare_digest(key.sha256.encode(), sha256.encode()):
                found = key
        return found

    def named(self, name: str) -> StoredApiKey | None:
        """The key called `name`, or None (also when the file is unreadable)."""
        try:
            return next((key for key in self.all() if key.name == name), None)
        except ValueError:
            logger.exception("API keys are unusable until %s is fixed", self._path)
            return None

    def add(self, key: StoredApiKey) -> None:
        """Store a new key; ValueError when the name is empty or taken."""
        if not key.name.strip():
            raise ValueError("an API key needs a name")
        with self._lock:
            keys = self._load()
            if any(existing.name == key.name for existing in keys):
                raise ValueError(f"an API key named {key.name!r} already exists")
            self._save([*keys, key])

    def remove(self, name: str) -> bool:
        """Delete the key called `name`; False when there is none."""
        with self._lock:
            keys = self._load()
            kept = [key for key in keys if key.name != name]
            if len(kept) == len(keys):
                return False
            self._save(kept)
            return True

    def _load(self) -> list[StoredApiKey]:
        try:
            stat = self._path.stat()
        except FileNotFoundError:
            self._cached, self._cached_stat = [], None
            return self._cached
        # A replaced file has a new inode, so this notices every write made through _save.
        signature = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if signature != self._cached_stat:
            try:
                content = _KeyFileContent.model_validate_json(self._path.read_bytes())
            except ValidationError as exc:
                errors = exc.error_count()
                raise ValueError(f"{self._path} is not a valid API key file ({errors} errors)") from exc
            self._cached, self._cached_stat = content.keys, signature
        return self._cached

    def _save(self, keys: list[StoredApiKey]) -> None:
        text = json.dumps(_KeyFileContent(keys=keys).model_dump(), indent=2) + "\n"
        os.replace(_private_temp_file(self._path, text), self._path)
        self._cached_stat = None


class _RevokedContent(BaseModel):
    model_config = ConfigDict(extra="forbid")
    revoked: dict[str, float] = Field(default_factory=dict)
    """A revoked JWT's id and when it would have expired anyway (seconds since 1970)."""


class RevokedJwtFile:
    """The ids of JWTs signed out before they expired, in one JSON file that survives a restart.

    An id is kept only until its JWT would have expired, so the file holds at most the logouts
    of one JWT lifetime. Re-read when another process changed it; an unreadable file revokes
    everything it cannot read, so it fails closed: no JWT is accepted until it is fixed.
    """

    def __init__(self, path: Path, *, clock: Callable[[], float]) -> None:
        self._path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: dict[str, float] = {}
        self._cached_stat: tuple[int, int, int] | None = None

    def revoke(self, jti: str, expires_at: float) -> None:
        """Refuse the JWT with id `jti` from now until `expires_at`, when it would expire anyway."""
        with self._lock:
            now = self._clock()
            kept = {key: exp for key, exp in self._load().items() if exp > now}
            kept[jti] = expires_at
            text = json.dumps(_RevokedContent(revoked=kept).model_dump(), indent=2) + "\n"
            os.replace(_private_temp_file(self._path, text), self._path)
            self._cached_stat = None

    def is_revoked(self, jti: str) -> bool:
        """True for a revoked id, and for every id while the file cannot be read."""
        with self._lock:
            try:
                return jti in self._load()
            except ValueError:
                logger.exception("every login session is refused until %s is fixed", self._path)
                return True

    def _load(self) -> dict[str, float]:
        try:
            stat = self._path.stat()
        except FileNotFoundError:
            self._cached, self._cached_stat = {}, None
            return self._cached
        signature = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if signature != self._cached_stat:
            try:
                content = _RevokedContent.model_validate_json(self._path.read_bytes())
            except ValidationError as exc:
                raise ValueError(f"{self._path} is not a valid list of revoked logins") from exc
            self._cached, self._cached_stat = content.revoked, signature
        return self._cached


def read_or_create_secret(path: Path) -> str:
    """The secret stored in `path`, generated and stored (0600) the first time."""
    existing = _read_secret(path)
    if existing:
        return existing
    temp = _private_temp_file(path, secrets.token_urlsafe(32) + "\n")
    try:
        if existing is None:
            try:
                # A link never overwrites: if two processes start at once, both use the first secret.
                os.link(temp, path)
            except FileExistsError:
                pass
            except OSError:  # a filesystem without hard links
                os.replace(temp, path)
        else:  # present but empty, e.g. truncated by hand: nothing in it to keep
            os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    secret = _read_secret(path)
    if not secret:
        raise RuntimeError(f"could not store a secret in {path}")
    return secret


def _read_secret(path: Path) -> str | None:
    try:
        secret = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)  # e.g. copied with a permissive umask: a secret must stay owner-only
    return secret


def _private_temp_file(path: Path, text: str) -> Path:
    """`text` in a new owner-only file beside `path`, flushed to disk."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        os.chmod(temp, 0o600)  # mkstemp already does; said here because the secret is written next
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp
