"""The memory tool server (mcp_servers/memory): tools in process, the index, one stdio boundary."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from tool_server_helpers import REPO_ROOT, Connect, text

from shared import memory_files
from mcp_servers.memory.index import INDEX_FILE
from mcp_servers.memory.server import create_server


@pytest.fixture
def connect_memory(workspace: Path) -> Connect:
    """Open an in-process client to a memory server (standalone unless `trust_meta=True`)."""

    def connect(root: Path | None = None, *, trust_meta: bool = False) -> Client:
        return Client(create_server(root or workspace, trust_meta=trust_meta))

    return connect


def memory_text(workspace: Path) -> str:
    return memory_files.memory_path(workspace).read_text()


def hit_ids(result_text: str) -> list[str]:
    """The ids of search results, in rank order (`1. [id] (...) text`)."""
    return [line.split("[", 1)[1].split("]", 1)[0] for line in result_text.splitlines()]


# ---------------------------------------------------------------- memory_save / memory_read


async def test_saved_fact_is_written_under_its_section_with_an_id(
    connect_memory: Connect, workspace: Path
) -> None:
    async with connect_memory() as client:
        result = await client.call_tool(
            "memory_save", {"fact": "The person prefers tabs", "section": "Preferences"}
        )
        read = await client.call_tool("memory_read", {"which": "memory"})
    assert not result.is_error
    fact_id = text(result).split()[2]
    assert f"- The person prefers tabs <!-- id:{fact_id} -->" in memory_text(workspace)
    assert text(read) == memory_text(workspace)
    assert "## Preferences" in text(read)


async def test_a_fact_without_a_section_goes_to_the_default_section(
    connect_memory: Connect, workspace: Path
) -> None:
    async with connect_memory() as client:
        await client.call_tool("memory_save", {"fact": "Uses uv for Python"})
    assert f"## {memory_files.DEFAULT_SECTION}\n\n- Uses uv for Python" in memory_text(workspace)


async def test_saving_a_duplicate_fact_changes_nothing_and_says_so(
    connect_memory: Connect, workspace: Path
) -> None:
    async with connect_memory() as client:
        first = await client.call_tool("memory_save", {"fact": "Deploys happen on Tuesdays."})
        before = memory_text(workspace)
        again = await client.call_tool(
            "memory_save", {"fact": "deploys happen on tuesdays", "section": "Other"}
        )
    assert not again.is_error
    assert "already remembered" in text(again) and text(first).split()[2] in text(again)
    assert memory_text(workspace) == before


async def test_an_empty_fact_is_an_error_and_writes_nothing(connect_memory: Connect, workspace: Path) -> None:
    async with connect_memory() as client:
        result = await client.call_tool("memory_save", {"fact": "   "})
    assert result.is_error
    assert not memory_files.memory_path(workspace).exists()


async def test_concurrent_saves_all_land(connect_memory: Connect, workspace: Path) -> None:
    async with connect_memory() as client:
        results = await asyncio.gather(
            *(client.call_tool("memory_save", {"fact": f"Fact number {i}"}) for i in range(20))
        )
    assert not any(r.is_error for r in results)
    assert len(memory_files.parse_memory(memory_text(workspace))) == 20


async def test_memory_read_pages_by_lines_and_says_how_to_continue(
    connect_memory: Connect, workspace: Path
) -> None:
    memory_files.save_facts(workspace, [(f"Fact {i}", None) for i in range(10)])
    total = len(memory_text(workspace).splitlines())
    async with connect_memory() as client:
        first = await client.call_tool("memory_read", {"which": "memory", "limit": 4})
        rest = await client.call_tool("memory_read", {"which": "memory", "offset": 4})
    *body, note = text(first).splitlines()
    assert body == memory_text(workspace).splitlines()[:4]
    assert "offset=4" in note and str(total) in note
    assert text(rest).splitlines() == memory_text(workspace).splitlines()[4:]


async def test_memory_read_of_a_missing_file_says_nothing_is_remembered(connect_memory: Connect) -> None:
    async with connect_memory() as client:
        memory = await client.call_tool("memory_read", {"which": "memory"})
        history = await client.call_tool("memory_read", {"which": "history"})
    assert not memory.is_error and "does not exist yet" in text(memory)
    assert not history.is_error and "does not exist yet" in text(history)


async def test_memory_read_shows_the_history_log(connect_memory: Connect, workspace: Path) -> None:
    memory_files.append_history(workspace, "We migrated the database.", when=datetime(2025, 5, 1, 10, 0))
    async with connect_memory() as client:
        result = await client.call_tool("memory_read", {"which": "history"})
    assert text(result) == "# History\n\n## 2025-05-01 10:00\n\nWe migrated the database.\n"


async def test_memory_read_refuses_an_unknown_file(connect_memory: Connect) -> None:
    async with connect_memory() as client:
        result = await client.call_tool("memory_read", {"which": "secrets"})
    assert result.is_error


# ---------------------------------------------------------------- memory_search


async def test_search_ranks_the_more_relevant_fact_first(connect_memory: Connect, workspace: Path) -> None:
    saved = memory_files.save_facts(
        workspace,
        [
            ("The staging database is PostgreSQL on db.internal", "Project"),
            ("Database backups run nightly; backups are kept for 30 days", "Project"),
            ("The person likes concise answers", "Preferences"),
        ],
    )
    async with connect_memory() as client:
        result = await client.call_tool("memory_search", {"query": "database backups"})
    assert hit_ids(text(result)) == [saved[1].id, saved[0].id]
    assert text(result).splitlines()[0] == (
        f"1. [{saved[1].id}] (MEMORY.md, Project) Database backups run nightly; backups are kept for 30 days"
    )


async def test_search_matches_word_forms_and_respects_the_limit(
    connect_memory: Connect, workspace: Path
) -> None:
    memory_files.save_facts(workspace, [(f"Deploys go out on day {i}", None) for i in range(5)])
    async with connect_memory() as client:
        result = await client.call_tool("memory_search", {"query": "deploying", "limit": 3})
    assert len(hit_ids(text(result))) == 3


async def test_search_covers_history_entries(connect_memory: Connect, workspace: Path) -> None:
    memory_files.append_history(
        workspace,
        "On 2025-05-01 we migrated the billing service to Kubernetes.",
        when=datetime(2025, 5, 1, 18, 0),
    )
    async with connect_memory() as client:
        result = await client.call_tool("memory_search", {"query": "kubernetes migration"})
    (line,) = text(result).splitlines()
    assert "(HISTORY.md, 2025-05-01 18:00) On 2025-05-01 we migrated the billing service" in line
    assert hit_ids(line)[0].startswith("h")


async def test_search_finds_edits_made_by_hand_between_searches(
    connect_memory: Connect, workspace: Path
) -> None:
    memory_files.save_facts(workspace, [("The cache server is Redis", None)])
    async with connect_memory() as client:
        before = await client.call_tool("memory_search", {"query": "redis"})
        path = memory_files.memory_path(workspace)
        path.write_text(path.read_text().replace("Redis", "Valkey") + "- The queue is RabbitMQ\n")
        gone = await client.call_tool("memory_search", {"query": "redis"})
        renamed = await client.call_tool("memory_search", {"query": "valkey"})
        added = await client.call_tool("memory_search", {"query": "rabbitmq"})
    assert len(hit_ids(text(before))) == 1
    assert "no memory matches" in text(gone)
    assert hit_ids(text(renamed)) == hit_ids(text(before))  # the id comment kept the fact's identity
    assert "The queue is RabbitMQ" in text(added)


@pytest.mark.parametrize(
    "query", ['"unbalanced', "AND OR NOT", "NEAR(a b)", "section:General", "col*", "(", "^start", "-x +y"]
)
async def test_search_treats_query_syntax_as_plain_words(
    connect_memory: Connect, workspace: Path, query: str
) -> None:
    memory_files.save_facts(workspace, [("A fact about start and General things", None)])
    async with connect_memory() as client:
        result = await client.call_tool("memory_search", {"query": query})
    assert not result.is_error


@pytest.mark.parametrize("query", ["", "   \n\t"])
async def test_an_empty_query_is_an_error(connect_memory: Connect, query: str) -> None:
    async with connect_memory() as client:
        result = await client.call_tool("memory_search", {"query": query})
    assert result.is_error


async def test_the_index_lives_in_the_workspace_and_a_corrupt_one_is_rebuilt(
    connect_memory: Connect, workspace: Path
) -> None:
    memory_files.save_facts(workspace, [("The build uses Bazel", None)])
    async with connect_memory() as client:
        await client.call_tool("memory_search", {"query": "bazel"})
        index_path = workspace / INDEX_FILE
        assert index_path.is_file()
        index_path.write_bytes(b"this is not a database" * 100)
        result = await client.call_tool("memory_search", {"query": "bazel"})
    assert not result.is_error
    assert "The build uses Bazel" in text(result)


# ---------------------------------------------------------------- memory_forget


async def test_forget_removes_a_saved_fact(connect_memory: Connect, workspace: Path) -> None:
    (keep, drop) = memory_files.save_facts(workspace, [("Keep me", None), ("Drop me", None)])
    async with connect_memory() as client:
        result = await client.call_tool("memory_forget", {"id": drop.id})
        search = await client.call_tool("memory_search", {"query": "drop"})
    assert not result.is_error and "Drop me" in text(result)
    assert "Drop me" not in memory_text(workspace) and keep.id in memory_text(workspace)
    assert "no memory matches" in text(search)


async def test_a_fact_added_by_hand_without_an_id_can_be_found_and_forgotten(
    connect_memory: Connect, workspace: Path
) -> None:
    path = memory_files.memory_path(workspace)
    path.parent.mkdir()
    path.write_text("# Memory\n\n## Team\n\n- Alice owns the payments service\n- Bob reviews SQL\n")
    async with connect_memory() as client:
        found = await client.call_tool("memory_search", {"query": "alice payments"})
        (fact_id,) = hit_ids(text(found))
        forgot = await client.call_tool("memory_forget", {"id": fact_id})
    assert "(MEMORY.md, Team) Alice owns the payments service" in text(found)
    assert not forgot.is_error
    assert path.read_text() == "# Memory\n\n## Team\n\n- Bob reviews SQL\n"


async def test_forgetting_an_unknown_or_already_forgotten_id_is_an_error_that_changes_nothing(
    connect_memory: Connect, workspace: Path
) -> None:
    (saved,) = memory_files.save_facts(workspace, [("Short-lived", None)])
    async with connect_memory() as client:
        first = await client.call_tool("memory_forget", {"id": saved.id})
        after = memory_text(workspace)
        second = await client.call_tool("memory_forget", {"id": saved.id})
        unknown = await client.call_tool("memory_forget", {"id": "mffffff"})
    assert not first.is_error
    assert second.is_error and unknown.is_error and "memory_search" in text(unknown)
    assert memory_text(workspace) == after


async def test_history_entries_cannot_be_forgotten(connect_memory: Connect, workspace: Path) -> None:
    memory_files.append_history(workspace, "Something happened.", when=datetime(2025, 1, 1))
    entry_id = memory_files.parse_history(memory_files.read_text(memory_files.history_path(workspace)))[0].id
    before = memory_files.history_path(workspace).read_text()
    async with connect_memory() as client:
        result = await client.call_tool("memory_forget", {"id": entry_id})
    assert result.is_error
    assert memory_files.history_path(workspace).read_text() == before


# ---------------------------------------------------------------- workspaces and annotations


async def test_managed_server_uses_the_meta_workspace(
    connect_memory: Connect, workspace: Path, outside: Path
) -> None:
    meta = {"overseer/workspace": str(outside)}
    async with connect_memory(trust_meta=True) as client:
        await client.call_tool("memory_save", {"fact": "Belongs to the other workspace"}, meta=meta)
        there = await client.call_tool("memory_search", {"query": "other workspace"}, meta=meta)
        here = await client.call_tool("memory_search", {"query": "other workspace"})
    assert "Belongs to the other workspace" in memory_files.memory_path(outside).read_text()
    assert not memory_files.memory_path(workspace).exists()
    assert len(hit_ids(text(there))) == 1 and "no memory matches" in text(here)
    assert (outside / INDEX_FILE).is_file()


async def test_standalone_server_ignores_the_meta_workspace(
    connect_memory: Connect, workspace: Path, outside: Path
) -> None:
    async with connect_memory(trust_meta=False) as client:
        await client.call_tool(
            "memory_save", {"fact": "Stays home"}, meta={"overseer/workspace": str(outside)}
        )
    assert "Stays home" in memory_text(workspace)
    assert not (outside / "memory").exists()


async def test_tools_declare_honest_annotations(connect_memory: Connect) -> None:
    async with connect_memory() as client:
        tools = {tool.name: tool.annotations for tool in (await client.list_tools()).tools}
    assert set(tools) == {"memory_save", "memory_read", "memory_search", "memory_forget"}
    for name in ("memory_read", "memory_search"):
        assert tools[name].read_only_hint and tools[name].idempotent_hint and not tools[name].destructive_hint
    assert not tools["memory_save"].read_only_hint and not tools["memory_save"].destructive_hint
    assert tools["memory_save"].idempotent_hint
    assert tools["memory_forget"].destructive_hint and tools["memory_forget"].idempotent_hint
    assert all(hints.open_world_hint is False for hints in tools.values())


# ---------------------------------------------------------------- the stdio process boundary


async def test_stdio_memory_server_saves_and_searches_in_its_root(workspace: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.memory", "--root", str(workspace)],
        env={"PYTHONPATH": str(REPO_ROOT)},
        cwd=REPO_ROOT,
    )
    async with Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        saved = await client.call_tool("memory_save", {"fact": "Claude Desktop can use this server"})
        found = await client.call_tool("memory_search", {"query": "desktop"})
    assert "memory_forget" in names
    assert not saved.is_error
    assert "Claude Desktop can use this server" in memory_text(workspace)
    assert "Claude Desktop can use this server" in text(found)


def test_help_describes_the_server_and_its_root_option() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_servers.memory", "--help"],
        check=False,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0
    assert "--root" in done.stdout and "MEMORY.md" in done.stdout
