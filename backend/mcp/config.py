"""How one MCP server is launched: a Claude Desktop / `.mcp.json` entry plus Overseer's extras."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from backend.domain.tools import ServerType
from backend.sandbox.servers import ServerSandbox

MANAGED_ENV_VAR = "OVERSEER_MANAGED"
"""Set to "1" for servers the host manages, which then honour per-call `_meta` context."""

# Server names become part of tool names (`mcp__<server>__<tool>`), split on the first "__",
# so they must not contain "__"; the character set is what model APIs accept in tool names.
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


"""How the host reaches a server: a process of its own, Streamable HTTP, or the older HTTP+SSE."""

_STDIO_ONLY = ("command", "args", "env", "cwd")
_REMOTE_ONLY = ("url", "headers", "oauth")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class OAuthClientConfig(BaseModel):
    """`oauth:` of a remote server: who Overseer is to its authorization server (all optional).

    Without `client_id`, Overseer registers itself dynamically (RFC 7591) where the server allows
    it; a pre-registered client must list Overseer's redirect URIs: `<dashboard URL>/oauth/callback`
    and `http://127.0.0.1:<callback_port>/oauth/callback` (for `overseer mcp login`). With
    `client_metadata_url`, an authorization server that takes Client ID Metadata Documents gets
    that URL as the client id instead of a registration (`overseer mcp client-metadata` prints the
    document to publish there); one that does not still gets a registration.
    """

    model_config = ConfigDict(extra="forbid")

    client_id: str | None = None
    client_secret: SecretStr | None = None
    """Only with `client_id`; SecretStr, so no repr, log line or dump shows it."""
    scopes: list[str] | None = None
    """Scopes to ask for; default: what the server's 401 or metadata names."""
    callback_port: int | None = Field(default=None, ge=1, le=65535)
    """The loopback port `overseer mcp login` waits on; default: any free port (fine with dynamic registration)."""
    client_metadata_url: str | None = None
    """Where Overseer's client metadata document is published (https, with a path): its client id
    at an authorization server that advertises `client_id_metadata_document_supported`."""

    @model_validator(mode="after")
    def _client_named_once(self) -> OAuthClientConfig:
        if self.client_secret is not None and self.client_id is None:
            raise ValueError("`oauth.client_secret` needs `oauth.client_id`")
        if self.client_metadata_url is not None:
            if self.client_id is not None:
                raise ValueError(
                    "`oauth.client_metadata_url` and `oauth.client_id` exclude each other: each names the client"
                )
            check_client_metadata_url(self.client_metadata_url)
        return self


def check_client_metadata_url(url: str) -> None:
    """Raise ValueError unless `url` can be a client id (draft-ietf-oauth-client-id-metadata-document, 3).

    The authorization server fetches the document there, so it must be https on a host, with a
    path naming the document (a bare origin is refused), and no fragment.
    """
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError(f"`oauth.client_metadata_url` must be an https:// URL, got {url!r}")
    if parts.path in ("", "/"):
        raise ValueError(
            f"`oauth.client_metadata_url` needs a path naming the document (https://host/overseer.json), got {url!r}"
        )
    if parts.fragment or url.endswith("#"):
        raise ValueError(f"`oauth.client_metadata_url` must not have a #fragment, got {url!r}")


class McpServerConfig(BaseModel):
    """One MCP server, spelled as a Claude Desktop / Claude Code `mcpServers` entry.

    A stdio server has `command`, `args` and `env`; a remote one `type: http` (Streamable HTTP)
    or `type: sse`, a `url` and optional `headers`, exactly as Claude Code's `.mcp.json` writes
    them, so a pasted entry works unchanged. The rest are Overseer's optional extras.
    """

    # Unknown keys are refused so that a typo ("arg") fails loudly instead of being dropped.
    model_config = ConfigDict(extra="forbid")

    type: ServerType = "stdio"
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment, merged over a minimal safe base (PATH, HOME, ...), as Claude Desktop does."""
    cwd: str | None = None
    url: str | None = None
    """The endpoint of a remote server (`type: http` or `sse`)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers sent to a remote server; `${VAR}` is read from the environment when connecting."""
    oauth: OAuthClientConfig | None = None
    """How to sign in to a remote server that asks for OAuth (one without an Authorization header)."""

    start_timeout: float = Field(default=30, gt=0)
    """Seconds from launch (or connecting) until the server must have listed its tools."""
    call_timeout: float = Field(default=120, gt=0)
    """Seconds a tool call may take unless the call gives its own timeout."""
    disabled: bool = False
    sandbox: ServerSandbox | None = None
    """Run this stdio server confined (backend/sandbox/servers.py): the folders it may write and read."""
    managed: bool = False
    """True for Overseer's built-in servers: they get OVERSEER_MANAGED=1 and read `_meta`."""
    trust: Literal["trusted", "untrusted"] | None = None
    """Whether this server's results are text from outside (issue 34): `untrusted` results are tagged
    in the transcript and marked as data for the model. Unset: see `brings_outside_text`."""

    @model_validator(mode="before")
    @classmethod
    def _read_as_claude_code_does(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        # `memory: {disabled: true}` switches a built-in off: nothing is launched, so no command.
        if data.get("disabled") is True and "command" not in data and "url" not in data:
            return {**data, "command": "off"}
        # Claude Code refuses a `url` without a `type` (its schema has no default for remote
        # entries); say so here instead of guessing the transport.
        if "url" in data and "type" not in data:
            raise ValueError(
                "an entry with `url` needs `type: http` (Streamable HTTP) or `type: sse`, as Claude Code's .mcp.json has"
            )
        return data

    @model_validator(mode="after")
    def _fields_fit_the_type(self) -> McpServerConfig:
        given = self.model_fields_set
        if self.type == "stdio":
            if not self.command:
                raise ValueError("a stdio server needs `command`")
            wrong = [key for key in _REMOTE_ONLY if key in given]
        else:
            if not self.url:
                raise ValueError(f"a `type: {self.type}` server needs `url`")
            if not self.url.startswith(("http://", "https://")):
                raise ValueError(f"`url` must start with http:// or https://, got {self.url!r}")
            if self.managed:
                raise ValueError("a remote server cannot be one of Overseer's managed servers")
            wrong = [key for key in _STDIO_ONLY if key in given]
            self.resolved_headers()  # a missing variable is a configuration error, now
            if self.oauth is not None and not self.signs_in_with_oauth:
                raise ValueError("`oauth` and an Authorization header exclude each other: the header is the sign-in")
        if wrong:
            raise ValueError(f"{', '.join(map(repr, wrong))} not allowed in a `type: {self.type}` server")
        return self

    @property
    def is_remote(self) -> bool:
        """Whether the server is reached over HTTP rather than launched by the host."""
        return self.type != "stdio"

    @property
    def signs_in_with_oauth(self) -> bool:
        """Whether a 401 from this server means "sign in with OAuth": remote, no static Authorization header."""
        return self.is_remote and not any(name.lower() == "authorization" for name in self.headers)

    def resolved_headers(self) -> dict[str, str]:
        """The headers with `${VAR}` / `${VAR:-default}` read from the environment now.

        Read at connect time (not kept expanded), so a secret stays out of any config that is
        written back or shown; an unset variable without default raises ValueError naming it.
        """
        return {name: _expand(value, where=f"headers.{name}") for name, value in self.headers.items()}

    def process_env(self) -> dict[str, str]:
        """The extra environment the process gets, including the managed flag."""
        if self.managed:
            return {**self.env, MANAGED_ENV_VAR: "1"}
        return dict(self.env)


OUTSIDE_TEXT_BUILTINS: frozenset[str] = frozenset({"browser"})
"""Built-in servers whose results are outside text: the browser's pages."""
_FETCH_TOOL = re.compile(r"fetch|brows|web_?(search|page)|scrape|crawl|download|(read|get|open)_?url|http_?get", re.I)
"""A tool of a server not marked either way whose name says it brings in a page or a URL's text."""


def brings_outside_text(name: str, config: McpServerConfig, tool: str) -> bool:
    """Whether a result of `tool` on server `name` is outside text, not Overseer's or the user's.

    An explicit `trust:` decides. Unset: the browser built-in's results are (web pages), and so
    are those of any server's fetch-like tool (`fetch_url`, `web_search`, ...); other tools of a
    server a person configured are not, as its other rules and policies trust it. Mark a
    third-party server whose results carry text from elsewhere (issues, mail, documents)
    `trust: untrusted`; `trust: trusted` vouches for a fetch-like tool too.
    """
    if config.trust is not None:
        return config.trust == "untrusted"
    return (config.managed and name in OUTSIDE_TEXT_BUILTINS) or bool(_FETCH_TOOL.search(tool))


def _expand(value: str, *, where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = os.environ.get(name)
        if found is None:
            if default is None:
                raise ValueError(f"{where}: ${{{name}}} is not set in the environment")
            return default
        return found

    return _VAR.sub(replace, value)


def check_server_name(name: str) -> None:
    """Raise ValueError for a name that cannot appear in `mcp__<server>__<tool>`."""
    if not _SERVER_NAME.match(name) or "__" in name:
        raise ValueError(
            f"invalid MCP server name {name!r}: use 1-40 letters, digits, '-' or '_', without '__'"
        )


def parse_mcp_servers(data: Mapping[str, Any]) -> dict[str, McpServerConfig]:
    """Read servers from `{"mcpServers": {...}}` (a whole `.mcp.json`) or from the inner mapping."""
    entries = data.get("mcpServers", data)
    if not isinstance(entries, Mapping):
        raise TypeError("mcpServers must be a mapping of server name to server entry")
    servers: dict[str, McpServerConfig] = {}
    for name, entry in entries.items():
        check_server_name(name)
        servers[name] = McpServerConfig.model_validate(entry)
    return servers


BUILTIN_SERVERS: tuple[str, ...] = ("file", "shell", "browser", "memory", "cron", "invoke_agent")
"""Overseer's own tool servers, each `python -m mcp_servers.<name>`."""

def check_not_builtin(name: str, config: McpServerConfig) -> None:
    """Raise ValueError when a person's server takes a built-in server's name.

    Rules, policies and modes trust the built-ins' tools by name (`mcp__memory__memory_save`
    runs without asking), so a third-party server under that name would inherit that trust.
    The one use of a built-in's name is to switch it off: `memory: {disabled: true}`.
    """
    if name not in BUILTIN_SERVERS or config.disabled:
        return
    raise ValueError(
        f"a server named {name!r} would take the place of Overseer's built-in {name} server, whose "
        f"tools rules, policies and modes trust by name (mcp__{name}__...). "
        f"Rename yours, e.g. to '{name}-server' (its tools become mcp__{name}-server__<tool>, "
        f"with no trust of their own until you give them rules or policies); "
        f"to switch the built-in off instead, write `{name}: {{disabled: true}}`"
    )


HOST_CLIENT_SERVERS: frozenset[str] = frozenset({"cron", "invoke_agent"})
"""Built-in servers that are thin clients of the host's HTTP API."""

LONG_CALL_TIMEOUT = 24 * 3600.0
"""invoke_agent waits for a whole child run, approvals included: its own limits bound it, not ours."""


@dataclass(frozen=True, kw_only=True)
class HostApi:
    """Where the host's HTTP API is and the token that opens it, for servers that call back."""

    url: str
    token: str


def builtin_servers(
    *,
    root: Path,
    python: str = sys.executable,
    host_api: HostApi | None = None,
    read_roots: Sequence[Path] = (),
) -> dict[str, McpServerConfig]:
    """Overseer's own servers, run with this interpreter.

    `root` is the default workspace they serve; per call, the host's `_meta` overrides it.
    Servers that call the host back get its URL and token in their environment (never argv).
    The file server may also read (never write) each of `read_roots`: the skill folders.
    """
    servers: dict[str, McpServerConfig] = {}
    for name in BUILTIN_SERVERS:
        env: dict[str, str] = {}
        if name in HOST_CLIENT_SERVERS and host_api is not None:
            env = {"OVERSEER_HOST_URL": host_api.url, "OVERSEER_TOKEN": host_api.token}
        args = ["-m", f"mcp_servers.{name}", "--root", str(root)]
        if name == "file":
            for read_root in read_roots:
                args += ["--read-root", str(read_root)]
        servers[name] = McpServerConfig(
            command=python,
            args=args,
            env=env,
            managed=True,
            call_timeout=LONG_CALL_TIMEOUT if name == "invoke_agent" else 120,
        )
    return servers
