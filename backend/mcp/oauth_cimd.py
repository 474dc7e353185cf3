"""Overseer's Client ID Metadata Document: what a person publishes at `oauth.client_metadata_url`.

With Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP's SEP-991),
the client id is an https URL and the authorization server reads the client's metadata there
instead of keeping a registration. Overseer has no public https address of its own, so a person
who wants it publishes this document somewhere they control and names the URL in `oauth:`; the
`mcp` SDK then sends that URL as the client id wherever the authorization server advertises
`client_id_metadata_document_supported`, and registers dynamically (RFC 7591) elsewhere.

The document must list every redirect URI a sign-in uses, as the authorization server checks
the one it is sent against it: the dashboard's callback and the loopback one of `overseer mcp
login` (backend/mcp/oauth_loopback.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from backend.mcp.config import McpServerConfig, check_client_metadata_url
from backend.mcp.oauth_client import CLIENT_NAME
from backend.mcp.oauth_login import CALLBACK_PATH

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def dashboard_redirect_uri(dashboard_url: str) -> str:
    """The dashboard's callback (backend/api/oauth.py): where a sign-in begun on its Servers page returns."""
    return dashboard_url.rstrip("/") + CALLBACK_PATH


def loopback_redirect_uri(port: int | None) -> str:
    """The callback of `overseer mcp login` on `oauth.callback_port`; without one, the port-less
    form, which RFC 8252 (7.3) has an authorization server match at any port."""
    return f"http://127.0.0.1{f':{port}' if port else ''}{CALLBACK_PATH}"


def servers_using(url: str, servers: Mapping[str, McpServerConfig]) -> list[str]:
    """The names of the configured servers whose `oauth.client_metadata_url` is `url`."""
    return [
        name for name, config in servers.items() if config.oauth is not None and config.oauth.client_metadata_url == url
    ]


def configured_urls(servers: Mapping[str, McpServerConfig]) -> list[str]:
    """Every distinct `oauth.client_metadata_url` in the config, in order of appearance."""
    urls = [config.oauth.client_metadata_url for config in servers.values() if config.oauth is not None]
    return list(dict.fromkeys(url for url in urls if url is not None))


def redirect_uris(
    url: str,
    servers: Mapping[str, McpServerConfig],
    *,
    dashboard_urls: Iterable[str],
    callback_ports: Iterable[int] = (),
) -> list[str]:
    """Every redirect URI a sign-in with client id `url` may send: the dashboards' callbacks, then
    the terminal's on each `callback_port` its servers name (the port-less form for one without)."""
    using = [servers[name] for name in servers_using(url, servers)]
    ports: list[int | None] = list(callback_ports)
    ports += [config.oauth.callback_port for config in using if config.oauth is not None]
    if not ports:
        ports = [None]
    uris = [dashboard_redirect_uri(dashboard) for dashboard in dashboard_urls]
    uris += [loopback_redirect_uri(port) for port in ports]
    return list(dict.fromkeys(uris))


def client_metadata_document(url: str, redirect_uris: list[str]) -> dict[str, Any]:
    """The JSON to publish at `url`: Overseer as a public client (PKCE, no secret) of the code flow.

    `client_id` must be the URL itself (the authorization server checks it). `application_type`
    is `native` while every callback is on this machine, as a local app's are (SEP-837); a
    dashboard served at another host's address makes it `web`.
    """
    check_client_metadata_url(url)
    local = all(urlsplit(uri).hostname in {h.strip("[]") for h in _LOOPBACK_HOSTS} for uri in redirect_uris)
    return {
        "client_id": url,
        "client_name": CLIENT_NAME,
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native" if local else "web",
    }
