"""`overseer mcp`, `overseer mcp login`, `overseer mcp client-metadata` and `overseer mcp-config`:
Overseer as an MCP server for outside clients, a remote server's sign-in from the terminal, the
client metadata document to publish for remote sign-ins (CIMD), and the client's config snippet."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from backend.config import Settings

if TYPE_CHECKING:
    from backend.app.services import AppServices

SettingsOf = Callable[..., Settings]
"""The command line's settings for these arguments (backend/cli.py `_settings`), with overrides."""


async def run_mcp(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    """`overseer mcp`: Overseer as an MCP server over stdio, embedded or bridged to a running host."""
    if args.mcp_command == "login":
        return await _mcp_login(args, settings_of)
    if args.mcp_command == "client-metadata":
        return mcp_client_metadata(args, settings_of)
    if args.host_url:
        from backend.gateway.bridge import BridgeError, bridge

        if args.expose_tools:
            print("overseer mcp: --expose-tools applies to an embedded host; start the host with "
                  "`overseer serve --expose-tools` instead", file=sys.stderr)
            return 2
        if args.workspace:
            print("overseer mcp: --workspace applies to an embedded host; the running host works in "
                  "its own workspace", file=sys.stderr)
            return 2
        settings = settings_of(args)
        token = _host_token(settings)
        if token is None:
            print("overseer mcp: no token: set OVERSEER_TOKEN to the host's token or an API key",
                  file=sys.stderr)
            return 2
        try:
            await bridge(args.host_url, token)
        except BridgeError as exc:
            print(f"overseer mcp: {exc}", file=sys.stderr)
            return 2
        return 0
    from backend.api.local import host_with_local_api
    from backend.gateway.stdio import serve_embedded

    # Scheduled jobs and recovery belong to `overseer serve`, as for `overseer run`.
    settings = settings_of(args, scheduler_enabled=False, workspace=args.workspace)
    if settings.workspace is None:
        # A client starts its servers wherever it likes (Claude Desktop: `/`): the current
        # directory would make that the agents' workspace, where reading runs without asking.
        print(
            f"overseer mcp: no workspace: the agents would work in {Path.cwd()}, the folder this "
            "client started Overseer in. Name their folder with --workspace DIR, OVERSEER_WORKSPACE "
            "or `workspace:` in overseer.yaml; `overseer mcp-config` writes it into the client's config.",
            file=sys.stderr,
        )
        return 2

    @contextlib.asynccontextmanager
    async def embedded() -> AsyncIterator[AppServices]:
        async with host_with_local_api(settings, recover=False) as host:
            yield host.app_services

    await serve_embedded(embedded(), expose_tools=args.expose_tools or settings.expose_tools)
    return 0


async def _mcp_login(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    """`overseer mcp login NAME`: the OAuth sign-in from a terminal (backend/mcp/oauth_loopback.py)."""
    from backend.mcp.oauth_login import SignInFailed
    from backend.mcp.oauth_loopback import login_in_terminal
    from backend.mcp.oauth_store import OAuthVault

    settings = settings_of(args)
    config = settings.mcp_servers.get(args.name)
    if config is None or not config.signs_in_with_oauth:
        print(f"overseer mcp login: {args.name!r} is no remote MCP server that signs in with OAuth "
              "(an mcpServers entry with `type: http` or `sse`, a `url`, and no Authorization header)", file=sys.stderr)
        return 2
    # Where the pool of `overseer serve` reads sign-ins: next to its logs, in the data dir.
    vault = OAuthVault(settings.data_dir.expanduser() / "oauth")
    try:
        await login_in_terminal(args.name, config, vault)
    except SignInFailed as exc:
        print(f"overseer mcp login: {exc}", file=sys.stderr)
        return 1
    print(f"Signed in to {args.name!r} (kept encrypted in {vault.folder}). A running `overseer serve` uses it "
          "the next time it tries the server (within 30 s), or at once after Restart on the Servers page.")
    return 0


def mcp_client_metadata(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    """`overseer mcp client-metadata [URL]`: the client metadata document to publish at URL (CIMD).

    URL defaults to the one `oauth.client_metadata_url` names, when the config names exactly one.
    """
    from backend.mcp.oauth_cimd import client_metadata_document, configured_urls, redirect_uris, servers_using

    settings = settings_of(args)
    url = args.url
    if url is None:
        urls = configured_urls(settings.mcp_servers)
        if len(urls) != 1:
            found = f"the config names {len(urls)}: {', '.join(urls)}" if urls else "no server's `oauth:` names one"
            print(f"overseer mcp client-metadata: give the URL the document will be published at ({found})",
                  file=sys.stderr)
            return 2
        url = urls[0]
    local = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    dashboards = args.dashboard_url or [f"http://{f'[{local}]' if ':' in local else local}:{settings.port}"]
    uris = redirect_uris(url, settings.mcp_servers, dashboard_urls=dashboards, callback_ports=args.callback_port or ())
    try:
        document = client_metadata_document(url, uris)
    except ValueError as exc:
        print(f"overseer mcp client-metadata: {exc}", file=sys.stderr)
        return 2
    using = ", ".join(servers_using(url, settings.mcp_servers)) or "none yet (set `oauth.client_metadata_url` on one)"
    print(f"overseer mcp client-metadata: publish this at {url} (served as application/json); "
          f"servers using it: {using}", file=sys.stderr)
    print(json.dumps(document, indent=2))
    return 0


def _host_token(settings: Settings) -> str | None:
    """OVERSEER_TOKEN (or `token:` in the config), else the token a host keeps in the data dir."""
    from backend.auth import TOKEN_FILE

    if settings.token and settings.token.get_secret_value().strip():
        return settings.token.get_secret_value().strip()
    path = settings.data_dir.expanduser() / TOKEN_FILE
    return (path.read_text().strip() or None) if path.is_file() else None


def run_mcp_config(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    """`overseer mcp-config`: the mcpServers entry a client (Claude Desktop, Claude Code) needs."""
    from backend.gateway.client_config import client_config

    if args.host_url and args.workspace:
        print("overseer mcp-config: --workspace applies to an embedded host; the running host works in "
              "its own workspace", file=sys.stderr)
        return 2
    settings = settings_of(args, workspace=args.workspace)
    env: dict[str, str] = {}
    if args.host_url is None:
        # `overseer mcp` needs an explicit workspace: clients start servers in a folder of their
        # own (Claude Desktop: `/`), so the snippet pins one, and says which on stderr.
        env["OVERSEER_WORKSPACE"] = str(settings.resolved_workspace)
        print(f"overseer mcp-config: the agents' workspace is {env['OVERSEER_WORKSPACE']} "
              "(choose another with --workspace DIR)", file=sys.stderr)
        for name in ("OVERSEER_MODEL", "OVERSEER_API_BASE"):
            if os.environ.get(name):
                env[name] = os.environ[name]
    data_dir = Path(args.data_dir) if args.data_dir else None
    config = client_config(
        args.client, data_dir=data_dir, host_url=args.host_url, expose_tools=args.expose_tools, env=env
    )
    print(json.dumps(config, indent=2))
    return 0
