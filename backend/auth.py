"""Who is calling the web API: the single-user token, login sessions (JWT), API keys and roles.

Single-user by default: a random token (OVERSEER_TOKEN, else `<data dir>/token`) is both the
admin's password and a bearer credential. With `users:` configured, people log in with
argon2-hashed passwords. A login returns a JWT signed with `<data dir>/jwt_secret`; deleting that
file signs everyone out. This module knows nothing about HTTP: the API layer hands it the
credential string and checks `Principal.can(...)`.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import authlib.deprecate  # noqa: F401  (installs authlib's "always" warning filter before ours below)
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.auth_store import ApiKeyFile, RevokedJwtFile, StoredApiKey, read_or_create_secret
from backend.domain.models import Decider, Door, PrincipalKind

with warnings.catch_warnings():
    # authlib.jose warns on import that joserfc replaces it in authlib 2; it works until then,
    # and the warning would otherwise print on every start of the command line.
    warnings.filterwarnings("ignore", message="authlib.jose module is deprecated")
    from authlib.jose import JsonWebToken
    from authlib.jose.errors import JoseError

try:
    import bcrypt
except ImportError:  # optional: only for bcrypt hashes carried over from other tools
    bcrypt = None

Role = Literal["admin", "approver", "viewer"]
ROLE_RANK: dict[Role, int] = {"viewer": 0, "approver": 1, "admin": 2}

TOKEN_FILE = "token"
JWT_SECRET_FILE = "jwt_secret"
API_KEYS_FILE = "api_keys.json"
REVOKED_JWTS_FILE = "revoked_jwts.json"
API_KEY_PREFIX = "ovr_"

_LOGIN_FAILED = "invalid username or password"
_BCRYPT_PREFIXES = ("$2a$", "$2b$", "$2y$")
_JWT = JsonWebToken(["HS256"])
_JWT_CLAIMS: dict[str, dict[str, Any]] = {
    "sub": {"essential": True},
    "role": {"essential": True, "values": list(ROLE_RANK)},
    "kind": {"essential": True, "values": ["token", "user", "api_key"]},
    "iat": {"essential": True},
    "exp": {"essential": True},
    "jti": {"essential": True},  # what a logout revokes; a JWT without one cannot be signed out
}


class AuthError(Exception):
    """Bad credentials or an unsafe setup; the message is safe to show to whoever asked."""


@dataclass(frozen=True, kw_only=True)
class Principal:
    """Who made a request: a name, a role, and how they proved it."""

    name: str
    role: Role
    kind: PrincipalKind

    def can(self, role: Role) -> bool:
        """True when this principal holds `role` or one that ranks above it."""
        return ROLE_RANK[self.role] >= ROLE_RANK[role]

    def decider(self, via: Door) -> Decider:
        """How a decision this principal makes through `via` is recorded."""
        return Decider(name=self.name, kind=self.kind, role=self.role, via=via)


def local_principal() -> Principal:
    """The person at this machine: whoever runs `overseer run` or started the stdio MCP server.

    They own the data dir and the config file, so they are its admin.
    """
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid (some containers)
        name = "local"
    return Principal(name=name, role="admin", kind="local")


_TOKEN_PRINCIPAL = Principal(name="admin", role="admin", kind="token")


class UserConfig(BaseModel):
    """One entry of `users:` in overseer.yaml. Only a password hash is ever stored."""

    model_config = ConfigDict(extra="forbid")
    username: str = Field(min_length=1)
    password_hash: str = Field(repr=False)
    """argon2 (`$argon2id$...`, from `overseer hash-password`) or bcrypt (`$2b$...`)."""
    role: Role = "viewer"

    @field_validator("password_hash")
    @classmethod
    def _is_a_hash(cls, value: str) -> str:
        if value.startswith("$argon2"):
            return value
        if value.startswith(_BCRYPT_PREFIXES):
            if bcrypt is None:
                raise ValueError(
                    "bcrypt hashes need the `bcrypt` package; install it or use `overseer hash-password`"
                )
            return value
        raise ValueError("must be an argon2 ($argon2id$...) or bcrypt ($2b$...) hash, not a password; "
                         "make one with `overseer hash-password`")


class Authenticator:
    """Checks credentials and issues login sessions for the web API.

    Thread-safe. `login` verifies a password hash (tens of milliseconds of CPU and 64 MiB for
    argon2's defaults), so call it from a worker thread, not the event loop.
    """

    def __init__(
        self,
        *,
        data_dir: Path,
        token: str | None,
        users: list[UserConfig],
        jwt_ttl: float = 24 * 3600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if jwt_ttl <= 0:
            raise ValueError("jwt_ttl must be positive")
        directory = data_dir.expanduser()
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # An empty OVERSEER_TOKEN would make the empty string a credential: treat it as unset.
        self._token = token if token and token.strip() else read_or_create_secret(directory / TOKEN_FILE)
        self._jwt_key = read_or_create_secret(directory / JWT_SECRET_FILE).encode()
        self._users: dict[str, UserConfig] = {}
        for user in users:
            if user.username in self._users:
                raise ValueError(f"users: {user.username!r} is listed twice")
            self._users[user.username] = user
        self._jwt_ttl = jwt_ttl
        self._clock = clock
        self._keys = ApiKeyFile(directory / API_KEYS_FILE)
        self._revoked = RevokedJwtFile(directory / REVOKED_JWTS_FILE, clock=clock)
        self._hasher = PasswordHasher()
        self._decoy_hash: str | None = None
        self._decoy_lock = threading.Lock()

    @property
    def token(self) -> str:
        """The single-user token: the admin's password and bearer credential."""
        return self._token

    @property
    def multi_user(self) -> bool:
        """True when `users:` is configured and logins check their passwords."""
        return bool(self._users)

    def login(self, username: str, password: str) -> str:
        """Exchange a username and password for a JWT; the same AuthError for every failure.

        Single-user: the password is the token and the username is ignored.
        """
        if not self._users:
            if _same(password, self._token):
                return self.issue_jwt(_TOKEN_PRINCIPAL)
            raise AuthError(_LOGIN_FAILED)
        user = self._users.get(username)
        if user is None:
            # Do the work of a real check so the response time does not reveal which names exist.
            self._verify(self._decoy(), password)
            raise AuthError(_LOGIN_FAILED)
        if not self._verify(user.password_hash, password):
            raise AuthError(_LOGIN_FAILED)
        return self.issue_jwt(Principal(name=user.username, role=user.role, kind="user"))

    def issue_jwt(self, principal: Principal) -> str:
        """A signed HS256 JWT for `principal` with claims sub, role, kind, iat, exp and jti (its id)."""
        now = self._clock()
        claims = {
            "sub": principal.name,
            "role": principal.role,
            "kind": principal.kind,
            "iat": int(now),
            "exp": int(now + self._jwt_ttl),
            "jti": secrets.token_urlsafe(16),
        }
        signed: bytes = _JWT.encode({"alg": "HS256"}, claims, self._jwt_key)
        return signed.decode("ascii")

    def authenticate(self, credential: str | None) -> Principal | None:
        """The principal behind a bearer credential: the token, a JWT issued here or an API key.

        None for anything else, including expired or tampered JWTs, revoked keys and JWTs of
        users no longer configured.
        """
        if not credential:
            return None
        if _same(credential, self._token):
            return _TOKEN_PRINCIPAL
        if credential.startswith(API_KEY_PREFIX):
            stored = self._keys.find(hashlib.sha256(_utf8(credential)).hexdigest())
            return _key_principal(stored)
        if credential.count(".") == 2:
            return self._authenticate_jwt(credential)
        return None

    def create_api_key(self, name: str, role: Role = "approver") -> str:
        """Create a key named `name` and return it: the only time it is shown, as only its SHA-256 is kept."""
        if role not in ROLE_RANK:
            raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLE_RANK)}")
        key = API_KEY_PREFIX + secrets.token_urlsafe(32)
        self._keys.add(
            StoredApiKey(
                name=name,
                role=role,
                created_at=self._clock(),
                prefix=key[:8],
                sha256=hashlib.sha256(key.encode()).hexdigest(),
            )
        )
        return key

    def list_api_keys(self) -> list[dict[str, Any]]:
        """The keys as `name`, `role`, `created_at` (ISO 8601, UTC) and `prefix`; never the hash."""
        return [key.public() for key in self._keys.all()]

    def revoke_api_key(self, name: str) -> bool:
        """Delete the key named `name`; False when there is none. JWTs issued for it stop working too."""
        return self._keys.remove(name)

    def revoke_jwt(self, credential: str) -> bool:
        """Sign out a JWT issued here (a logout): refused from now on, also after a restart.

        False, and nothing stored, for anything that is not a valid JWT (the token, an API key).
        """
        claims = self._valid_jwt_claims(credential) if credential.count(".") == 2 else None
        if claims is None:
            return False
        self._revoked.revoke(claims["jti"], float(claims["exp"]))
        return True

    def _valid_jwt_claims(self, credential: str) -> dict[str, Any] | None:
        try:
            claims = _JWT.decode(credential, self._jwt_key, claims_options=_JWT_CLAIMS)
            claims.validate(now=self._clock())
        except (JoseError, ValueError):
            return None
        if not isinstance(claims["jti"], str) or self._revoked.is_revoked(claims["jti"]):
            return None
        return dict(claims)

    def _authenticate_jwt(self, credential: str) -> Principal | None:
        claims = self._valid_jwt_claims(credential)
        if claims is None:
            return None
        name, kind = claims["sub"], claims["kind"]
        if kind == "token":
            return _TOKEN_PRINCIPAL
        if kind == "user":
            # The role comes from the current config, so demoting or removing a user takes effect now.
            user = self._users.get(name) if isinstance(name, str) else None
            return None if user is None else Principal(name=user.username, role=user.role, kind="user")
        if kind == "api_key":
            return _key_principal(self._keys.named(name)) if isinstance(name, str) else None
        return None

    def _verify(self, password_hash: str, password: str) -> bool:
        if password_hash.startswith(_BCRYPT_PREFIXES):
            if bcrypt is None:
                return False
            try:
                return bool(bcrypt.checkpw(password.encode(), password_hash.encode()))
            except ValueError:  # bcrypt 5 refuses passwords over 72 bytes
                return False
        try:
            return bool(self._hasher.verify(password_hash, password))
        except (VerificationError, InvalidHashError):
            return False

    def _decoy(self) -> str:
        with self._decoy_lock:
            if self._decoy_hash is None:
                self._decoy_hash = self._hasher.hash(secrets.token_urlsafe(16))
            return self._decoy_hash


def hash_password(password: str) -> str:
    """An argon2id hash of `password` for `users:` in overseer.yaml (`overseer hash-password`)."""
    if not password:
        raise ValueError("the password is empty")
    return PasswordHasher().hash(password)


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach: `localhost`, 127.0.0.0/8 and ::1."""
    host = host.strip().removeprefix("[").removesuffix("]")
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def check_bind(host: str, *, token_configured: bool, users: list[UserConfig]) -> None:
    """Refuse to listen beyond this machine unless a credential was chosen on purpose.

    `token_configured`: OVERSEER_TOKEN was set explicitly (a generated token does not count).
    """
    if is_loopback(host) or token_configured or users:
        return
    raise AuthError(
        f"refusing to listen on {host or 'all interfaces'} without OVERSEER_TOKEN or users: "
        "set OVERSEER_TOKEN, or add users: to overseer.yaml (hash passwords with `overseer hash-password`), "
        "or listen on 127.0.0.1"
    )


def _same(given: str, expected: str) -> bool:
    # Bytes, not str: compare_digest raises TypeError on non-ASCII text.
    return hmac.compare_digest(_utf8(given), _utf8(expected))


def _utf8(text: str) -> bytes:
    # surrogatepass: a malformed credential is refused like any other, not turned into an error.
    return text.encode("utf-8", "surrogatepass")


def _key_principal(stored: StoredApiKey | None) -> Principal | None:
    if stored is None or stored.role not in ROLE_RANK:  # a hand-edited file fails closed
        return None
    return Principal(name=stored.name, role=stored.role, kind="api_key")
