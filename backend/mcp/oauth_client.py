"""A remote server's OAuth, as the pool uses it: signed-in requests, and no sign-in without a person.

The `mcp` SDK's `OAuthClientProvider` does the protocol: it attaches the access token and
refreshes it (with the resource indicator, RFC 8707). On a 401 it would run the whole sign-in
inline, sending a person to a browser and waiting; the pool connects in the background, where
nobody is there to send. So `PoolAuth` drives the SDK's flow only up to the request it signs,
sends that request itself, and on a 401 (after one forced refresh) stops: the caller gets the
401, and the server "needs sign-in" until someone signs in from the dashboard or the terminal
(backend/mcp/oauth_login.py). Sending the request outside the SDK's flow also keeps the flow's
lock from being held while a slow tool runs, which would serialise every call on the connection.
A 401 from a server whose protected-resource metadata now names another authorization server
than the one Overseer signed in at (SEP-2352) is said so, and its tokens are not refreshed at the
old one: only a new sign-in, with a new registration there, helps.

What the SDK keeps only in memory is kept in the vault and put back here: when the access token
expires, and the authorization server's metadata (without it, a refresh after a restart goes to
the MCP server's own `/token`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable

import httpx2
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.oauth2 import OAuthContext
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    handle_protected_resource_response,
    issuers_match,
    union_scopes,
)
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)

from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_step_up import note_step_up
from backend.mcp.oauth_store import OAuthVault, ServerTokenStorage

logger = logging.getLogger(__name__)

CLIENT_NAME = "Overseer"
REFRESH_EARLY = 60.0
"""Seconds before expiry at which a token is refreshed; a tenth of its lifetime when that is less."""
_SIGN_IN_STATUSES = (401,)
_DUE = 1.0
_DISCOVERY_TIMEOUT = 10.0
"""Seconds for reading a refusing server's protected-resource metadata (its authorization server may have moved)."""
"""An expiry long past that makes the SDK refresh (0 would read as "no expiry": never refresh)."""


def sign_in_hint(name: str) -> str:
    """How a person signs in to server `name`: said in statuses and in tool errors."""
    return f"sign in with \"Sign in\" on the Servers page, or run `overseer mcp login {name}`"


def client_metadata(config: McpServerConfig, redirect_uri: str | None) -> OAuthClientMetadata:
    """What Overseer registers as (RFC 7591), and the scopes it asks for."""
    oauth = config.oauth
    secret = oauth is not None and oauth.client_secret is not None
    return OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[redirect_uri] if redirect_uri else None,  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if secret else "none",
        scope=" ".join(oauth.scopes) if oauth is not None and oauth.scopes else None,
    )


def configured_client(config: McpServerConfig) -> OAuthClientInformationFull | None:
    """The client the config names (`oauth.client_id`), which then replaces dynamic registration."""
    oauth = config.oauth
    if oauth is None or oauth.client_id is None:
        return None
    secret = oauth.client_secret.get_secret_value() if oauth.client_secret is not None else None
    return OAuthClientInformationFull(
        client_id=oauth.client_id,
        client_secret=secret,
        token_endpoint_auth_method="client_secret_post" if secret else "none",
        redirect_uris=None,
        grant_types=["authorization_code", "refresh_token"],
    )


def client_metadata_url(config: McpServerConfig) -> str | None:
    """The client id the config publishes a metadata document for (`oauth.client_metadata_url`, CIMD).

    The SDK sends it instead of registering where the authorization server advertises
    `client_id_metadata_document_supported`; elsewhere it registers as before.
    """
    return config.oauth.client_metadata_url if config.oauth is not None else None


def configured_client_auth(metadata: OAuthMetadata | None) -> str:
    """How a configured client with a secret authenticates at the token endpoint (RFC 6749 2.3.1).

    `client_secret_post` while the authorization server lists it (or nothing is known about it:
    what Overseer always sent), else `client_secret_basic`, which RFC 8414 makes the default when
    the metadata lists no methods.
    """
    if metadata is None:
        return "client_secret_post"
    methods = metadata.token_endpoint_auth_methods_supported
    if methods is None or ("client_secret_basic" in methods and "client_secret_post" not in methods):
        return "client_secret_basic"
    return "client_secret_post"


class OverseerOAuthProvider(OAuthClientProvider):
    """The SDK's provider, with a configured client authenticating the way its server takes.

    A registered client's method is the one its registration returned; a configured one names
    none, so it is chosen from the authorization server's metadata just before each token
    request (the SDK reads it from the client record there), once discovery has found it.
    """

    def __init__(
        self,
        *,
        server_url: str,
        client_metadata: OAuthClientMetadata,
        storage: TokenStorage,
        configured: OAuthClientInformationFull | None,
        redirect_handler: Callable[[str], Awaitable[None]] | None = None,
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
        metadata_url: str | None = None,
    ) -> None:
        super().__init__(
            server_url=server_url,
            client_metadata=client_metadata,
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
            client_metadata_url=metadata_url,
        )
        self.configured = configured
        self.extra_scope: str | None = None
        """Scope asked for on top of what the flow chose (a step-up's, see backend/mcp/oauth_step_up.py)."""

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        # The flow chooses the scope from the server's challenge just before this, every time.
        self.context.client_metadata.scope = union_scopes(self.context.client_metadata.scope, self.extra_scope)
        return await super()._perform_authorization_code_grant()

    def _choose_client_auth(self) -> None:
        client, configured = self.context.client_info, self.configured
        if client is None or configured is None or not client.client_secret:
            return
        if client.client_id != configured.client_id:  # the SDK re-registered (another issuer): its own method
            return
        method = configured_client_auth(self.context.oauth_metadata)
        if client.token_endpoint_auth_method != method:
            self.context.client_info = client.model_copy(update={"token_endpoint_auth_method": method})

    async def _exchange_token_authorization_code(self, auth_code: str, code_verifier: str) -> httpx2.Request:
        self._choose_client_auth()
        return await super()._exchange_token_authorization_code(auth_code, code_verifier)

    async def _refresh_token(self) -> httpx2.Request:
        self._choose_client_auth()
        return await super()._refresh_token()


class ServerOAuthStorage:
    """The vault's storage for one server, where a configured client takes the place of a registration."""

    def __init__(self, vault: OAuthVault, name: str, config: McpServerConfig) -> None:
        self.stored = vault.storage_for(name)
        self.configured = configured_client(config)

    def __repr__(self) -> str:  # never the tokens or the secret
        return f"ServerOAuthStorage({self.stored.server!r})"

    async def get_tokens(self) -> OAuthToken | None:
        return await self.stored.get_tokens()

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self.stored.set_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        # The pool only refreshes (a sign-in is oauth_login.py's, with a storage of its own).
        return self.configured or await self.stored.get_refresh_client()

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.configured is None:  # a configured client lives in the config, its secret too
            await self.stored.set_client_info(client_info)


class PoolAuth(httpx2.Auth):
    """Signs a remote server's requests with its stored tokens, refreshing them; never asks a person.

    `on_sign_in_needed(reason)` is called when the server refuses us and no refresh helps.
    """

    requires_response_body = True  # the SDK reads token responses

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        vault: OAuthVault,
        *,
        on_sign_in_needed: Callable[[str], None],
    ) -> None:
        assert config.url is not None
        self.name = name
        self.vault = vault
        self.on_sign_in_needed = on_sign_in_needed
        self.hint = sign_in_hint(name)
        storage = ServerOAuthStorage(vault, name, config)
        self.provider = OverseerOAuthProvider(
            server_url=config.url,
            client_metadata=client_metadata(config, None),
            storage=storage,
            configured=storage.configured,
            # Known to the refresh too: a client id that is this URL is no other server's registration (SEP-2352).
            metadata_url=client_metadata_url(config),
        )
        _restore(self.provider, vault, name, storage)

    def __repr__(self) -> str:
        return f"PoolAuth({self.name!r})"

    async def step_up(self, challenged: str) -> str:
        """The server wants scope `challenged` for a request: keep it for the next sign-in; what to tell the caller."""
        return await note_step_up(self.vault, self.name, challenged, hint=self.hint)

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        context = self.provider.context
        reason = "HTTP 401: no sign-in that the server accepts (none yet, or it was revoked or has expired)"
        for forced in (False, True):
            if forced:
                if not context.can_refresh_token():
                    break
                # The server refused a token we thought good (revoked, or its clock is ahead):
                # one refresh settles whether a new sign-in is needed.
                context.token_expiry_time = _DUE
            elif _expiring(context.current_tokens, context.token_expiry_time):
                context.token_expiry_time = _DUE
            request.headers.pop("Authorization", None)
            # The SDK's flow loads the tokens, refreshes them if due, and signs the request; its
            # own requests (the refresh) go out from here, the signed request below.
            flow = self.provider.async_auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while outgoing is not request:
                    response = yield outgoing
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:  # the SDK ended without signing: send the request as it is
                pass
            finally:
                await flow.aclose()
            response = yield request
            if response.status_code not in _SIGN_IN_STATUSES or request.method == "DELETE":
                return  # a refused goodbye (ending the MCP session) says nothing of the calls
            if not forced and (moved := await moved_authorization_server(context, response)) is not None:
                # SEP-2352: the tokens are another server's now; refreshing them there settles nothing.
                reason = f"HTTP 401: the server now signs in at {moved}, no longer where Overseer signed in"
                break
        logger.debug("MCP server %r needs a sign-in (%s)", self.name, reason)  # its status says so
        self.on_sign_in_needed(reason)


async def moved_authorization_server(context: OAuthContext, refused: httpx2.Response) -> str | None:
    """The authorization server a server that refused our token names now, if not the one our sign-in is from.

    Read from its protected-resource metadata (RFC 9728), where the 401 points or at the well-known
    places; None when it names ours, cannot be read, or there is no sign-in to compare.
    """
    ours = context.oauth_metadata.issuer if context.oauth_metadata is not None else None
    if ours is None or context.current_tokens is None:
        return None
    where = extract_resource_metadata_from_www_auth(refused)
    try:
        async with httpx2.AsyncClient(timeout=_DISCOVERY_TIMEOUT) as client:
            for url in build_protected_resource_metadata_discovery_urls(where, context.server_url):
                found = await handle_protected_resource_response(await client.send(create_oauth_metadata_request(url)))
                if found is not None:
                    break
            else:
                return None
    except httpx2.HTTPError:
        return None
    named = [str(server) for server in found.authorization_servers]
    return None if any(issuers_match(server, str(ours)) for server in named) else named[0]


def _expiring(tokens: OAuthToken | None, expiry: float | None) -> bool:
    """Whether a token is so close to expiring that it should be refreshed before use."""
    if tokens is None or expiry is None:
        return False
    lifetime = float(tokens.expires_in) if tokens.expires_in is not None else REFRESH_EARLY * 10
    return expiry - time.time() < min(REFRESH_EARLY, lifetime / 10)


def _restore(provider: OAuthClientProvider, vault: OAuthVault, name: str, storage: ServerOAuthStorage) -> None:
    """Put back into the SDK's context what it forgets across restarts (read once per connection).

    A small local file read, as the runner's log open is: not worth a worker thread.
    """
    stored = vault.read(name)
    context = provider.context
    context.current_tokens = stored.tokens
    context.client_info = storage.configured or stored.refresh_client()
    context.token_expiry_time = stored.expires_at
    context.oauth_metadata = stored.oauth_metadata
    context.protected_resource_metadata = stored.resource_metadata
    if stored.resource_metadata is not None and stored.resource_metadata.authorization_servers:
        context.auth_server_url = str(stored.resource_metadata.authorization_servers[0])
