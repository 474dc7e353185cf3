"""Commands decided only when they run: holes in templates, and which patterns may fill them."""

from __future__ import annotations

import pytest

from backend.rules.shell_match import analyse_command
from backend.rules.shell_unknown import ANY, MAX_TEMPLATE, NAME, Unknown, may_match


def unknown(*pieces: str | object) -> Unknown:
    template: list[object] = []
    for piece in pieces:
        template += list(piece) if isinstance(piece, str) else [piece]
    return Unknown("test", (tuple(template),))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "pieces", "matches"),
    [
        ("rm *", (ANY, "v"), True),
        ("rm *", ("echo", ANY), False),
        ("git push *", ("git", ANY, "origin"), True),
        ("git push *", ("git status", ANY), False),
        ("git * main", ("git push ", ANY), True),
        ("rm", ("r", NAME), True),
        ("ls /etc/*", ("ls ", NAME, ".py"), False),
        ("ls /etc/*", ("ls ", ANY, ".py"), True),
        ("*", ("anything",), True),
        ("rm -rf \\*", ("rm -rf ", NAME), True),
    ],
)
def test_a_pattern_may_match_when_some_filling_of_the_holes_matches_it(pattern, pieces, matches):
    assert may_match(pattern, unknown(*pieces)) is matches


def test_a_glob_hole_never_stands_for_a_slash():
    assert not may_match("/bin/rm", unknown("/", NAME, "rm"))
    assert may_match("/bin/rm", unknown("/", ANY, "rm"))


def test_a_template_too_long_to_compare_may_match_anything():
    assert may_match("rm *", unknown("echo ", "x" * (MAX_TEMPLATE + 1), ANY))


def test_an_expansion_may_vanish_with_its_spaces():
    [part] = analyse_command("$empty rm v").parts
    assert any(may_match("rm *", u) for u in part.unknowns)


def test_a_quoted_star_does_not_bring_an_unrelated_command_under_a_deny_rule():
    [part] = analyse_command("echo 'a*b'").parts
    assert not any(may_match("rm *", u) for u in part.unknowns)
