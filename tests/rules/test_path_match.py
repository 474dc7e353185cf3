"""Path patterns: anchors, gitignore globs, normalisation, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.rules.path_match import PathPattern, is_inside, path_candidates

REPO = Path("/repo")


def matches(pattern: str, path: str, **kwargs: bool) -> bool:
    return PathPattern.parse(pattern).matches(path, workspace=REPO, **kwargs)


@pytest.mark.parametrize(
    ("pattern", "anchor"),
    [
        ("//etc/**", "absolute"),
        ("~/.ssh/**", "home"),
        ("/src/**", "workspace"),
        ("./src/**", "workspace"),
        ("src/**", "workspace"),
        ("src/", "anywhere"),
        (".env", "anywhere"),
        ("*.pem", "anywhere"),
    ],
)
def test_pattern_anchor_follows_its_prefix(pattern, anchor):
    assert PathPattern.parse(pattern).anchor == anchor


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/*.py", "/repo/src/a.py", True),
        ("src/*.py", "/repo/src/pkg/a.py", False),
        ("src/**/*.py", "/repo/src/pkg/deep/a.py", True),
        ("src/**", "/repo/src/a/b/c", True),
        ("src/**", "/repo/lib/src/a", False),
        ("/src/**", "/repo/src/a", True),
        ("./src/**", "/repo/src/a", True),
        ("src/**", "/elsewhere/src/a", False),
        (".env", "/repo/.env", True),
        (".env", "/repo/a/b/.env", True),
        (".env", "/repo/.env.local", False),
        ("//etc/**", "/etc/passwd", True),
        ("//etc/**", "/repo/etc/passwd", False),
        ("build/", "/repo/build/out.o", True),
    ],
)
def test_gitignore_globs_match_relative_to_the_anchor(pattern, path, expected):
    assert matches(pattern, path) is expected


def test_home_anchor_uses_the_current_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert matches("~/.aws/**", f"{tmp_path}/.aws/credentials")
    assert not matches("~/.aws/**", "/repo/.aws/credentials")


def test_bare_name_matches_outside_the_workspace_only_for_deny_and_ask():
    assert not matches(".env", "/home/u/other/.env")
    assert matches(".env", "/home/u/other/.env", everywhere=True)


def test_directory_reads_match_patterns_covering_the_directory_contents():
    assert matches("secrets/**", "/repo/secrets", as_dir=True)
    assert not matches("secrets/**", "/repo/secrets")
    assert matches("**", "/repo", as_dir=True)
    assert not matches("*.pem", "/repo/keys", as_dir=True)


def test_gitignore_special_leading_characters_are_literal():
    assert matches("#notes", "/repo/#notes")


@pytest.mark.parametrize("text", ["", "   ", "../up/**", "src/../../x", "a\\"])
def test_unusable_path_pattern_is_refused(text):
    with pytest.raises(ValueError):
        PathPattern.parse(text)


def test_candidates_resolve_dot_dot_and_relative_paths():
    assert path_candidates("src/../.env", REPO) == ["/repo/.env"]
    assert path_candidates("/etc/../etc/passwd", REPO) == ["/etc/passwd"]
    assert path_candidates("//etc/passwd", REPO) == ["/etc/passwd"]


def test_candidates_include_the_home_reading_of_a_tilde(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert f"{tmp_path}/.ssh/id" in (path_candidates("~/.ssh/id", REPO) or [])


def test_a_tilde_user_path_has_no_candidates_so_deny_rules_fail_closed(monkeypatch, tmp_path):
    # The file server refuses `~user` too (shared/home.py, one meaning for both).
    monkeypatch.setenv("HOME", str(tmp_path))
    assert path_candidates("~root/ws/secrets/key", REPO) is None
    assert path_candidates("~", REPO) is not None


def test_candidates_include_the_symlink_target(tmp_path):
    (tmp_path / "target").mkdir()
    os.symlink(tmp_path / "target", tmp_path / "link")
    found = path_candidates("link/file", tmp_path) or []
    assert set(found) == {f"{tmp_path}/link/file", f"{os.path.realpath(tmp_path)}/target/file"}


@pytest.mark.parametrize("value", [None, "", 3, ["a"], "a\x00b"])
def test_unusable_path_argument_gives_no_candidates(value):
    assert path_candidates(value, REPO) is None


def test_workspace_reached_through_a_symlink_still_anchors_patterns(tmp_path):
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    os.symlink(real, tmp_path / "ws")
    pattern = PathPattern.parse("src/**")
    for candidate in path_candidates("src/a.py", tmp_path / "ws") or []:
        assert pattern.matches(candidate, workspace=tmp_path / "ws")


def test_is_inside_accepts_either_spelling_of_the_directory(tmp_path):
    os.symlink(tmp_path, tmp_path.parent / f"{tmp_path.name}-link")
    link = tmp_path.parent / f"{tmp_path.name}-link"
    try:
        assert is_inside(f"{os.path.realpath(tmp_path)}/x", link)
        assert not is_inside("/etc/passwd", link)
    finally:
        link.unlink()
