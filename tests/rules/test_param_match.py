"""`param:value-glob` specifiers."""

from __future__ import annotations

import pytest

from backend.rules.param_match import ParamPattern


def test_param_glob_matches_the_named_argument():
    pattern = ParamPattern.parse("repo:acme/*")
    assert pattern.match({"repo": "acme/site"}) == "match"
    assert pattern.match({"repo": "other/acme/site"}) == "miss"


def test_omitted_argument_is_a_miss():
    assert ParamPattern.parse("repo:*").match({"title": "x"}) == "miss"


def test_scalars_are_compared_as_json_text():
    assert ParamPattern.parse("draft:true").match({"draft": True}) == "match"
    assert ParamPattern.parse("count:1*").match({"count": 12}) == "match"


def test_structured_value_or_odd_arguments_cannot_be_checked():
    assert ParamPattern.parse("labels:bug").match({"labels": ["bug"]}) == "unchecked"
    assert ParamPattern.parse("labels:bug").match("not a dict") == "unchecked"


def test_value_may_hold_colons():
    assert ParamPattern.parse("url:https://x.com/*").match({"url": "https://x.com/a"}) == "match"


@pytest.mark.parametrize("spec", ["novalue", ":x", "1abc:x"])
def test_malformed_param_specifier_is_refused(spec):
    with pytest.raises(ValueError):
        ParamPattern.parse(spec)
