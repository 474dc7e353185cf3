"""Star-only globs."""

from __future__ import annotations

import re

from backend.rules.globbing import compile_star, star_regex


def test_star_is_the_only_wildcard():
    assert compile_star("get_*").fullmatch("get_issue")
    assert not compile_star("a?c").fullmatch("abc")
    assert compile_star("a[b]").fullmatch("a[b]")


def test_star_replacement_can_stay_inside_a_label():
    assert not re.fullmatch(star_regex("example.*", star="[^.]*"), "example.evil.com")


def test_escapes_give_literal_stars_and_backslashes():
    source = star_regex("a\\*b\\\\c\\d", escapes=True)
    assert re.fullmatch(source, "a*b\\c\\d")
    assert not re.fullmatch(source, "axb\\c\\d")
