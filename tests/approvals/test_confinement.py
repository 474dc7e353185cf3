"""The sandbox each command gets (issue 29): made from the rules, the session and the host's
settings, and what is checked after the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.domain.tools import ToolResult
from backend.rules.agent_fence import AgentFence
from backend.approvals.confinement import Confinement, ConfinementError, concrete_paths
from backend.rules.path_match import PathPattern
from backend.rules.policy_engine import DEFAULT_POLICIES, Evaluation, PolicyEngine
from backend.rules.grammar import RuleSet
from backend.sandbox.launcher import Sandbox, SandboxStatus, detect

EXEC = "mcp__shell__exec"


def engine(deny: list[str] | None = None) -> PolicyEngine:
    return PolicyEngine(RuleSet.from_config({"deny": deny or []}, source="user"), dict(DEFAULT_POLICIES))


def confinement(tmp_path: Path, **options: object) -> Confinement:
    return Confinement(
        sandbox=Sandbox(detect("bwrap")),
        data_dir=tmp_path / "data",
        instruction_files=("AGENTS.md", "memory/MEMORY.md"),
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text("k")
    (root / "pkg" / "a").mkdir(parents=True)
    (root / "pkg" / "a" / ".env").write_text("TOKEN=1")
    (root / "AGENTS.md").write_text("rules")
    return root


def argv_of(plan_launch: dict[str, object]) -> list[str]:
    argv = plan_launch["argv"]
    assert isinstance(argv, list)
    return argv


def test_instruction_files_and_write_denied_paths_are_read_only_and_read_denied_ones_emptied(
    tmp_path: Path, workspace: Path
) -> None:
    policy = engine(deny=["Read(./secrets/**)", "Read(.env)", "Edit(./pkg/**)"])
    argv = argv_of(confinement(tmp_path).plan(workspace=workspace, policy=policy).launch)
    joined = " ".join(argv)
    assert f"--tmpfs {workspace}/secrets" in joined and f"--remount-ro {workspace}/secrets" in joined
    assert f"--ro-bind /dev/null {workspace}/pkg/a/.env" in joined
    assert f"--ro-bind {workspace}/AGENTS.md {workspace}/AGENTS.md" in joined
    assert f"--ro-bind {workspace}/pkg {workspace}/pkg" in joined


def test_an_instruction_change_a_person_allowed_leaves_just_that_file_writable(tmp_path: Path, workspace: Path) -> None:
    (workspace / "memory").mkdir()
    (workspace / "memory" / "MEMORY.md").write_text("m")
    plan = confinement(tmp_path).plan(workspace=workspace, policy=engine(), unprotect=["AGENTS.md"])
    joined = " ".join(argv_of(plan.launch))
    assert f"{workspace}/AGENTS.md" not in joined
    assert f"--ro-bind {workspace}/memory/MEMORY.md" in joined


def test_the_data_dir_and_other_agents_folders_are_hidden_even_inside_the_workspace(tmp_path: Path) -> None:
    root = (tmp_path / "home").resolve()
    (root / "data").mkdir(parents=True)
    agents = root / "agents"
    for name in ("alpha", "bravo"):
        (agents / name).mkdir(parents=True)
    fence = AgentFence.build("alpha", {"alpha": root, "bravo": agents / "bravo"}, agents)
    plan = Confinement(sandbox=Sandbox(detect("bwrap")), data_dir=root / "data").plan(
        workspace=root, policy=engine(), fence=fence
    )
    joined = " ".join(argv_of(plan.launch))
    assert f"--tmpfs {root}/data" in joined
    assert f"--tmpfs {agents}/bravo" in joined
    assert f"--tmpfs {agents}/alpha " not in joined + " "


def test_a_checkpoints_folder_moved_out_of_the_data_dir_is_hidden_too(tmp_path: Path) -> None:
    root = (tmp_path / "home").resolve()
    (root / "shared" / "checkpoints").mkdir(parents=True)
    plan = Confinement(
        sandbox=Sandbox(detect("bwrap")), data_dir=tmp_path / "data", hidden=(root / "shared" / "checkpoints",)
    ).plan(workspace=root, policy=engine())
    assert f"--tmpfs {root}/shared/checkpoints" in " ".join(argv_of(plan.launch))


def test_a_created_instruction_file_is_moved_to_quarantine_and_the_result_says_so(
    tmp_path: Path, workspace: Path
) -> None:
    rules = confinement(tmp_path)
    plan = rules.plan(workspace=workspace, policy=engine())
    assert workspace / "memory" / "MEMORY.md" in plan.absent
    (workspace / "memory").mkdir()
    (workspace / "memory" / "MEMORY.md").write_text("planted")
    result = rules.after(plan, ToolResult(text="[exit code 0]"), session_id="s1")
    assert result.is_error and "write_file" in result.text
    assert not (workspace / "memory" / "MEMORY.md").exists()
    [kept] = (tmp_path / "data" / "quarantine" / "s1").rglob("MEMORY.md")
    assert kept.read_text() == "planted"


def test_nothing_created_leaves_the_result_as_it_was(tmp_path: Path, workspace: Path) -> None:
    rules = confinement(tmp_path)
    plan = rules.plan(workspace=workspace, policy=engine())
    result = ToolResult(text="fine")
    assert rules.after(plan, result, session_id="s1") is result


def test_a_pattern_too_wide_to_check_refuses_the_command(tmp_path: Path, workspace: Path, monkeypatch) -> None:
    monkeypatch.setattr("backend.approvals.confinement.MAX_PATTERN_ENTRIES", 3)
    for i in range(5):
        (workspace / f"f{i}").write_text("x")
    with pytest.raises(ConfinementError, match="anchor it to a folder"):
        confinement(tmp_path).plan(workspace=workspace, policy=engine(deny=["Read(*.pem)"]))


def test_an_anchored_folder_pattern_is_named_whole_without_a_walk(workspace: Path) -> None:
    found = concrete_paths(PathPattern.parse("./secrets/**"), workspace, [workspace])
    assert found == [workspace / "secrets"]
    assert concrete_paths(PathPattern.parse("./missing/**"), workspace, [workspace]) == []


def test_auto_allow_lets_a_command_left_to_the_default_question_run(tmp_path: Path) -> None:
    rules = confinement(tmp_path, auto_allow=True)
    asked = Evaluation(verdict="ask", reason="policy mcp__shell__exec = ask (default)", source="default")
    decided = rules.review(EXEC, asked)
    assert decided.verdict == "allow" and decided.source == "sandbox.auto_allow"


@pytest.mark.parametrize(
    "evaluation",
    [
        Evaluation(verdict="ask", reason="ask rule", rule="Bash(git push *)", source="user"),
        Evaluation(verdict="deny", reason="deny rule", rule="Bash(rm *)", source="user"),
        Evaluation(verdict="ask", reason="policy", source="config"),
    ],
)
def test_auto_allow_leaves_rules_and_configured_policies_to_decide(tmp_path: Path, evaluation: Evaluation) -> None:
    assert confinement(tmp_path, auto_allow=True).review(EXEC, evaluation) is evaluation


def test_auto_allow_does_nothing_when_commands_run_unconfined(tmp_path: Path) -> None:
    off = Confinement(
        sandbox=Sandbox(SandboxStatus(backend="off", detail="test")), data_dir=tmp_path, auto_allow=True
    )
    asked = Evaluation(verdict="ask", reason="default", source="default")
    assert off.review(EXEC, asked) is asked
    assert off.plan(workspace=tmp_path, policy=engine()).launch == {"unconfined": True, "backend": "off"}
