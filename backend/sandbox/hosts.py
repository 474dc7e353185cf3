"""Which hosts a sandboxed command may reach without asking: the egress proxy's allowlist.

An entry is an exact name (`registry.npmjs.org`, `localhost`), a subdomain wildcard
(`*.github.com`: any name below github.com but not github.com itself, as in Claude Code's
sandbox-runtime) or an IP address (`127.0.0.1`, `[::1]`), each optionally held to one port
(`github.com:443`, `[::1]:8080`). Names compare case-insensitively, a trailing dot ignored.

The decision is made on the name the command asked for, never on what it resolves to: an
allowlisted name that resolves to a loopback or private address is reached (tests point one at a
local server that way), and an address is reached only if it is listed as an address.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_MAX_NAME = 253
_IPV6 = "[::1] or [::1]:8080"
_EXAMPLES = (
    "a name (example.com), a wildcard (*.example.com) or an address (127.0.0.1, [::1]), "
    "each with an optional :port"
)


def normalize_host(host: str) -> str | None:
    """The canonical form of a host as a client names it (lower case, no trailing dot, an IP address
    in its compressed form and IPv6 without brackets), or None when it is neither a DNS name nor
    an IP address (a client's malformed or hostile input is never matched against a pattern)."""
    bracketed = host.startswith("[") and host.endswith("]")
    address = _ip(host[1:-1] if bracketed else host)
    if address is not None and (":" in address or not bracketed):
        return address
    if bracketed or not host.isascii():  # brackets hold only IPv6; names are ASCII (IDNA)
        return None
    name = host.lower().removesuffix(".")
    if not name or len(name) > _MAX_NAME:
        return None
    return name if all(_LABEL.fullmatch(label) for label in name.split(".")) else None


def _ip(text: str) -> str | None:
    try:
        return ipaddress.ip_address(text).compressed
    except ValueError:
        return None


@dataclass(frozen=True, kw_only=True)
class HostPattern:
    """One allowlist entry, parsed."""

    text: str
    """As written."""
    host: str
    """Normalized; for a wildcard, the domain below which it matches (`github.com`)."""
    wildcard: bool = False
    port: int | None = None
    """The one port it allows, or None for any."""

    def matches(self, host: str, port: int) -> bool:
        """Whether a normalized host (see normalize_host) and port fall under this entry."""
        if self.port is not None and port != self.port:
            return False
        if self.wildcard:
            return _ip(host) is None and host.endswith("." + self.host)
        return host == self.host


def parse_pattern(text: str) -> HostPattern:
    """Parse one allowlist entry; ValueError, saying what is wrong, for one that is not valid."""
    raw = text.strip()
    if not raw:
        raise ValueError("an empty host pattern; write " + _EXAMPLES)
    if "/" in raw or "@" in raw:
        raise ValueError(f"host pattern {text!r} looks like a URL; write only the host: " + _EXAMPLES)
    host, port = _split_port(raw, text)
    if "*" in host:
        return _wildcard(host, port, text)
    normalized = normalize_host(host)
    if normalized is None:
        raise ValueError(f"host pattern {text!r} is not a host name or IP address; write " + _EXAMPLES)
    return HostPattern(text=text, host=normalized, port=port)


def _split_port(raw: str, text: str) -> tuple[str, int | None]:
    if raw.startswith("["):
        host, bracket, rest = raw[1:].partition("]")
        if not bracket or not _is_ipv6(host) or (rest and not rest.startswith(":")):
            raise ValueError(f"host pattern {text!r}: brackets hold an IPv6 address, as in {_IPV6}")
        return "[" + host + "]", _port(rest[1:], text) if rest else None
    if raw.count(":") > 1:
        # `2001:db8::1:443` is itself a valid address: make the writer say which part is the port.
        raise ValueError(f"host pattern {text!r}: write an IPv6 address in brackets, as in {_IPV6}")
    host, colon, port = raw.partition(":")
    return host, _port(port, text) if colon else None


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _port(text: str, pattern: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 65535:
        raise ValueError(f"host pattern {pattern!r}: the port must be a number from 1 to 65535")
    return int(text)


def _wildcard(host: str, port: int | None, text: str) -> HostPattern:
    if host == "*":
        raise ValueError("host pattern '*' would allow every host; list the hosts instead")
    if not host.startswith("*.") or "*" in host[2:]:
        raise ValueError(f"host pattern {text!r}: a wildcard may only open a pattern, as in *.example.com")
    domain = normalize_host(host[2:])
    if domain is None or _ip(domain) is not None:
        raise ValueError(f"host pattern {text!r}: a wildcard must be followed by a domain name")
    if "." not in domain:
        raise ValueError(f"host pattern {text!r} is too broad: write a wildcard as *.example.com")
    return HostPattern(text=text, host=domain, wildcard=True, port=port)


class HostAllowlist:
    """The hosts (and ports) a session's commands may reach through the proxy without asking.

    Built from patterns (see the module doc), each checked at once: ValueError for one that is
    empty, malformed, a bare `*`, a wildcard anywhere but at the start, or a wildcard as broad as
    a top-level domain (`*.com`).
    """

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns: tuple[HostPattern, ...] = tuple(parse_pattern(p) for p in patterns)

    def allows(self, host: str, port: int) -> bool:
        """Whether a connection to `host`:`port`, host as the client named it, may go ahead unasked."""
        name = normalize_host(host)
        return name is not None and any(p.matches(name, port) for p in self.patterns)

    def __repr__(self) -> str:
        return f"HostAllowlist({[p.text for p in self.patterns]!r})"
