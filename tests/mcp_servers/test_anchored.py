"""A checked path is used without leaving its folder, even when a name on it is swapped (issue 13, item 4)."""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from tool_server_helpers import SECRET, Connect, text

from mcp_servers._shared.anchored import Anchored
from mcp_servers._shared.workspace import confine
from mcp_servers.file.reading import read_page
from mcp_servers.file.searching import find_by_glob, list_entries, search_contents
from mcp_servers.file.writing import edit_text, write_text


def checked(workspace: Path, path: str) -> Anchored:
    """What the server holds between its check and its use of `path`."""
    return Anchored.within(workspace, confine(workspace, path), path)


def swap_for_link(folder: Path, target: Path) -> None:
    """Put a symlink to `target` where `folder` was: the attacker's move inside the race window."""
    folder.rename(folder.with_name(folder.name + ".old"))
    folder.symlink_to(target, target_is_directory=True)


def exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (renameat2 RENAME_EXCHANGE): `a` always exists, as one or the other."""
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, rename_exchange = -100, 2
    if libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def test_a_write_refuses_a_folder_swapped_for_a_symlink_after_the_check(workspace: Path, outside: Path) -> None:
    target = checked(workspace, "sub/new.txt")
    swap_for_link(workspace / "sub", outside)
    with pytest.raises(ToolError, match="'sub' is now a symlink"):
        write_text(target, "planted")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_a_read_refuses_a_folder_swapped_for_a_symlink_after_the_check(workspace: Path, outside: Path) -> None:
    (workspace / "sub" / "secret.txt").write_text("inside\n")
    target = checked(workspace, "sub/secret.txt")
    swap_for_link(workspace / "sub", outside)
    with pytest.raises(ToolError, match="changed while it was being opened"):
        read_page(target, offset=0, limit=None)


def test_a_read_refuses_a_file_swapped_for_a_symlink_after_the_check(workspace: Path, outside: Path) -> None:
    target = checked(workspace, "a.txt")
    (workspace / "a.txt").unlink()
    (workspace / "a.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="'a.txt' is now a symlink"):
        read_page(target, offset=0, limit=None)


def test_an_edit_refuses_a_folder_swapped_after_the_check_and_changes_nothing_outside(
    workspace: Path, outside: Path
) -> None:
    (workspace / "sub" / "secret.txt").write_text("inside\n")
    target = checked(workspace, "sub/secret.txt")
    swap_for_link(workspace / "sub", outside)
    with pytest.raises(ToolError, match="changed while it was being opened"):
        edit_text(target, "TOP", "MINE")
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


def test_listing_and_searching_refuse_a_folder_swapped_after_the_check(workspace: Path, outside: Path) -> None:
    target = checked(workspace, "sub")
    swap_for_link(workspace / "sub", outside)
    for search in (
        lambda: list_entries(target),
        lambda: find_by_glob(workspace, target, "*"),
        lambda: search_contents(workspace, target, "SECRET", None),
    ):
        with pytest.raises(ToolError, match="changed while it was being opened"):
            search()


def test_a_missing_folder_on_the_way_is_named(workspace: Path) -> None:
    with pytest.raises(ToolError, match="no folder 'nope' on the way"):
        read_page(checked(workspace, "nope/x.txt"), offset=0, limit=None)


async def test_writes_racing_a_folder_swap_never_land_outside(
    connect_file: Connect, workspace: Path, outside: Path
) -> None:
    """The attack that put 7 of 147 writes outside: a folder flipped to a symlink and back, nonstop."""
    folder, link = workspace / "sub", workspace / "sub.link"
    link.symlink_to(outside, target_is_directory=True)
    done = threading.Event()

    def flip() -> None:
        while not done.is_set():
            exchange(folder, link)  # `sub` is now the symlink, then a folder again

    flipper = threading.Thread(target=flip)
    flipper.start()
    results = []
    try:
        async with connect_file() as client:
            for i in range(150):
                results.append(await client.call_tool("write_file", {"path": f"sub/w{i}.txt", "content": "x"}))
    finally:
        done.set()
        flipper.join(timeout=10)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    errors = {text(r).split(":", 1)[0] for r in results if r.is_error}
    assert all(r.is_error or text(r).startswith("wrote") for r in results)
    assert all("Error executing tool write_file" in e for e in errors), errors
