"""The fence around other agents' folders (issue 19): what a call of one agent may not touch."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from backend.rules.agent_fence import AgentFence
from backend.rules.policy_engine import Evaluation, ToolCallView
from backend.rules.grammar import SHELL_TOOL

READ = "mcp__file__read_file"
WRITE = "mcp__file__write_file"
ALLOWED = Evaluation(verdict="allow", reason="allowed by rule", rule="Bash(cat *)", source="user")


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """main and reviewer side by side; reviewer holds a secret; data dir with agents/ folders."""
    main, reviewer = tmp_path / "main", tmp_path / "reviewer"
    agents = tmp_path / "data" / "agents"
    for folder in (main, reviewer, agents / "reviewer", agents / "helper" / "workspace"):
        folder.mkdir(parents=True)
    (reviewer / "secret.txt").write_text("s")
    (main / "mine.txt").write_text("m")
    return {"main": main, "reviewer": reviewer, "agents": agents, "helper": agents / "helper" / "workspace"}


def fence_for(layout: dict[str, Path], agent: str = "main") -> AgentFence:
    workspaces = {"main": layout["main"], "reviewer": layout["reviewer"], "helper": layout["helper"]}
    fence = AgentFence.build(agent, workspaces, layout["agents"])
    assert fence is not None
    return fence


def shell(command: str, workspace: Path) -> ToolCallView:
    return ToolCallView(name=SHELL_TOOL, arguments={"command": command}, workspace=workspace)


def reached(fence: AgentFence, view: ToolCallView) -> str | None:
    found = fence.reached(view)
    return found.owner if found is not None else None


@pytest.mark.parametrize(
    "command",
    [
        "cat ../reviewer/secret.txt",
        "cat ../reviewer/*.txt",
        "cat ../{main,reviewer}/secret.txt",
        "cd ../reviewer && cat secret.txt",
        "echo x > ../reviewer/owned.txt",
        "wc -l < ../reviewer/secret.txt",
        "grep -r key ../reviewer",
        "python3 -c \"print(open('../reviewer/secret.txt').read())\"",
        "sudo cat ../reviewer/secret.txt",
        "cp ../reviewer/secret.txt here.txt",
        "tar cf out.tar --directory=../reviewer .",
        "cat ../data/agents/reviewer/notes.md",
        "ls ../data/agents/helper/workspace",
    ],
)
def test_a_shell_command_reaching_another_agents_folder_is_reached(layout, command):
    assert reached(fence_for(layout), shell(command, layout["main"])) in ("reviewer", "helper")


def test_an_absolute_path_into_the_other_workspace_is_reached(layout):
    fence = fence_for(layout)
    assert reached(fence, shell(f"cat {layout['reviewer']}/secret.txt", layout["main"])) == "reviewer"
    assert reached(fence, ToolCallView(name=READ, arguments={"path": str(layout["reviewer"] / "secret.txt")},
                                       workspace=layout["main"])) == "reviewer"


def test_a_symlink_in_the_own_workspace_pointing_into_the_other_is_reached(layout):
    (layout["main"] / "link.txt").symlink_to(layout["reviewer"] / "secret.txt")
    (layout["main"] / "linkdir").symlink_to(layout["reviewer"])
    fence = fence_for(layout)
    assert reached(fence, shell("cat link.txt", layout["main"])) == "reviewer"
    assert reached(fence, shell("cat linkdir/secret.txt", layout["main"])) == "reviewer"
    assert reached(fence, shell("cat *.txt", layout["main"])) == "reviewer"  # the glob expands to the link
    assert reached(fence, ToolCallView(name=WRITE, arguments={"path": "linkdir/x", "content": "y"},
                                       workspace=layout["main"])) == "reviewer"


@pytest.mark.parametrize(
    "command",
    [
        "cat mine.txt",
        "ls -la",
        "cat ./mine.txt > copy.txt",
        "grep -r TODO .",
        "cd sub && make",
        "python3 -c 'print(1)'",
        "git commit -m 'ask the reviewer'",  # a word, not a path: only lines only running resolves count
        "cat ../data/agents",  # the agents folder itself lists names, not anyone's files
    ],
)
def test_the_own_workspace_is_untouched_by_the_fence(layout, command):
    assert reached(fence_for(layout), shell(command, layout["main"])) is None


def test_the_review_turns_any_verdict_into_a_deny_that_names_the_owner(layout):
    view = shell("cat ../reviewer/secret.txt", layout["main"])
    fence = fence_for(layout)
    for verdict in (ALLOWED, Evaluation(verdict="ask", reason="asks"), Evaluation(verdict="deny", reason="no")):
        denied = fence.review(view, verdict)
        assert denied.verdict == "deny" and denied.source == "agent_fence"
        assert "belongs to agent 'reviewer'; each agent works only in its own workspace" in denied.reason
    assert fence.review(shell("cat mine.txt", layout["main"]), ALLOWED) is ALLOWED


def test_a_line_only_running_resolves_that_names_another_agents_folder_is_denied(layout):
    fence = fence_for(layout)
    # Unparseable, `cd` elsewhere, `$VAR`: the targets are unknown, the name of a folder under agents/ counts.
    for command in ("cd .. && cat reviewer/secret.txt", "cat $D/reviewer/x", "cat 'unclosed reviewer"):
        assert reached(fence, shell(command, layout["main"])) == "reviewer", command
    assert reached(fence, shell("cd .. && ls", layout["main"])) is None


def test_the_other_agent_is_fenced_from_main_as_well(layout):
    fence = fence_for(layout, "reviewer")
    assert reached(fence, shell("cat ../main/mine.txt", layout["reviewer"])) == "main"
    assert reached(fence, shell("cat secret.txt; cat ../data/agents/reviewer/x", layout["reviewer"])) is None


def test_a_nested_workspace_is_fenced_for_the_outer_agent_and_the_rest_of_the_outer_for_the_inner(tmp_path):
    outer = tmp_path / "src"
    inner = outer / "review"
    inner.mkdir(parents=True)
    (outer / "app.py").write_text("a")
    (inner / "notes.md").write_text("n")
    workspaces = {"main": outer, "reviewer": inner}
    for_main = AgentFence.build("main", workspaces, tmp_path / "data" / "agents")
    for_reviewer = AgentFence.build("reviewer", workspaces, tmp_path / "data" / "agents")
    assert for_main is not None and for_reviewer is not None
    # main keeps its own workspace, but for the folder inside it that is reviewer's.
    assert reached(for_main, shell("cat app.py && ls", outer)) is None
    assert reached(for_main, shell("cat review/notes.md", outer)) == "reviewer"
    assert reached(for_main, shell("rm -rf ./*", outer)) == "reviewer"  # the glob expands to review/
    assert reached(for_main, shell(f"rm -rf {outer}", outer)) == "reviewer"  # holds reviewer's folder
    assert reached(for_main, shell("rm app.py", outer)) is None
    # reviewer works in its own folder, including by absolute path, but not in the rest of main's.
    assert reached(for_reviewer, shell(f"cat notes.md {inner}/notes.md; cd {inner} && ls", inner)) is None
    assert reached(for_reviewer, shell("cat ../app.py", inner)) == "main"
    assert reached(for_reviewer, ToolCallView(name=READ, arguments={"path": str(outer / "app.py")},
                                              workspace=inner)) == "main"


def test_a_single_agent_has_no_fence_and_pays_nothing(tmp_path):
    assert AgentFence.build("main", {"main": tmp_path}, tmp_path / "agents") is None


def test_the_fence_costs_well_under_a_millisecond_per_shell_call(layout):
    fence = fence_for(layout)
    view = shell("cat mine.txt | grep -n key > out.txt && ls -la src", layout["main"])
    fence.reached(view)  # the parse is cached, as the gate's repeated looks at one call are
    started = time.perf_counter()
    for _ in range(200):
        assert fence.reached(view) is None
    assert (time.perf_counter() - started) / 200 < 0.005  # bounded loosely: a shared, loaded machine


def test_the_gate_denies_a_fenced_call_whatever_the_global_agent_and_session_rules_allow(layout):
    from backend.approvals.gate import GateSession, ToolGate
    from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine
    from backend.rules.grammar import RuleSet

    policies = {**DEFAULT_POLICIES, SHELL_TOOL: "always_allow"}
    engine = PolicyEngine(RuleSet.from_config({"allow": ["Bash(cat *)"]}, source="user"), policies)
    # evaluate reads only the rules and the guards: nothing here runs, asks or stores.
    gate = ToolGate(policy=engine, broker=None, store=None, bus=None, tools=None, sessions=None)  # type: ignore[arg-type]
    session = GateSession(
        session_id="s1",
        workspace=layout["main"],
        rules=["Bash(cat *)"],
        agent_rules=RuleSet.from_config({"allow": ["Bash(cat *)"]}, source="agent:main"),
        fence=fence_for(layout),
    )
    denied = gate.evaluate(session, shell("cat ../reviewer/secret.txt", layout["main"]))
    assert denied.verdict == "deny" and "agent 'reviewer'" in denied.reason
    assert gate.evaluate(session, shell("cat mine.txt", layout["main"])).verdict == "allow"
    session.fence = None  # the same call with no fence: the rules alone would have run it
    assert gate.evaluate(session, shell("cat ../reviewer/secret.txt", layout["main"])).verdict == "allow"
