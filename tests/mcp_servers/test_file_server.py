"""The file tool server (mcp_servers/file): behaviour in process, the escape corpus, one stdio boundary."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from tool_server_helpers import REPO_ROOT, SECRET, Connect, text

from mcp_servers._shared.limits import READ_PAGE_BYTES
from mcp_servers.file import searching
from mcp_servers.file.server import create_server as create_file_server

# ---------------------------------------------------------------- read_file


async def test_read_file_returns_the_whole_small_file(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": "a.txt"})
    assert not result.is_error
    assert text(result) == "hello\nworld\n"


async def test_read_file_pages_by_line_offset_and_limit(connect_file: Connect, workspace: Path) -> None:
    (workspace / "lines.txt").write_text("".join(f"line {i}\n" for i in range(10)))
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": "lines.txt", "offset": 3, "limit": 2})
    body, note = text(result).rsplit("\n", 1)
    assert body == "line 3\nline 4"
    assert "offset=5" in note


async def test_read_file_truncates_at_the_page_size_and_the_offset_continues(
    connect_file: Connect, workspace: Path
) -> None:
    line = "x" * 99 + "\n"  # 100 bytes
    total_lines = 2 * READ_PAGE_BYTES // 100 + 7
    (workspace / "big.txt").write_text(line * total_lines)
    async with connect_file() as client:
        first = await client.call_tool("read_file", {"path": "big.txt"})
        page_lines = READ_PAGE_BYTES // 100
        assert text(first).count(line) == page_lines
        assert f"offset={page_lines}" in text(first).splitlines()[-1]
        seen = page_lines
        while seen < total_lines:
            page = await client.call_tool("read_file", {"path": "big.txt", "offset": seen})
            assert not page.is_error
            seen += text(page).count(line)
    assert seen == total_lines
    assert "offset=" not in text(page)


async def test_read_file_cuts_a_single_line_longer_than_a_page_and_moves_on(
    connect_file: Connect, workspace: Path
) -> None:
    (workspace / "minified.js").write_text("y" * (READ_PAGE_BYTES * 2) + "\nnext\n")
    async with connect_file() as client:
        first = await client.call_tool("read_file", {"path": "minified.js"})
        second = await client.call_tool("read_file", {"path": "minified.js", "offset": 1})
    assert text(first).splitlines()[0] == "y" * READ_PAGE_BYTES
    assert "offset=1" in text(first)
    assert text(second) == "next\n"


async def test_read_file_refuses_a_binary_file(connect_file: Connect, workspace: Path) -> None:
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": "image.png"})
    assert result.is_error
    assert "binary" in text(result)


async def test_read_file_refuses_a_directory(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": "sub"})
    assert result.is_error
    assert "list_dir" in text(result)


async def test_read_file_of_a_missing_file_is_an_error(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": "nope.txt"})
    assert result.is_error


async def test_read_file_offset_past_the_end_is_an_error(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": "a.txt", "offset": 10})
    assert result.is_error


async def test_read_file_rejects_a_negative_offset(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": "a.txt", "offset": -1})
    assert result.is_error


async def test_read_file_of_an_empty_file_says_it_is_empty(connect_file: Connect, workspace: Path) -> None:
    (workspace / "empty.txt").touch()
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": "empty.txt"})
    assert not result.is_error
    assert text(result) == "(empty file)"


# ---------------------------------------------------------------- write_file / edit_file


async def test_write_file_creates_parent_folders_and_reports_bytes(
    connect_file: Connect, workspace: Path
) -> None:
    content = "héllo\r\nworld"
    async with connect_file() as client:
        result = await client.call_tool("write_file", {"path": "new/deep/f.txt", "content": content})
    assert not result.is_error
    assert (workspace / "new" / "deep" / "f.txt").read_bytes() == content.encode("utf-8")
    assert str(len(content.encode("utf-8"))) in text(result)


async def test_write_file_replaces_an_existing_file(connect_file: Connect, workspace: Path) -> None:
    async with connect_file() as client:
        await client.call_tool("write_file", {"path": "a.txt", "content": "replaced"})
    assert (workspace / "a.txt").read_text() == "replaced"


async def test_write_file_onto_a_directory_is_an_error(connect_file: Connect, workspace: Path) -> None:
    async with connect_file() as client:
        result = await client.call_tool("write_file", {"path": "sub", "content": "x"})
    assert result.is_error
    assert (workspace / "sub").is_dir()


async def test_edit_file_replaces_the_unique_match(connect_file: Connect, workspace: Path) -> None:
    async with connect_file() as client:
        result = await client.call_tool(
            "edit_file", {"path": "a.txt", "old_text": "world", "new_text": "there"}
        )
    assert not result.is_error
    assert (workspace / "a.txt").read_text() == "hello\nthere\n"


async def test_edit_file_with_no_match_fails_and_leaves_the_file(
    connect_file: Connect, workspace: Path
) -> None:
    async with connect_file() as client:
        result = await client.call_tool("edit_file", {"path": "a.txt", "old_text": "absent", "new_text": "x"})
    assert result.is_error
    assert "0 matches" in text(result)
    assert (workspace / "a.txt").read_text() == "hello\nworld\n"


async def test_edit_file_with_several_matches_fails_saying_how_many(
    connect_file: Connect, workspace: Path
) -> None:
    (workspace / "dup.txt").write_text("x = 1\nx = 1\nx = 1\n")
    async with connect_file() as client:
        result = await client.call_tool(
            "edit_file", {"path": "dup.txt", "old_text": "x = 1", "new_text": "y"}
        )
    assert result.is_error
    assert "3 times" in text(result)
    assert (workspace / "dup.txt").read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_edit_file_refuses_an_empty_old_text(connect_file: Connect, workspace: Path) -> None:
    async with connect_file() as client:
        result = await client.call_tool("edit_file", {"path": "a.txt", "old_text": "", "new_text": "x"})
    assert result.is_error
    assert (workspace / "a.txt").read_text() == "hello\nworld\n"


# ---------------------------------------------------------------- list_dir / glob / grep


async def test_list_dir_sorts_entries_and_marks_folders(connect_file: Connect, workspace: Path) -> None:
    (workspace / "Zeta.md").touch()
    (workspace / "beta").mkdir()
    async with connect_file() as client:
        root = await client.call_tool("list_dir", {})
        sub = await client.call_tool("list_dir", {"path": "sub"})
    assert text(root).splitlines() == ["Zeta.md", "a.txt", "beta/", "sub/"]
    assert text(sub).splitlines() == ["b.txt"]


async def test_list_dir_of_a_file_is_an_error(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("list_dir", {"path": "a.txt"})
    assert result.is_error


async def test_glob_matches_recursively_relative_to_the_workspace(
    connect_file: Connect, workspace: Path
) -> None:
    (workspace / "sub" / "deep").mkdir()
    (workspace / "sub" / "deep" / "c.txt").touch()
    (workspace / "sub" / "deep" / "c.py").touch()
    async with connect_file() as client:
        everywhere = await client.call_tool("glob", {"pattern": "**/*.txt"})
        in_sub = await client.call_tool("glob", {"pattern": "*.txt", "path": "sub"})
    assert text(everywhere).splitlines() == ["a.txt", "sub/b.txt", "sub/deep/c.txt"]
    assert text(in_sub).splitlines() == ["sub/b.txt"]


async def test_glob_caps_the_number_of_results(
    connect_file: Connect, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(searching, "GLOB_MAX_RESULTS", 3)
    for i in range(6):
        (workspace / f"f{i}.log").touch()
    async with connect_file() as client:
        result = await client.call_tool("glob", {"pattern": "*.log"})
    lines = text(result).splitlines()
    assert len(lines) == 4
    assert all(line.endswith(".log") for line in lines[:3])
    assert "more than 3" in lines[3]


async def test_grep_reports_file_line_and_text(connect_file: Connect, workspace: Path) -> None:
    (workspace / "sub" / "code.py").write_text("import os\ndef main():\n    return os.getcwd()\n")
    async with connect_file() as client:
        result = await client.call_tool("grep", {"pattern": r"os\.\w+"})
    assert text(result).splitlines() == ["sub/code.py:3:    return os.getcwd()"]


async def test_grep_filters_files_by_glob(connect_file: Connect, workspace: Path) -> None:
    (workspace / "sub" / "notes.md").write_text("hello from markdown\n")
    async with connect_file() as client:
        result = await client.call_tool("grep", {"pattern": "hello", "glob": "*.md"})
    assert text(result).splitlines() == ["sub/notes.md:1:hello from markdown"]


async def test_grep_in_a_single_file(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("grep", {"pattern": "wor", "path": "a.txt"})
    assert text(result).splitlines() == ["a.txt:2:world"]


async def test_grep_skips_binary_files(connect_file: Connect, workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\x00\x01hello\x00")
    async with connect_file() as client:
        result = await client.call_tool("grep", {"pattern": "hello"})
    assert text(result).splitlines() == ["a.txt:1:hello"]


async def test_grep_with_an_invalid_regex_is_an_error(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("grep", {"pattern": "(unclosed"})
    assert result.is_error


async def test_grep_caps_the_number_of_matches(
    connect_file: Connect, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(searching, "GREP_MAX_MATCHES", 2)
    (workspace / "many.txt").write_text("match\n" * 10)
    async with connect_file() as client:
        result = await client.call_tool("grep", {"pattern": "match", "path": "many.txt"})
    lines = text(result).splitlines()
    assert lines[:2] == ["many.txt:1:match", "many.txt:2:match"]
    assert "more than 2" in lines[2]


async def test_a_catastrophic_pattern_runs_out_of_time_without_holding_up_other_calls(
    connect_file: Connect, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `(a|aa)+$` backtracks exponentially on a run of a's; `re` hung the shared server for 120 s.
    monkeypatch.setattr(searching, "GREP_TIME_LIMIT", 3.0)
    (workspace / "trap.txt").write_text("a" * 60 + "b\n")
    finished: list[str] = []
    async with connect_file() as client:

        async def grep() -> Any:
            result = await client.call_tool("grep", {"pattern": "(a|aa)+$", "path": "trap.txt"})
            finished.append("grep")
            return result

        searching_task = asyncio.create_task(grep())
        other = await client.call_tool("read_file", {"path": "a.txt"})
        finished.append("read_file")
        result = await searching_task
    assert text(other) == "hello\nworld\n"
    assert finished == ["read_file", "grep"]  # the other call was answered while the grep ran
    assert result.is_error
    assert "ran out of time (3 s)" in text(result) and "simplify the pattern" in text(result)


async def test_a_pattern_longer_than_the_cap_is_refused(connect_file: Connect) -> None:
    async with connect_file() as client:
        result = await client.call_tool("grep", {"pattern": "x" * 1_001})
    assert result.is_error
    assert "1,001 characters" in text(result)


# ---------------------------------------------------------------- hard links (issue 13, item 5)


async def test_a_hard_link_to_a_file_outside_is_neither_read_nor_searched(
    connect_file: Connect, workspace: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", workspace / "planted.txt")
    async with connect_file() as client:
        read = await client.call_tool("read_file", {"path": "planted.txt"})
        edit = await client.call_tool("edit_file", {"path": "planted.txt", "old_text": SECRET, "new_text": "x"})
        found = await client.call_tool("grep", {"pattern": "TOP SECRET"})
    assert read.is_error and "2 hard links" in text(read) and SECRET not in text(read)
    assert edit.is_error and "hard links" in text(edit)
    assert text(found).startswith("no matches")
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


async def test_writing_over_a_hard_link_replaces_the_workspace_name_and_leaves_the_outside_file(
    connect_file: Connect, workspace: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", workspace / "planted.txt")
    os.chmod(workspace / "planted.txt", 0o640)
    async with connect_file() as client:
        wrote = await client.call_tool("write_file", {"path": "planted.txt", "content": "mine"})
    assert not wrote.is_error
    assert (outside / "secret.txt").read_text() == SECRET + "\n"  # untouched
    assert (workspace / "planted.txt").read_text() == "mine"
    assert os.stat(workspace / "planted.txt").st_nlink == 1
    assert stat.S_IMODE(os.stat(workspace / "planted.txt").st_mode) == 0o640  # its mode is kept
    assert not [p for p in workspace.iterdir() if p.name.startswith(".overseer-")]  # no temp file left


# ---------------------------------------------------------------- annotations


async def test_tools_declare_honest_annotations(connect_file: Connect) -> None:
    async with connect_file() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"read_file", "write_file", "edit_file", "list_dir", "glob", "grep"}
    for name in ("read_file", "list_dir", "glob", "grep"):
        hints = tools[name].annotations
        assert hints.read_only_hint and hints.idempotent_hint and not hints.destructive_hint
    for name in ("write_file", "edit_file"):
        hints = tools[name].annotations
        assert not hints.read_only_hint and hints.destructive_hint
    assert all(tool.annotations.open_world_hint is False for tool in tools.values())


# ---------------------------------------------------------------- the escape corpus


@pytest.fixture
def escape_setup(workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Symlinks from the workspace to `outside` of every shape, and HOME pointing outside."""
    ws = workspace
    (ws / "link_file").symlink_to(outside / "secret.txt")
    (ws / "link_dir").symlink_to(outside)
    (ws / "chain1").symlink_to(ws / "chain2")
    (ws / "chain2").symlink_to(ws / "link_file")
    (ws / "chain_dir1").symlink_to(ws / "chain_dir2")
    (ws / "chain_dir2").symlink_to(outside)
    (ws / "dangling").symlink_to(outside / "created_by_escape.txt")
    (ws / "sub" / "rel_link").symlink_to(Path("..") / ".." / "outside" / "secret.txt")
    (ws / "loop_a").symlink_to(ws / "loop_b")
    (ws / "loop_b").symlink_to(ws / "loop_a")
    evil = ws.parent / (ws.name + "_evil")
    evil.mkdir()
    (evil / "secret.txt").write_text(SECRET + "\n")
    monkeypatch.setenv("HOME", str(outside))
    return outside


def _escape_corpus() -> list[tuple[str, Callable[[Path, Path], dict[str, Any]]]]:
    """(tool, arguments built from (workspace, outside)): every one must be refused."""
    deep = "../" * 64
    return [
        # read_file
        ("read_file", lambda ws, out: {"path": "../outside/secret.txt"}),
        ("read_file", lambda ws, out: {"path": "/etc/passwd"}),
        ("read_file", lambda ws, out: {"path": "a/../../outside/secret.txt"}),
        ("read_file", lambda ws, out: {"path": "link_file"}),
        ("read_file", lambda ws, out: {"path": "link_dir/secret.txt"}),
        ("read_file", lambda ws, out: {"path": "chain1"}),
        ("read_file", lambda ws, out: {"path": "chain_dir1/secret.txt"}),
        ("read_file", lambda ws, out: {"path": "sub/rel_link"}),
        ("read_file", lambda ws, out: {"path": "loop_a"}),
        ("read_file", lambda ws, out: {"path": "//etc/passwd"}),
        ("read_file", lambda ws, out: {"path": "~/.ssh/id_rsa"}),
        ("read_file", lambda ws, out: {"path": "~/secret.txt"}),
        ("read_file", lambda ws, out: {"path": "~root/.bashrc"}),
        ("read_file", lambda ws, out: {"path": "a.txt\x00../../outside/secret.txt"}),
        ("read_file", lambda ws, out: {"path": deep + "etc/passwd"}),
        ("read_file", lambda ws, out: {"path": "./" + "/..".join([""] * 8) + "/etc/passwd"}),
        ("read_file", lambda ws, out: {"path": str(out / "secret.txt")}),
        ("read_file", lambda ws, out: {"path": f"{ws}/../outside/secret.txt"}),
        ("read_file", lambda ws, out: {"path": f"{ws}_evil/secret.txt"}),
        ("read_file", lambda ws, out: {"path": "sub/../../outside/secret.txt", "offset": 0, "limit": 1}),
        # write_file
        ("write_file", lambda ws, out: {"path": "../outside/pwned.txt", "content": "x"}),
        ("write_file", lambda ws, out: {"path": str(out / "pwned.txt"), "content": "x"}),
        ("write_file", lambda ws, out: {"path": "dangling", "content": "x"}),
        ("write_file", lambda ws, out: {"path": "link_dir/pwned.txt", "content": "x"}),
        ("write_file", lambda ws, out: {"path": "link_file", "content": "x"}),
        ("write_file", lambda ws, out: {"path": "chain1", "content": "x"}),
        ("write_file", lambda ws, out: {"path": "chain_dir1/new/pwned.txt", "content": "x"}),
        ("write_file", lambda ws, out: {"path": "newdir/../../outside/pwned.txt", "content": "x"}),
        ("write_file", lambda ws, out: {"path": "~/pwned.txt", "content": "x"}),
        ("write_file", lambda ws, out: {"path": "ok\x00/../../outside/pwned.txt", "content": "x"}),
        ("write_file", lambda ws, out: {"path": deep + "tmp/pwned.txt", "content": "x"}),
        # edit_file
        ("edit_file", lambda ws, out: {"path": "../outside/secret.txt", "old_text": "TOP", "new_text": "X"}),
        ("edit_file", lambda ws, out: {"path": "link_file", "old_text": "TOP", "new_text": "X"}),
        ("edit_file", lambda ws, out: {"path": str(out / "secret.txt"), "old_text": "TOP", "new_text": "X"}),
        ("edit_file", lambda ws, out: {"path": "chain_dir1/secret.txt", "old_text": "TOP", "new_text": "X"}),
        ("edit_file", lambda ws, out: {"path": "~/secret.txt", "old_text": "TOP", "new_text": "X"}),
        # list_dir
        ("list_dir", lambda ws, out: {"path": ".."}),
        ("list_dir", lambda ws, out: {"path": "/"}),
        ("list_dir", lambda ws, out: {"path": "link_dir"}),
        ("list_dir", lambda ws, out: {"path": "chain_dir1"}),
        ("list_dir", lambda ws, out: {"path": "~"}),
        ("list_dir", lambda ws, out: {"path": "sub/../.."}),
        ("list_dir", lambda ws, out: {"path": str(out)}),
        # glob
        ("glob", lambda ws, out: {"pattern": "../**"}),
        ("glob", lambda ws, out: {"pattern": "/etc/*"}),
        ("glob", lambda ws, out: {"pattern": "*", "path": ".."}),
        ("glob", lambda ws, out: {"pattern": "**/secret.txt", "path": "link_dir"}),
        ("glob", lambda ws, out: {"pattern": "sub/../../outside/*"}),
        ("glob", lambda ws, out: {"pattern": "~/*"}),
        ("glob", lambda ws, out: {"pattern": "**", "path": "/"}),
        ("glob", lambda ws, out: {"pattern": "**/*", "path": str(out)}),
        # grep
        ("grep", lambda ws, out: {"pattern": "SECRET", "path": ".."}),
        ("grep", lambda ws, out: {"pattern": "SECRET", "path": "link_dir"}),
        ("grep", lambda ws, out: {"pattern": "SECRET", "path": "link_file"}),
        ("grep", lambda ws, out: {"pattern": "SECRET", "path": "chain1"}),
        ("grep", lambda ws, out: {"pattern": "SECRET", "path": str(out)}),
        ("grep", lambda ws, out: {"pattern": "SECRET", "glob": "../**"}),
        ("grep", lambda ws, out: {"pattern": "root", "glob": "/etc/*"}),
        ("grep", lambda ws, out: {"pattern": "root", "path": "/etc/passwd"}),
        ("grep", lambda ws, out: {"pattern": "SECRET", "path": "~"}),
    ]


ESCAPES = _escape_corpus()


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_escape_corpus_is_large_and_distinct() -> None:
    built = [(tool, repr(make(Path("/w"), Path("/o")))) for tool, make in ESCAPES]
    assert len(set(built)) == len(built) >= 40


@pytest.mark.parametrize(
    ("tool", "make_args"), ESCAPES, ids=[f"{i:02d}-{t}" for i, (t, _) in enumerate(ESCAPES)]
)
async def test_escape_attempt_is_refused_and_touches_nothing_outside(
    connect_file: Connect,
    workspace: Path,
    escape_setup: Path,
    tool: str,
    make_args: Callable[..., dict[str, Any]],
) -> None:
    outside = escape_setup
    before = _snapshot(outside)
    async with connect_file() as client:
        result = await client.call_tool(tool, make_args(workspace, outside))
    assert result.is_error
    assert SECRET not in text(result)
    assert "root:" not in text(result)  # nothing of /etc/passwd
    assert _snapshot(outside) == before


async def test_walking_from_the_root_never_follows_symlinks_outside(
    connect_file: Connect, escape_setup: Path
) -> None:
    async with connect_file() as client:
        grep = await client.call_tool("grep", {"pattern": "SECRET"})
        glob = await client.call_tool("glob", {"pattern": "**/secret.txt"})
    assert not grep.is_error and SECRET not in text(grep)
    assert not glob.is_error
    assert not any(line.endswith("/secret.txt") for line in text(glob).splitlines())


async def test_standalone_server_ignores_the_meta_workspace(connect_file: Connect, outside: Path) -> None:
    async with connect_file(trust_meta=False) as client:
        result = await client.call_tool(
            "read_file", {"path": "secret.txt"}, meta={"overseer/workspace": str(outside)}
        )
    assert result.is_error
    assert SECRET not in text(result)


async def test_managed_server_reads_from_the_meta_workspace(connect_file: Connect, outside: Path) -> None:
    async with connect_file(trust_meta=True) as client:
        result = await client.call_tool(
            "read_file", {"path": "secret.txt"}, meta={"overseer/workspace": str(outside)}
        )
    assert text(result) == SECRET + "\n"


async def test_managed_server_confines_paths_to_the_meta_workspace(
    connect_file: Connect, workspace: Path, outside: Path
) -> None:
    async with connect_file(trust_meta=True) as client:
        result = await client.call_tool(
            "read_file", {"path": "../ws/a.txt"}, meta={"overseer/workspace": str(outside)}
        )
    assert result.is_error
    assert "hello" not in text(result)


# ---------------------------------------------------------------- the stdio process boundary


def _stdio(root: Path, *, managed: bool) -> StdioServerParameters:
    env = {"PYTHONPATH": str(REPO_ROOT)}
    if managed:
        env["OVERSEER_MANAGED"] = "1"
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_servers.file", "--root", str(root)], env=env, cwd=REPO_ROOT
    )


async def test_stdio_server_lists_annotated_tools_and_ignores_meta_when_standalone(
    workspace: Path, outside: Path
) -> None:
    async with Client(_stdio(workspace, managed=False)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        own = await client.call_tool("read_file", {"path": "a.txt"})
        meta = await client.call_tool(
            "read_file", {"path": "secret.txt"}, meta={"overseer/workspace": str(outside)}
        )
    assert tools["read_file"].annotations.read_only_hint is True
    assert tools["write_file"].annotations.destructive_hint is True
    assert text(own) == "hello\nworld\n"
    assert meta.is_error and SECRET not in text(meta)


async def test_stdio_server_launched_managed_honours_the_meta_workspace(
    workspace: Path, outside: Path
) -> None:
    async with Client(_stdio(workspace, managed=True)) as client:
        meta = await client.call_tool(
            "read_file", {"path": "secret.txt"}, meta={"overseer/workspace": str(outside)}
        )
        default = await client.call_tool("read_file", {"path": "a.txt"})
    assert text(meta) == SECRET + "\n"
    assert text(default) == "hello\nworld\n"


# ---------------------------------------------------------------- read roots (skill folders)


@pytest.fixture
def read_root(tmp_path: Path) -> Path:
    """A folder outside the workspace the server may read but not write: a skill in it."""
    folder = tmp_path / "skills"
    (folder / "review").mkdir(parents=True)
    (folder / "review" / "SKILL.md").write_text("---\ndescription: Review.\n---\nLook for bugs.\n")
    return folder.resolve()


def _with_read_root(workspace: Path, read_root: Path, *, trust_meta: bool = False) -> Client:
    return Client(create_file_server(workspace, trust_meta=trust_meta, read_roots=[read_root]))


async def test_reading_tools_accept_an_absolute_path_inside_a_read_root(
    workspace: Path, read_root: Path
) -> None:
    skill_md = read_root / "review" / "SKILL.md"
    async with _with_read_root(workspace, read_root) as client:
        read = await client.call_tool("read_file", {"path": str(skill_md)})
        listed = await client.call_tool("list_dir", {"path": str(read_root)})
        globbed = await client.call_tool("glob", {"pattern": "**/SKILL.md", "path": str(read_root)})
        grepped = await client.call_tool("grep", {"pattern": "bugs", "path": str(read_root)})
    assert text(read) == "---\ndescription: Review.\n---\nLook for bugs.\n"
    assert text(listed) == "review/"
    assert text(globbed) == str(skill_md)
    # Absolute, so the model can read the hit back.
    assert text(grepped) == f"{skill_md}:4:Look for bugs."


async def test_a_tilde_path_into_a_read_root_is_read(
    workspace: Path, read_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(read_root.parent))
    async with _with_read_root(workspace, read_root) as client:
        result = await client.call_tool("read_file", {"path": "~/skills/review/SKILL.md"})
    assert not result.is_error
    assert "Look for bugs." in text(result)


async def test_the_workspace_still_works_beside_read_roots(workspace: Path, read_root: Path) -> None:
    async with _with_read_root(workspace, read_root) as client:
        read = await client.call_tool("read_file", {"path": "a.txt"})
        grepped = await client.call_tool("grep", {"pattern": "bee"})
        # A relative path is the workspace's, even when the read root has that name.
        relative = await client.call_tool("read_file", {"path": "review/SKILL.md"})
    assert text(read) == "hello\nworld\n"
    assert text(grepped) == "sub/b.txt:1:bee"
    assert relative.is_error and "does not exist" in text(relative)


async def test_writing_or_editing_in_a_read_root_is_refused(workspace: Path, read_root: Path) -> None:
    skill_md = read_root / "review" / "SKILL.md"
    before = skill_md.read_text()
    async with _with_read_root(workspace, read_root) as client:
        written = await client.call_tool("write_file", {"path": str(skill_md), "content": "replaced"})
        created = await client.call_tool(
            "write_file", {"path": str(read_root / "new" / "SKILL.md"), "content": "x"}
        )
        edited = await client.call_tool(
            "edit_file", {"path": str(skill_md), "old_text": "bugs", "new_text": "nothing"}
        )
    for result in (written, created, edited):
        assert result.is_error
        assert "outside the workspace" in text(result) and "read-only" in text(result)
    assert skill_md.read_text() == before
    assert not (read_root / "new").exists()


async def test_a_workspace_symlink_into_a_read_root_reads_but_never_writes(
    workspace: Path, read_root: Path
) -> None:
    (workspace / "skills-link").symlink_to(read_root)
    async with _with_read_root(workspace, read_root) as client:
        read = await client.call_tool("read_file", {"path": "skills-link/review/SKILL.md"})
        written = await client.call_tool(
            "write_file", {"path": "skills-link/review/SKILL.md", "content": "x"}
        )
    assert "Look for bugs." in text(read)
    assert written.is_error and "read-only" in text(written)
    assert "Look for bugs." in (read_root / "review" / "SKILL.md").read_text()


async def test_paths_escaping_a_read_root_are_refused(
    workspace: Path, read_root: Path, outside: Path
) -> None:
    (read_root / "review" / "leak.txt").symlink_to(outside / "secret.txt")
    (read_root / "review" / "leak_dir").symlink_to(outside)
    attempts = [
        ("read_file", {"path": f"{read_root}/../outside/secret.txt"}),
        ("read_file", {"path": f"{read_root}/review/leak.txt"}),
        ("read_file", {"path": f"{read_root}/review/leak_dir/secret.txt"}),
        ("list_dir", {"path": f"{read_root}/.."}),
        ("glob", {"pattern": "*", "path": f"{read_root}/review/leak_dir"}),
        ("grep", {"pattern": "SECRET", "path": f"{read_root}/review/leak.txt"}),
        ("grep", {"pattern": "SECRET", "path": f"{read_root}/.."}),
    ]
    async with _with_read_root(workspace, read_root) as client:
        for tool, arguments in attempts:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            assert SECRET not in text(result)
        # Walking the read root never follows its symlinks out of it.
        walked = await client.call_tool("grep", {"pattern": "SECRET", "path": str(read_root)})
    assert SECRET not in text(walked)


async def test_without_read_roots_the_same_absolute_path_is_refused(
    connect_file: Connect, read_root: Path
) -> None:
    async with connect_file() as client:
        result = await client.call_tool("read_file", {"path": str(read_root / "review" / "SKILL.md")})
    assert result.is_error and "outside the workspace" in text(result)


async def test_read_roots_apply_to_a_meta_workspace_too(
    workspace: Path, read_root: Path, outside: Path
) -> None:
    async with _with_read_root(workspace, read_root, trust_meta=True) as client:
        result = await client.call_tool(
            "read_file",
            {"path": str(read_root / "review" / "SKILL.md")},
            meta={"overseer/workspace": str(outside)},
        )
    assert "Look for bugs." in text(result)


async def test_the_instructions_name_the_read_roots(workspace: Path, read_root: Path) -> None:
    async with _with_read_root(workspace, read_root) as client:
        instructions = client.instructions or ""
    assert str(read_root) in instructions and "never written" in instructions


async def test_stdio_server_takes_read_roots_from_the_command_line(workspace: Path, read_root: Path) -> None:
    params = _stdio(workspace, managed=False)
    params.args += ["--read-root", str(read_root)]
    async with Client(params) as client:
        read = await client.call_tool("read_file", {"path": str(read_root / "review" / "SKILL.md")})
        written = await client.call_tool("write_file", {"path": str(read_root / "x.txt"), "content": "x"})
    assert "Look for bugs." in text(read)
    assert written.is_error and not (read_root / "x.txt").exists()
