"""The egress proxy's allowlist: which hosts and ports a sandboxed command reaches without asking."""

from __future__ import annotations

import pytest

from backend.sandbox.hosts import HostAllowlist, normalize_host

ALLOWLIST = HostAllowlist(
    ["registry.npmjs.org", "*.github.com", "pypi.org:443", "127.0.0.1", "[::1]:8080", "localhost"]
    + ["Example.COM."]
)


@pytest.mark.parametrize(
    ("host", "port"),
    [
        ("registry.npmjs.org", 443),
        ("registry.npmjs.org", 80),
        ("api.github.com", 443),
        ("a.b.github.com", 22),
        ("pypi.org", 443),
        ("127.0.0.1", 5000),
        ("::1", 8080),
        ("[::1]", 8080),
        ("0:0:0:0:0:0:0:1", 8080),
        ("localhost", 3000),
        ("REGISTRY.NPMJS.ORG", 443),
        ("registry.npmjs.org.", 443),
        ("example.com", 443),
    ],
)
def test_a_listed_host_is_allowed(host: str, port: int):
    assert ALLOWLIST.allows(host, port)


@pytest.mark.parametrize(
    ("host", "port"),
    [
        ("github.com", 443),  # a wildcard covers what is below the domain, not the domain itself
        ("evilgithub.com", 443),
        ("github.com.evil.net", 443),
        ("npmjs.org", 443),
        ("pypi.org", 80),  # held to port 443
        ("::1", 8081),
        ("127.0.0.2", 80),
        ("localhost.localdomain", 80),
        ("", 443),
        ("api.github.com\x00.evil", 443),
        ("api github.com", 443),
    ],
)
def test_a_host_off_the_allowlist_is_not_allowed(host: str, port: int):
    assert not ALLOWLIST.allows(host, port)


def test_an_empty_allowlist_allows_nothing():
    assert not HostAllowlist().allows("localhost", 80)


def test_the_decision_is_made_on_the_name_asked_for_not_its_address():
    # localhost is listed; its address is not, so asking by address is a different request.
    assert HostAllowlist(["localhost"]).allows("localhost", 80)
    assert not HostAllowlist(["localhost"]).allows("127.0.0.1", 80)


def test_a_wildcard_never_matches_an_ip_address():
    assert not HostAllowlist(["*.0.0.1.example.com"]).allows("127.0.0.1", 80)


@pytest.mark.parametrize(
    "pattern",
    [
        "",
        "   ",
        "*",
        "*:443",
        "*.com",
        "api.*.github.com",
        "github.*",
        "*github.com",
        "**.github.com",
        "https://github.com",
        "github.com/path",
        "github.com:0",
        "github.com:65536",
        "github.com:https",
        "github.com:",
        "::1",
        "2001:db8::1:443",
        "[github.com]",
        "[::1]8080",
        "bad_host name",
        "ex\u00e4mple.com",
    ],
)
def test_an_invalid_or_too_broad_pattern_is_refused_at_construction(pattern: str):
    with pytest.raises(ValueError):
        HostAllowlist([pattern])


def test_a_pattern_may_hold_a_wildcard_to_one_port():
    allow = HostAllowlist(["*.example.com:8443"])
    assert allow.allows("a.example.com", 8443)
    assert not allow.allows("a.example.com", 443)


@pytest.mark.parametrize(
    ("host", "normalized"),
    [
        ("Example.COM.", "example.com"),
        ("[::1]", "::1"),
        ("0:0::1", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("[127.0.0.1]", None),
        ("exa mple.com", None),
        ("a..b", None),
        (".", None),
        ("-bad.com", None),
        ("x" * 64 + ".com", None),
    ],
)
def test_a_requested_host_is_normalized_or_rejected(host: str, normalized: str | None):
    assert normalize_host(host) == normalized
