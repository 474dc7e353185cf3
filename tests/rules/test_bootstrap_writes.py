"""Which instruction files a call may write: file tools, any tool's paths, and shell commands."""

from __future__ import annotations

import os

import pytest

from backend.domain.tools import ToolAnnotations
from backend.rules.bootstrap_guard import INSTRUCTION_FILES
from backend.rules.bootstrap_writes import written_files
from tests.rules.support import EDIT, GLOB, LIST, READ, REPO, WRITE, call, shell

ALL = INSTRUCTION_FILES


def writes(view) -> tuple[str, ...]:
    return written_files(INSTRUCTION_FILES, view)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("AGENTS.md", ("AGENTS.md",)),
        ("./SOUL.md", ("SOUL.md",)),
        ("docs/../USER.md", ("USER.md",)),
        ("/repo/TOOLS.md", ("TOOLS.md",)),
        ("../repo/HEARTBEAT.md", ("HEARTBEAT.md",)),
        ("MEMORY.md", ("MEMORY.md",)),
        ("memory/MEMORY.md", ("memory/MEMORY.md",)),
        ("docs/AGENTS.md", ()),
        ("AGENTS.md.bak", ()),
        ("agents.md", ()),  # case matters: the file systems we run on are case-sensitive
        ("notes.txt", ()),
    ],
)
def test_a_file_write_counts_when_its_path_resolves_to_an_instruction_file(path, expected):
    assert writes(call(WRITE, path=path, content="x")) == expected
    assert writes(call(EDIT, path=path, old_text="a", new_text="b")) == expected


@pytest.mark.parametrize("tool", [READ, LIST, GLOB, "mcp__file__grep"])
def test_reading_an_instruction_file_is_not_writing_it(tool):
    assert writes(call(tool, path="AGENTS.md", pattern="*")) == ()


def test_a_write_through_a_symlink_to_an_instruction_file_counts(tmp_path):
    (tmp_path / "AGENTS.md").write_text("be careful\n")
    os.symlink("AGENTS.md", tmp_path / "notes.md")
    os.symlink(".", tmp_path / "here")
    assert writes(call(WRITE, tmp_path, path="notes.md", content="x")) == ("AGENTS.md",)
    assert writes(call(WRITE, tmp_path, path="here/SOUL.md", content="x")) == ("SOUL.md",)


def test_writing_the_file_an_instruction_symlink_points_at_counts(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (shared / "agents.md").write_text("team rules\n")
    os.symlink(shared / "agents.md", workspace / "AGENTS.md")
    assert writes(shell(f"echo x > {shared}/agents.md", workspace)) == ("AGENTS.md",)


def test_the_memory_servers_tools_write_memory_through_their_own_path():
    assert writes(call("mcp__memory__memory_save", fact="AGENTS.md is long", path="memory/MEMORY.md")) == ()


def test_any_tool_that_may_change_something_counts_by_its_path_arguments():
    assert writes(call("mcp__fs__move_file", source="draft.md", destination="USER.md")) == ("USER.md",)
    assert writes(call("mcp__fs__delete_paths", paths=["a.txt", "SOUL.md"])) == ("SOUL.md",)
    # A tool that removes things counts a folder holding an instruction file too.
    assert writes(call("mcp__fs__delete_directory", path="memory")) == ("memory/MEMORY.md",)
    assert writes(call("mcp__fs__create_directory", path="memory")) == ()


def test_a_read_only_tool_of_another_server_does_not_count():
    read_only = ToolAnnotations(readOnlyHint=True, destructiveHint=False)
    assert writes(call("mcp__fs__read_text_file", annotations=read_only, path="AGENTS.md")) == ()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo x > SOUL.md", ("SOUL.md",)),
        ("echo x >> ./AGENTS.md", ("AGENTS.md",)),
        ("printf x >| memory/MEMORY.md", ("memory/MEMORY.md",)),
        ("cat > USER.md <<EOF\nhello\nEOF", ("USER.md",)),
        ("sed -i 's/old/new/' AGENTS.md", ("AGENTS.md",)),
        ("sed -Ei.bak 's/a/b/' TOOLS.md", ("TOOLS.md",)),
        ("echo note | tee -a SOUL.md", ("SOUL.md",)),
        ("rm USER.md", ("USER.md",)),
        ("rm -f docs/../HEARTBEAT.md", ("HEARTBEAT.md",)),
        ("truncate -s 0 TOOLS.md", ("TOOLS.md",)),
        ("dd if=/dev/zero of=AGENTS.md count=1", ("AGENTS.md",)),
        ("mv AGENTS.md old.md", ("AGENTS.md",)),
        ("mv draft.md SOUL.md", ("SOUL.md",)),
        ("cp /tmp/x USER.md", ("USER.md",)),
        ("cp /tmp/AGENTS.md .", ("AGENTS.md",)),
        ("ln -sf /tmp/evil AGENTS.md", ("AGENTS.md",)),
        ("rm -rf memory", ("memory/MEMORY.md",)),
        ("rm {AGENTS,SOUL}.md", ("AGENTS.md", "SOUL.md")),
        ("git checkout AGENTS.md", ("AGENTS.md",)),
        ("sudo tee USER.md < /tmp/x", ("USER.md",)),
        ("bash -c 'echo hi > USER.md'", ("USER.md",)),
        ("python3 -c \"open('AGENTS.md', 'w').write('x')\"", ("AGENTS.md",)),
        ("awk '{print > \"SOUL.md\"}' notes.txt", ("SOUL.md",)),
        ("sed -n 'w TOOLS.md' notes.txt", ("TOOLS.md",)),
        ("F=AGENTS.md; echo x > \"$F\"", ("AGENTS.md",)),
        ("cd docs && echo x > ../AGENTS.md", ("AGENTS.md",)),
        ("echo AGENTS.md | xargs rm", ("AGENTS.md",)),
        ("vim SOUL.md", ("SOUL.md",)),
        ("gawk -i inplace '{print toupper($0)}' AGENTS.md", ("AGENTS.md",)),
        ("uniq notes.txt USER.md", ("USER.md",)),
        ("sort -o TOOLS.md notes.txt", ("TOOLS.md",)),
    ],
)
def test_a_shell_command_that_may_write_an_instruction_file_names_it(command, expected):
    assert writes(shell(command)) == expected


@pytest.mark.parametrize(
    "command",
    ["rm -rf .", "rm -rf *", "rm -rf /", "rm -rf ..", "find . -delete", "cp -r /tmp/template/. .", "git checkout -- ."],
)
def test_a_shell_command_that_may_replace_the_whole_workspace_names_every_file(command):
    assert writes(shell(command)) == ALL


@pytest.mark.parametrize(
    "command",
    [
        "cat AGENTS.md",
        "head -n 5 SOUL.md && tail USER.md",
        "grep -n rule AGENTS.md TOOLS.md | wc -l",
        "sed -n 1,20p AGENTS.md",
        "awk '{print $1}' MEMORY.md",
        "cat AGENTS.md > /tmp/copy.md",
        "cp AGENTS.md /tmp/backup.md",
        "diff AGENTS.md docs/AGENTS.md",
        "find . -name AGENTS.md",
        "find . -name '*.md' -exec grep -l rule {} +",
        "git add AGENTS.md && git commit -m 'update AGENTS.md'",
        "git diff -- SOUL.md",
        "rm docs/AGENTS.md",
        "echo x > AGENTS.md.bak",
        "echo x > \"$OUT\"",
        "ls -la",
        "npm test",
        "python script.py",
    ],
)
def test_reading_or_writing_other_files_does_not_count(command):
    assert writes(shell(command)) == ()


def test_a_command_that_is_not_a_string_counts_for_nothing():
    assert writes(call("mcp__shell__exec", command=["rm", "AGENTS.md"])) == ()


def test_only_the_files_asked_for_are_looked_for():
    assert written_files(("SOUL.md",), shell("rm AGENTS.md SOUL.md")) == ("SOUL.md",)
    assert written_files((), shell("rm -rf .")) == ()
    assert written_files(("docs/RULES.md",), shell("rm -r docs", REPO)) == ("docs/RULES.md",)


def test_a_workspace_or_folder_reached_through_a_symlink_is_the_same_place(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    assert writes(call(WRITE, tmp_path / "link", path=f"{real}/AGENTS.md", content="x")) == ("AGENTS.md",)
    assert writes(shell(f"rm {tmp_path}/link/SOUL.md", real)) == ("SOUL.md",)
    (real / "notes").mkdir()
    os.symlink(real / "notes", real / "memory")
    assert writes(call(WRITE, real, path="notes/MEMORY.md", content="x")) == ("memory/MEMORY.md",)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("overseer.yaml", ("overseer.yaml",)),
        (".mcp.json", (".mcp.json",)),
        (".overseer/skills/a/SKILL.md", (".overseer/skills/",)),
        ("./.overseer/skills/a/scripts/run.sh", (".overseer/skills/",)),
        (".overseer/modes/mine.md", (".overseer/modes/",)),
        (".overseer/spill/call-1.txt", ()),
        (".overseer/memory-index.sqlite", ()),
        ("docs/overseer.yaml", ()),
        (".overseer/skillset/x", ()),
    ],
)
def test_the_workspaces_own_host_configuration_counts_folders_by_everything_inside(path, expected):
    assert writes(call(WRITE, path=path, content="x")) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo x > .overseer/skills/a/SKILL.md", (".overseer/skills/",)),
        ("mkdir -p .overseer/skills/new", (".overseer/skills/",)),
        ("cp /tmp/evil.md .overseer/skills/a/", (".overseer/skills/",)),
        ("cd .overseer && echo x > skills/a/SKILL.md", (".overseer/skills/",)),
        ("echo x > .overseer/*/a/SKILL.md", (".overseer/skills/", ".overseer/modes/")),
        ("rm -rf .overseer", (".overseer/skills/", ".overseer/modes/")),
        ("tee overseer.yaml < /tmp/x", ("overseer.yaml",)),
        ("rm -rf .overseer/spill", ()),
        ("echo x > .overseer/spill/out.txt", ()),
        ("cat .overseer/skills/a/SKILL.md", ()),
    ],
)
def test_a_shell_command_reaching_into_an_instruction_folder_names_it(command, expected):
    assert writes(shell(command)) == expected
