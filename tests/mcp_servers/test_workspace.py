"""Workspace root resolution and path confinement (mcp_servers/_shared/workspace.py)."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers._shared.workspace import WORKSPACE_META_KEY, confine, display_path, workspace_root


def test_relative_path_resolves_inside_the_root(workspace: Path) -> None:
    assert confine(workspace, "sub/b.txt") == workspace / "sub" / "b.txt"


def test_dot_dot_that_stays_inside_is_allowed(workspace: Path) -> None:
    assert confine(workspace, "sub/../a.txt") == workspace / "a.txt"


def test_empty_path_means_the_root(workspace: Path) -> None:
    assert confine(workspace, "") == workspace


def test_absolute_path_inside_the_root_is_allowed(workspace: Path) -> None:
    assert confine(workspace, str(workspace / "a.txt")) == workspace / "a.txt"


def test_name_that_merely_starts_with_dots_is_not_an_escape(workspace: Path) -> None:
    assert confine(workspace, "..notes.txt") == workspace / "..notes.txt"


def test_symlink_pointing_inside_resolves_to_its_target(workspace: Path) -> None:
    (workspace / "alias").symlink_to(workspace / "sub")
    assert confine(workspace, "alias/b.txt") == workspace / "sub" / "b.txt"


def test_path_not_yet_existing_inside_is_allowed(workspace: Path) -> None:
    assert confine(workspace, "new/dir/file.txt") == workspace / "new" / "dir" / "file.txt"


@pytest.mark.parametrize("user_path", ["../x", "/etc/passwd", "a/../../x", "//etc/passwd", "x\x00y"])
def test_escaping_paths_raise_tool_error(workspace: Path, user_path: str) -> None:
    with pytest.raises(ToolError):
        confine(workspace, user_path)


def test_sibling_folder_sharing_the_root_prefix_is_outside(workspace: Path) -> None:
    sibling = workspace.parent / (workspace.name + "_evil")
    sibling.mkdir()
    with pytest.raises(ToolError):
        confine(workspace, str(sibling / "x"))


def test_tilde_is_expanded_before_the_check(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(outside))
    with pytest.raises(ToolError):
        confine(workspace, "~/secret.txt")


def test_tilde_home_inside_the_workspace_is_allowed(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(workspace))
    assert confine(workspace, "~/a.txt") == workspace / "a.txt"


def test_tilde_of_unknown_user_is_refused_rather_than_taken_literally(workspace: Path) -> None:
    with pytest.raises(ToolError):
        confine(workspace, "~no_such_user_overseer/x")


def test_tilde_of_a_real_user_is_refused_even_when_it_leads_into_the_workspace(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `~root/...` meant the secret to the server and a harmless relative name to the rules.
    monkeypatch.setenv("HOME", str(workspace))
    with pytest.raises(ToolError, match="another user's home"):
        confine(workspace, f"~{getpass.getuser()}/a.txt")


def test_symlink_loop_is_refused(workspace: Path) -> None:
    (workspace / "loop_a").symlink_to(workspace / "loop_b")
    (workspace / "loop_b").symlink_to(workspace / "loop_a")
    with pytest.raises(ToolError):
        confine(workspace, "loop_a")


def test_standalone_server_ignores_meta_workspace(workspace: Path, outside: Path) -> None:
    meta = {WORKSPACE_META_KEY: str(outside)}
    assert workspace_root(workspace, meta, trust_meta=False) == workspace


def test_managed_server_takes_the_workspace_from_meta(workspace: Path, outside: Path) -> None:
    meta = {WORKSPACE_META_KEY: str(outside)}
    assert workspace_root(workspace, meta, trust_meta=True) == outside


def test_managed_server_without_meta_workspace_uses_its_root(workspace: Path) -> None:
    assert workspace_root(workspace, {"overseer/session_id": "s1"}, trust_meta=True) == workspace


@pytest.mark.parametrize("bad", ["relative/dir", 42, "/tmp/x\x00y", ""])
def test_managed_meta_workspace_must_be_an_absolute_path(workspace: Path, bad: object) -> None:
    with pytest.raises(ToolError):
        workspace_root(workspace, {WORKSPACE_META_KEY: bad}, trust_meta=True)


def test_missing_workspace_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ToolError):
        workspace_root(tmp_path / "missing", None, trust_meta=False)


def test_root_given_through_a_symlink_is_resolved(workspace: Path, tmp_path: Path) -> None:
    link = tmp_path / "ws_link"
    link.symlink_to(workspace)
    root = workspace_root(link, None, trust_meta=False)
    assert root == workspace
    assert confine(root, str(link / "a.txt")) == workspace / "a.txt"


def test_display_path_shows_a_line_break_in_a_name_escaped(workspace: Path) -> None:
    # Results are a path a line: a name must not start a line of its own.
    assert display_path(workspace, workspace / "a\nsecrets" / "k:1:x") == "a\\nsecrets/k:1:x"


def test_display_path_is_relative_to_the_root(workspace: Path) -> None:
    assert display_path(workspace, workspace / "sub" / "b.txt") == "sub/b.txt"
    assert display_path(workspace, workspace) == "."
