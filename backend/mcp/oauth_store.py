"""Where remote servers' OAuth tokens and client registrations are kept: encrypted, in the data dir.

One file per server (`<data dir>/oauth/<server>.json.enc`), each Fernet-encrypted (AES-128-CBC
with an HMAC) under one key in `<data dir>/oauth/key`, mode 0600. A stolen backup of the folder
without the key reads as noise; a file that does not decrypt (wrong key, tampered) reads as
"no tokens", so the server asks for a sign-in again instead of failing. Nothing here logs a
token or puts one in an exception message.

`ServerTokenStorage` is the `mcp` SDK's `TokenStorage` for one server, to give its
`OAuthClientProvider`.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import anyio.to_thread
from cryptography.fernet import Fernet, InvalidToken
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from pydantic import BaseModel, ValidationError

from backend.mcp.config import check_server_name
from backend.paths import private_dir, private_opener

logger = logging.getLogger(__name__)

KEY_FILE = "key"


class StoredSignIn(BaseModel):
    """What is kept for one server (the plaintext inside the encrypted file)."""

    tokens: OAuthToken | None = None
    expires_at: float | None = None
    """When the access token expires (epoch seconds): `expires_in` alone means nothing after a restart."""
    client_info: OAuthClientInformationFull | None = None
    oauth_metadata: OAuthMetadata | None = None
    """The authorization server's metadata (RFC 8414) as found at sign-in: where to refresh after a restart."""
    resource_metadata: ProtectedResourceMetadata | None = None
    """The server's protected-resource metadata (RFC 9728): the resource indicator a refresh names."""
    requested_scope: str | None = None
    """The scope the last sign-in asked for: a step-up it already covered is not worth another."""
    step_up_scope: str | None = None
    """The scope the next sign-in asks for, once the server refused a request for want of scope (SEP-835)."""

    def registration(self) -> OAuthClientInformationFull | None:
        """The client registration, bound to the authorization server it was made at (SEP-2352).

        The SDK stamps a registration with its issuer, and presents it to no other server. One
        kept before registrations carried it takes the issuer of the metadata kept beside it (found
        by the same sign-in), when that server has a registration endpoint: a registration Overseer
        made there. Without either it is bound to nothing, and the SDK reuses it anywhere.
        """
        client, metadata = self.client_info, self.oauth_metadata
        if client is None or client.issuer is not None or metadata is None or metadata.registration_endpoint is None:
            return client
        return client.model_copy(update={"issuer": str(metadata.issuer)})

    def refresh_client(self) -> OAuthClientInformationFull | None:
        """The registration a refresh of the stored tokens may present: none if it belongs to another
        authorization server than theirs (a sign-in at a new one registered, then did not finish)."""
        client, metadata = self.registration(), self.oauth_metadata
        if client is None or client.issuer is None or metadata is None:
            return client
        return client if issuers_match(client.issuer, str(metadata.issuer)) else None


class OAuthVault:
    """The encrypted token files of every remote server, under `folder` (created 0700)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._fernet: Fernet | None = None

    def _key(self) -> Fernet:
        if self._fernet is None:
            private_dir(self.folder)
            path = self.folder / KEY_FILE
            try:
                # O_EXCL: two hosts starting at once must not each write a key of their own.
                with open(path, "xb", opener=private_opener) as out:
                    out.write(Fernet.generate_key())
            except FileExistsError:
                pass
            self._fernet = Fernet(path.read_bytes().strip())
        return self._fernet

    def _path(self, server: str) -> Path:
        check_server_name(server)  # also keeps the name from walking out of the folder
        return self.folder / f"{server}.json.enc"

    def read(self, server: str) -> StoredSignIn:
        """What is stored for `server`; empty when nothing is, or it cannot be read."""
        path = self._path(server)
        try:
            data = self._key().decrypt(path.read_bytes())
            return StoredSignIn.model_validate_json(data)
        except FileNotFoundError:
            return StoredSignIn()
        except (InvalidToken, ValidationError, ValueError):
            logger.warning("the stored sign-in for MCP server %r cannot be read; a new sign-in is needed", server)
            return StoredSignIn()

    def write(self, server: str, stored: StoredSignIn) -> None:
        """Replace what is stored for `server`, atomically."""
        path = self._path(server)
        data = self._key().encrypt(stored.model_dump_json(exclude_none=True).encode())
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb", opener=private_opener) as out:
            out.write(data)
        os.replace(tmp, path)

    def forget(self, server: str) -> None:
        """Drop `server`'s tokens and registration (sign out)."""
        self._path(server).unlink(missing_ok=True)

    def has_tokens(self, server: str) -> bool:
        """Whether a sign-in is stored for `server` (whether or not it still works)."""
        return self.read(server).tokens is not None

    def storage_for(self, server: str) -> ServerTokenStorage:
        """The SDK `TokenStorage` of one server."""
        return ServerTokenStorage(self, server)


class ServerTokenStorage:
    """`mcp.client.auth.TokenStorage` over the vault, for one server; file I/O off the event loop."""

    def __init__(self, vault: OAuthVault, server: str) -> None:
        self.vault = vault
        self.server = server

    def __repr__(self) -> str:  # never the tokens, whatever prints this
        return f"ServerTokenStorage({self.server!r})"

    async def _read(self) -> StoredSignIn:
        return await anyio.to_thread.run_sync(self.vault.read, self.server)

    async def _update(self, **changes: object) -> None:
        def update() -> None:
            stored = self.vault.read(self.server)
            self.vault.write(self.server, stored.model_copy(update=changes))

        await anyio.to_thread.run_sync(update)

    async def get_tokens(self) -> OAuthToken | None:
        return (await self._read()).tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = None if tokens.expires_in is None else time.time() + int(tokens.expires_in)
        await self._update(tokens=tokens, expires_at=expires_at)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return (await self._read()).registration()

    async def get_refresh_client(self) -> OAuthClientInformationFull | None:
        """The registration the stored tokens may be refreshed with (see `StoredSignIn.refresh_client`)."""
        return (await self._read()).refresh_client()

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._update(client_info=client_info)

    async def set_discovery(
        self, oauth_metadata: OAuthMetadata | None, resource_metadata: ProtectedResourceMetadata | None
    ) -> None:
        """Keep what discovery found, which the SDK holds in memory only (see backend/mcp/oauth_client.py)."""
        await self._update(oauth_metadata=oauth_metadata, resource_metadata=resource_metadata)
