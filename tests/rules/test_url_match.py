"""`domain:` patterns and URL hosts."""

from __future__ import annotations

import pytest

from backend.rules.url_match import DomainPattern, url_host


@pytest.mark.parametrize(
    ("pattern", "host", "expected"),
    [
        ("example.com", "example.com", True),
        ("example.com", "www.example.com", False),
        ("*.example.com", "docs.example.com", True),
        ("*.example.com", "a.b.example.com", True),
        ("*.example.com", "example.com", False),
        ("*.example.com", "evilexample.com", False),
        ("example.*", "example.org", True),
        ("example.*", "example.evil.com", False),
        ("api-*.example.com", "api-eu.example.com", True),
        ("api-*.example.com", "api-eu.evil.example.com", False),
        ("EXAMPLE.com", "example.com", True),
        ("example.com.", "example.com", True),
        ("*", "anything.at.all", True),
    ],
)
def test_domain_pattern_labels(pattern, host, expected):
    assert DomainPattern.parse(f"domain:{pattern}").matches(host) is expected


@pytest.mark.parametrize("spec", ["example.com", "domain:", "domain:exa mple.com", "domain:a/b"])
def test_malformed_domain_specifier_is_refused(spec):
    with pytest.raises(ValueError):
        DomainPattern.parse(spec)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Example.COM/path", "example.com"),
        ("http://user:pw@example.com:8080/x", "example.com"),
        ("https://example.com./", "example.com"),
        ("https://bücher.de/", "xn--bcher-kva.de"),
        ("https://[::1]:80/", "::1"),
    ],
)
def test_url_host_is_normalised(url, host):
    assert url_host(url) == host


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,hi",
        "example.com/no-scheme",
        "https://evil.com\\@example.com/",
        "https://exa mple.com/",
        "https://example.com\t/",
        "https://%65xample.com/",
        "https://example.com:99999/",
        "https:///path-only",
        None,
        42,
    ],
)
def test_url_host_refuses_what_cannot_be_told_safely(url):
    assert url_host(url) is None
