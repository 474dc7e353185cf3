"""Wrappers, git's global options, inner commands and inline code."""

from __future__ import annotations

import pytest

from backend.rules.shell_parse import Word
from backend.rules.shell_wrappers import (
    inner_commands,
    program_name,
    runs_inline_code,
    strip_git_globals,
    strip_wrapper,
)


def words(*texts: str) -> list[Word]:
    return [Word(t, t) for t in texts]


def stripped(*texts: str, strict: bool) -> list[str] | None:
    rest = strip_wrapper(words(*texts), strict=strict)
    return None if rest is None else [w.text for w in rest]


@pytest.mark.parametrize(
    ("command", "rest"),
    [
        (["timeout", "30", "npm", "test"], ["npm", "test"]),
        (["timeout", "--preserve-status", "-k", "5", "1.5m", "make"], ["make"]),
        (["time", "-p", "make"], ["make"]),
        (["nice", "-n", "10", "make"], ["make"]),
        (["nice", "-5", "make"], ["make"]),
        (["nohup", "make"], ["make"]),
        (["command", "-p", "make"], ["make"]),
        (["builtin", "echo", "x"], ["echo", "x"]),
    ],
)
def test_harmless_wrappers_are_stripped_for_allow_rules(command, rest):
    assert stripped(*command, strict=True) == rest


@pytest.mark.parametrize(
    "command",
    [
        ["timeout", "make"],
        ["time", "-o", "/etc/x", "make"],
        ["command", "-v", "make"],
        ["nohup"],
        ["sudo", "make"],
        ["env", "A=1", "make"],
        ["/usr/bin/timeout", "5", "make"],
    ],
)
def test_allow_rules_do_not_see_past_other_wrappers(command):
    assert stripped(*command, strict=True) is None


@pytest.mark.parametrize(
    ("command", "rest"),
    [
        (["sudo", "-u", "root", "-E", "rm", "x"], ["rm", "x"]),
        (["sudo", "--user", "root", "A=1", "rm"], ["rm"]),
        (["/usr/bin/env", "-i", "-u", "HOME", "A=1", "B=2", "rm"], ["rm"]),
        (["doas", "-u", "root", "rm"], ["rm"]),
        (["exec", "-a", "name", "rm"], ["rm"]),
        (["xargs", "-0", "-I", "{}", "rm", "{}"], ["rm", "{}"]),
        (["stdbuf", "-oL", "rm"], ["rm"]),
        (["time", "-o", "f", "rm"], ["rm"]),
        (["sudo", "--", "rm"], ["rm"]),
    ],
)
def test_deny_rules_see_past_privilege_and_environment_wrappers(command, rest):
    assert stripped(*command, strict=False) == rest


def test_program_name_drops_the_directory():
    assert [program_name(p) for p in ("/bin/rm", "./rm", "rm")] == ["rm", "rm", "rm"]


def test_git_global_options_are_skipped():
    assert strip_git_globals(["git", "-C", "dir", "--git-dir=.g", "-c", "k=v", "push"]) == ["git", "push"]
    assert strip_git_globals(["/usr/bin/git", "--no-pager", "log"]) == ["git", "log"]
    assert strip_git_globals(["git", "push"]) is None
    assert strip_git_globals(["hg", "-C", "x"]) is None


def test_shell_dash_c_finds_its_code_among_other_options():
    assert inner_commands(words("bash", "-o", "pipefail", "-ec", "rm x", "arg0")) == ["rm x"]
    assert inner_commands(words("sh", "-x", "script.sh")) == []
    assert inner_commands(words("su", "-", "root", "-c", "rm x")) == ["rm x"]


@pytest.mark.parametrize(
    ("texts", "inline"),
    [
        (["python", "-c", "x"], True),
        (["python3", "-u", "-c", "x"], True),
        (["python3", "-m", "pytest"], False),
        (["python3", "script.py", "-c", "x"], False),
        (["node", "--eval=x"], True),
        (["deno", "eval", "x"], True),
        (["ruby", "-e", "x"], True),
        (["php", "-r", "x"], True),
        (["pwsh", "-Command", "x"], True),
        (["git", "-c", "x"], False),
    ],
)
def test_inline_code_is_recognised(texts, inline):
    assert runs_inline_code(texts) is inline
