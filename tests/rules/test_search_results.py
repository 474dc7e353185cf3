"""Searches and listings never show what a deny rule forbids reading (issue 13, item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.domain.tools import ToolResult
from backend.rules.policy_engine import PolicyEngine
from backend.rules.grammar import RuleSet
from backend.rules.search_results import hide_denied, search_redactor
from backend.testing import Reply, ScriptedToolCall
from backend.testing.harness import scripted_host

# The shared file + shell pool (tests/conftest.py) runs on the module's event loop.
on_the_pools_loop = pytest.mark.asyncio(loop_scope="module")

SECRET = "TOKEN-5f2a"
SEARCHES = {"allow": ["mcp__file__grep", "mcp__file__glob", "mcp__file__list_dir"]}

# Calls that reach into `secrets/` without naming it as their path. Grow this corpus with
# every new way found; each must come back without the secret's name or contents.
CORPUS: list[tuple[str, dict[str, object]]] = [
    ("grep", {"pattern": "TOKEN"}),
    ("grep", {"pattern": "TOKEN", "path": "."}),
    ("grep", {"pattern": "TOKEN", "path": "./"}),
    ("grep", {"pattern": "TOKEN", "glob": "secrets/*"}),
    ("grep", {"pattern": "TOKEN", "glob": "*.txt"}),
    ("grep", {"pattern": ".", "path": "nested/.."}),
    ("glob", {"pattern": "secrets/*"}),
    ("glob", {"pattern": "**/*"}),
    ("glob", {"pattern": "**/key*"}),
    ("glob", {"pattern": "*/key.txt"}),
    ("list_dir", {"path": "."}),
]


def hidden_in(workspace: Path, deny: list[str]):
    policy = PolicyEngine(RuleSet.from_config({"deny": deny}, source="user"))
    return lambda path: policy.hides(path, workspace)


def test_a_path_deny_rule_hides_the_paths_it_covers_and_nothing_else(tmp_path):
    hidden = hidden_in(tmp_path, ["Read(./secrets/**)", "Read(.env)"])
    assert hidden("secrets/key.txt")
    assert hidden(str(tmp_path / "secrets" / "deep" / "key.txt"))
    assert hidden("src/.env")  # a bare name is denied at any depth
    assert not hidden("src/app.py")
    assert not hidden("secretsX/key.txt")


def test_grep_lines_of_denied_files_are_dropped_and_counted(tmp_path):
    result = ToolResult(text="secrets/key.txt:1:TOKEN\nsrc/a.py:3:TOKEN = 1", structured={"result": "x"})
    shown = hide_denied("grep", {}, result, hidden_in(tmp_path, ["Read(./secrets/**)"]))
    assert shown.text == "src/a.py:3:TOKEN = 1\n[1 line hidden: deny rules forbid reading what they name]"
    assert shown.structured is None  # its copy would still carry the hidden line


def test_a_grep_line_whose_path_reads_two_ways_is_dropped_if_either_is_denied(tmp_path):
    # A file named `secrets/a:1:b` prints `secrets/a:1:b:7:text`; both readings start in secrets/.
    # And `x:2:secrets/y:3:z` (file `x`, line 2) is kept only if neither `x` nor `x:2:secrets/y` is denied.
    hidden = hidden_in(tmp_path, ["Read(./secrets/**)", "Read(x:2:secrets/**)"])
    result = ToolResult(text="secrets/a:1:b:7:text\nx:2:secrets/y:3:z\nok.txt:1:fine")
    shown = hide_denied("grep", {}, result, hidden)
    assert shown.text.split("\n")[0] == "ok.txt:1:fine"
    assert "2 lines hidden" in shown.text


def test_list_dir_entries_are_judged_inside_the_listed_folder(tmp_path):
    (tmp_path / "secrets").mkdir()
    hidden = hidden_in(tmp_path, ["Read(./secrets/**)", "Read(./docs/private.md)"])
    shown = hide_denied("list_dir", {"path": "docs"}, ToolResult(text="a.md\nprivate.md"), hidden)
    assert shown.text.startswith("a.md\n[1 line hidden")
    root = hide_denied("list_dir", {}, ToolResult(text="docs/\nsecrets/"), hidden)
    assert root.text.startswith("docs/\n[1 line hidden")


def test_the_servers_closing_notes_are_kept_and_nothing_changes_without_a_denied_path(tmp_path):
    hidden = hidden_in(tmp_path, ["Read(./secrets/**)"])
    text = "secrets/k:1:x\n[more than 500 matches; narrow the pattern or the path]"
    assert hide_denied("grep", {}, ToolResult(text=text), hidden).text.startswith("[more than 500")
    clean = ToolResult(text="src/a.py\nsrc/b.py", structured={"result": "src/a.py\nsrc/b.py"})
    assert hide_denied("glob", {}, clean, hidden) is clean
    failed = ToolResult.error("secrets/k does not exist")
    assert hide_denied("glob", {}, failed, hidden) is failed


def test_only_the_file_servers_searches_are_filtered():
    assert search_redactor("mcp__file__read_file", {}, lambda p: True) is None
    assert search_redactor("mcp__shell__exec", {}, lambda p: True) is None
    assert search_redactor("mcp__file__grep", {}, lambda p: True) is not None


@on_the_pools_loop
@pytest.mark.parametrize(("tool", "arguments"), CORPUS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CORPUS)])
async def test_a_search_through_the_real_file_server_never_shows_a_denied_file(tmp_path, pool, tool, arguments):
    call = ScriptedToolCall(name=f"mcp__file__{tool}", arguments=arguments)
    permissions = SEARCHES | {"deny": ["Read(./secrets/**)"]}
    async with scripted_host(tmp_path, [Reply(tool_calls=[call]), Reply(text="ok")], permissions=permissions, pool=pool) as h:
        (h.workspace / "secrets").mkdir()
        (h.workspace / "secrets" / "key.txt").write_text(f"{SECRET}\n")
        (h.workspace / "nested").mkdir()
        (h.workspace / "notes.txt").write_text("TOKEN-public\n")
        session = await h.run("look")
        assert session.status == "completed"
        [seen] = h.model.requests[-1].tool_results()
        assert SECRET not in seen.text
        assert "key.txt" not in seen.text
        # Refused outright when its arguments name the denied folder, else run and filtered.
        assert seen.text.startswith("Denied: deny rule Read(./secrets/**)") or "hidden: deny rules" in seen.text
        records = await h.host.store.list_tool_calls(session.id)
        assert SECRET not in (records[0].result or "")  # the transcript holds what the model saw


@on_the_pools_loop
async def test_a_search_that_reaches_nothing_denied_is_shown_whole(tmp_path, pool):
    call = ScriptedToolCall(name="mcp__file__grep", arguments={"pattern": "TOKEN"})
    permissions = SEARCHES | {"deny": ["Read(./secrets/**)"]}
    async with scripted_host(tmp_path, [Reply(tool_calls=[call]), Reply(text="ok")], permissions=permissions, pool=pool) as h:
        (h.workspace / "notes.txt").write_text("TOKEN-public\n")
        await h.run("look")
        [seen] = h.model.requests[-1].tool_results()
        assert seen.text == "notes.txt:1:TOKEN-public"
