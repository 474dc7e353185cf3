"""The file server refuses Overseer's own folders by itself, even when the workspace holds them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from tool_server_helpers import REPO_ROOT, text

from mcp_servers.file.server import create_server as create_file_server

MARK = "zebra-7431"
"""A string that lives only in Overseer's folders (a session's text, a checkpoint's file)."""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A workspace holding Overseer's data dir (`.overseer`) and its own file `notes.md`."""
    root = (tmp_path / "home").resolve()
    data = root / ".overseer"
    (data / "checkpoints" / "ws-1" / "objects").mkdir(parents=True)
    (data / "overseer.db").write_text(f"sessions: {MARK}\n")
    (data / "checkpoints" / "ws-1" / "objects" / "ab12").write_text(f"blob {MARK}\n")
    (data / "skills" / "greet").mkdir(parents=True)
    (data / "skills" / "greet" / "SKILL.md").write_text("say hello\n")
    (data / "agents" / "bob" / "workspace").mkdir(parents=True)
    (data / "agents" / "bob" / "workspace" / "todo.md").write_text("bob's list\n")
    (root / "notes.md").write_text(f"my notes, not {MARK.upper()}\n")
    (root / "project").mkdir()
    return root


def server(home: Path, root: Path | None = None, *, checkpoints: Path | None = None) -> Client:
    data = home / ".overseer"
    return Client(
        create_file_server(
            root or home,
            trust_meta=True,
            read_roots=[data / "skills"],
            data_dir=data,
            checkpoints_dir=checkpoints or data / "checkpoints",
        )
    )


def refused(result, shown: str, which: str) -> bool:
    return result.is_error and f"'{shown}' is Overseer's own data (its {which}" in text(result)


async def test_reading_the_database_inside_the_workspace_is_refused_with_the_reason(home: Path) -> None:
    async with server(home) as client:
        result = await client.call_tool("read_file", {"path": ".overseer/overseer.db"})
    assert refused(result, ".overseer/overseer.db", "data dir")
    assert MARK not in text(result)
    assert "never open to tools" in text(result)


@pytest.mark.parametrize(
    "spelling",
    [
        "project/../.overseer/overseer.db",
        "./.overseer/./overseer.db",
        "{home}/.overseer/overseer.db",
        "{home}/project/../.overseer/overseer.db",
        "link/overseer.db",
        "dblink",
    ],
)
async def test_every_spelling_of_a_path_in_the_data_dir_is_refused(home: Path, spelling: str) -> None:
    os.symlink(home / ".overseer", home / "link")
    os.symlink(home / ".overseer" / "overseer.db", home / "dblink")
    shown = spelling.format(home=home)
    async with server(home) as client:
        result = await client.call_tool("read_file", {"path": shown})
    assert refused(result, shown, "data dir"), text(result)


async def test_a_checkpoint_is_refused_by_name_as_the_checkpoints_dir(home: Path) -> None:
    path = ".overseer/checkpoints/ws-1/objects/ab12"
    async with server(home) as client:
        read = await client.call_tool("read_file", {"path": path})
        listed = await client.call_tool("list_dir", {"path": ".overseer/checkpoints"})
    assert refused(read, path, "checkpoints dir")
    assert refused(listed, ".overseer/checkpoints", "checkpoints dir")


async def test_writes_and_edits_into_overseers_folders_are_refused_and_change_nothing(home: Path) -> None:
    objects = home / ".overseer" / "checkpoints" / "ws-1" / "objects"
    async with server(home) as client:
        planted = await client.call_tool(
            "write_file", {"path": ".overseer/checkpoints/ws-1/objects/cd34", "content": "forged"}
        )
        edited = await client.call_tool(
            "edit_file", {"path": ".overseer/overseer.db", "old_text": "sessions", "new_text": "gone"}
        )
        skill = await client.call_tool("write_file", {"path": ".overseer/skills/greet/SKILL.md", "content": "x"})
    assert refused(planted, ".overseer/checkpoints/ws-1/objects/cd34", "checkpoints dir")
    assert refused(edited, ".overseer/overseer.db", "data dir")
    assert refused(skill, ".overseer/skills/greet/SKILL.md", "data dir")  # read roots are never written
    assert sorted(p.name for p in objects.iterdir()) == ["ab12"]
    assert (home / ".overseer" / "overseer.db").read_text() == f"sessions: {MARK}\n"
    assert (home / ".overseer" / "skills" / "greet" / "SKILL.md").read_text() == "say hello\n"


async def test_listings_and_searches_leave_overseers_folders_out(home: Path) -> None:
    async with server(home) as client:
        listed = await client.call_tool("list_dir", {"path": "."})
        found = await client.call_tool("glob", {"pattern": "**"})
        searched = await client.call_tool("grep", {"pattern": MARK})
        nocase = await client.call_tool("grep", {"pattern": f"(?i){MARK}"})
    assert text(listed).split("\n") == ["notes.md", "project/"]
    assert ".overseer" not in text(found) and "notes.md" in text(found)
    assert text(searched) == f"no matches for {MARK!r} under ."
    assert text(nocase) == f"notes.md:1:my notes, not {MARK.upper()}"


async def test_a_symlinked_folder_in_the_workspace_does_not_lead_a_search_into_the_data_dir(home: Path) -> None:
    os.symlink(home / ".overseer", home / "link")
    async with server(home) as client:
        listed = await client.call_tool("list_dir", {"path": "link"})
        searched = await client.call_tool("grep", {"pattern": MARK, "path": "link"})
        top = await client.call_tool("grep", {"pattern": MARK})
    assert refused(listed, "link", "data dir")
    assert refused(searched, "link", "data dir")
    assert text(top) == f"no matches for {MARK!r} under ."


async def test_a_checkpoints_dir_moved_into_a_workspace_is_refused_there(home: Path) -> None:
    workspace = home / "project"
    moved = workspace / ".snapshots"
    (moved / "objects").mkdir(parents=True)
    (moved / "objects" / "ef56").write_text(f"blob {MARK}\n")
    (workspace / "main.py").write_text("print('hi')\n")
    async with server(home, workspace, checkpoints=moved) as client:
        read = await client.call_tool("read_file", {"path": ".snapshots/objects/ef56"})
        listed = await client.call_tool("list_dir", {"path": "."})
        searched = await client.call_tool("grep", {"pattern": MARK})
        own = await client.call_tool("read_file", {"path": "main.py"})
    assert refused(read, ".snapshots/objects/ef56", "checkpoints dir")
    assert text(listed) == "main.py"
    assert text(searched) == f"no matches for {MARK!r} under ."
    assert text(own) == "print('hi')\n"


async def test_skills_and_an_agents_workspace_inside_the_data_dir_stay_usable(home: Path) -> None:
    bob = home / ".overseer" / "agents" / "bob" / "workspace"
    skill = home / ".overseer" / "skills" / "greet" / "SKILL.md"
    async with server(home, bob) as client:
        todo = await client.call_tool("read_file", {"path": "todo.md"})
        wrote = await client.call_tool("write_file", {"path": "done.md", "content": "all\n"})
        read_skill = await client.call_tool("read_file", {"path": str(skill)})
        escape = await client.call_tool("read_file", {"path": str(home / ".overseer" / "overseer.db")})
    assert text(todo) == "bob's list\n"
    assert not wrote.is_error and (bob / "done.md").read_text() == "all\n"
    assert text(read_skill) == "say hello\n"
    assert escape.is_error and MARK not in text(escape)


async def test_the_workspaces_own_files_still_work(home: Path) -> None:
    async with server(home) as client:
        read = await client.call_tool("read_file", {"path": "notes.md"})
        wrote = await client.call_tool("write_file", {"path": "project/new.txt", "content": "new\n"})
        edited = await client.call_tool("edit_file", {"path": "notes.md", "old_text": "my", "new_text": "our"})
    assert not read.is_error and not wrote.is_error and not edited.is_error
    assert (home / "notes.md").read_text().startswith("our notes")


async def test_the_stdio_server_refuses_the_folders_its_command_line_names(home: Path) -> None:
    data = home / ".overseer"
    args = ["-m", "mcp_servers.file", "--root", str(home), "--data-dir", str(data)]
    args += ["--checkpoints-dir", str(data / "checkpoints")]
    params = StdioServerParameters(
        command=sys.executable, args=args, env={"PYTHONPATH": str(REPO_ROOT)}, cwd=REPO_ROOT
    )
    async with Client(params) as client:
        read = await client.call_tool("read_file", {"path": ".overseer/overseer.db"})
        searched = await client.call_tool("grep", {"pattern": MARK})
        own = await client.call_tool("read_file", {"path": "notes.md"})
    assert refused(read, ".overseer/overseer.db", "data dir")
    assert text(searched) == f"no matches for {MARK!r} under ."
    assert not own.is_error
