"""`domain:host` specifiers (WebFetch / browser navigate) and the host of a URL."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from backend.rules.globbing import star_regex

DOMAIN_PREFIX = "domain:"

_PATTERN_CHARS = re.compile(r"^[a-z0-9*._:\[\]-]+$")
_HOST_CHARS = re.compile(r"^[a-z0-9._:-]+$")
_HAS_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class DomainPattern:
    """A host glob from `domain:<host>`: case-insensitive.

    `*.example.com` matches any subdomain but not `example.com` itself; any other `*` stays
    inside one label, so `example.*` never matches `example.evil.com`. A lone `*` is any host.
    """

    host: str
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        host = self.host
        if host == "*":
            source = ".+"
        elif host.startswith("*."):
            source = r"(?:[^.]+\.)+" + star_regex(host[2:], star="[^.]*")
        else:
            source = star_regex(host, star="[^.]*")
        object.__setattr__(self, "_regex", re.compile(source))

    @classmethod
    def parse(cls, specifier: str) -> DomainPattern:
        """`domain:*.example.com` -> pattern; ValueError for anything else."""
        if not specifier.startswith(DOMAIN_PREFIX):
            raise ValueError(f"expected {DOMAIN_PREFIX}<host>, got {specifier!r}")
        host = specifier[len(DOMAIN_PREFIX) :].strip().lower().rstrip(".")
        if not host or not _PATTERN_CHARS.match(host):
            raise ValueError(f"not a host pattern: {specifier!r}")
        return cls(host)

    def matches(self, host: str) -> bool:
        """Whether a normalised host (see `url_host`) matches."""
        return self._regex.fullmatch(host) is not None


def url_host(url: object) -> str | None:
    """The lower-cased host a URL points at, or None when it cannot be told safely.

    Refuses what browsers and `urllib` read differently (backslashes, whitespace, control
    characters, percent-encoded hosts) and URLs without an authority (`javascript:`, `data:`).
    """
    if not isinstance(url, str) or not _HAS_AUTHORITY.match(url):
        return None
    if any(ch == "\\" or ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    host = host.lower()
    if not _HOST_CHARS.match(host):
        return None
    return host
