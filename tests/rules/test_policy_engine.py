"""PolicyEngine: RULES.md's examples and every clause of "Evaluation of one call"."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from backend.domain.tools import ToolAnnotations
from backend.domain.tool_pins import ToolChange
from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine, ToolCallView, is_read_only

from .support import EDIT, GLOB, LIST, NAVIGATE, READ, REPO, SHELL, WRITE, call, decide, rules, shell

# RULES.md "Examples" (default mode, workspace /repo), one case per row.
TABLE = [
    ({"allow": ["Bash(npm run build)"]}, shell("npm run build --watch"), "ask"),
    ({"allow": ["Bash(npm run test:*)"]}, shell("npm run test -- --watch"), "allow"),
    ({"allow": ["Bash(safe-cmd *)"]}, shell("safe-cmd && other-cmd"), "ask"),
    ({"allow": ["Bash(git status)", "Bash(npm test)"]}, shell("git status && npm test"), "allow"),
    ({"allow": ["Bash(npm test *)"]}, shell("npm test | sh"), "ask"),
    ({"allow": ["Bash"], "deny": ["Bash(rm *)"]}, shell("echo ok && rm -rf build"), "deny"),
    ({"deny": ["Bash(rm *)"]}, shell('echo "$(rm -rf build)"'), "deny"),
    ({"deny": ["Bash(rm *)"]}, shell("FOO=bar rm -rf tmp/"), "deny"),
    ({"allow": ["Bash(npm test *)"]}, shell("timeout 30 npm test"), "allow"),
    ({"allow": ["Bash(git commit *)"]}, shell("git commit -m x > /etc/motd"), "ask"),
    ({"allow": ["Bash(aws s3 ls)"], "deny": ["Bash(aws *)"]}, shell("aws s3 ls"), "deny"),
    (
        {"allow": ["Bash(git push origin main)"], "ask": ["Bash(git push *)"]},
        shell("git push origin main"),
        "ask",
    ),
    ({"deny": ["Read(.env)"]}, call(READ, path="/repo/pkg/a/.env"), "deny"),
    ({"deny": ["Read(//etc/**)"]}, call(READ, path="/etc/passwd"), "deny"),
    ({"allow": ["Edit(src/**)"]}, call(WRITE, path="/repo/src/../.env", content="x"), "ask"),
    ({"deny": ["Read(./secrets/**)"]}, call(WRITE, path="/repo/secrets/new.txt", content="x"), "deny"),
    ({"allow": ["mcp__github"]}, call("mcp__github__create_issue", title="t"), "allow"),
    ({"allow": ["mcp__*"]}, call("mcp__github__get_issue", number=1), "ask"),
    ({"allow": ["WebFetch(domain:*.example.com)"]}, call(NAVIGATE, url="https://example.com/"), "ask"),
]


@pytest.mark.parametrize(("config", "tool_call", "answer"), TABLE, ids=[str(i) for i in range(len(TABLE))])
def test_rules_md_example_gives_the_documented_answer(config, tool_call, answer):
    assert decide(tool_call, **config).verdict == answer


# --- precedence -------------------------------------------------------------------------


def test_deny_beats_allow_whatever_the_order_or_specificity():
    result = decide(shell("git push origin main"), allow=["Bash(git push origin main)"], deny=["Bash(git *)"])
    assert (result.verdict, result.rule, result.source) == ("deny", "Bash(git *)", "user")


def test_a_tilde_user_path_is_denied_by_a_path_deny_rule_it_might_reach():
    # `~root/repo/secrets/key` was a harmless relative name to the rules, the secret to the server.
    result = decide(call(READ, path="~root/repo/secrets/key"), allow=["Read(**)"], deny=["Read(./secrets/**)"])
    assert (result.verdict, result.rule) == ("deny", "Read(./secrets/**)")
    assert "fails closed" in result.reason


def test_ask_rule_beats_a_more_specific_allow_rule():
    result = decide(shell("npm publish"), allow=["Bash(npm publish)"], ask=["Bash(npm *)"])
    assert (result.verdict, result.rule) == ("ask", "Bash(npm *)")


def test_deny_rules_are_pooled_from_every_source():
    engine = PolicyEngine(rules(allow=["Bash"], source="user")).with_rules(
        rules(deny=["Bash(curl *)"], source="workspace")
    )
    result = engine.evaluate(shell("curl evil.sh"))
    assert (result.verdict, result.source) == ("deny", "workspace")


def test_session_rules_apply_to_that_evaluation_only():
    engine = PolicyEngine(rules())
    session = rules(allow=["Bash(make *)"], source="session")
    assert engine.evaluate(shell("make all"), session_rules=session).verdict == "allow"
    assert engine.evaluate(shell("make all")).verdict == "ask"


def test_with_rules_returns_a_new_engine_and_leaves_the_old_one_alone():
    engine = PolicyEngine(rules())
    wider = engine.with_rules(rules(allow=["Bash(ls *)"]))
    assert wider.evaluate(shell("ls -la")).verdict == "allow"
    assert engine.evaluate(shell("ls -la")).verdict == "ask"


def test_deny_reason_names_the_rule_and_its_source():
    result = decide(shell("rm -rf build"), deny=["Bash(rm *)"])
    assert result.reason.startswith("deny rule Bash(rm *) (user)")


def test_policy_reason_names_key_value_and_source():
    result = decide(call(WRITE, path="a.txt", content=""))
    assert (result.verdict, result.reason, result.source) == (
        "ask",
        "policy mcp__file__write_file = ask (default)",
        "default",
    )


def test_call_nothing_covers_asks():
    result = decide(call("mcp__github__get_issue", number=1))
    assert (result.verdict, result.reason, result.rule) == ("ask", "no rule or policy matched: ask", None)


# --- shell commands -----------------------------------------------------------------------


def test_allow_needs_every_part_of_a_pipeline_list_to_match():
    allow = ["Bash(git status)", "Bash(grep *)"]
    assert decide(shell("git status | grep M"), allow=allow).verdict == "allow"
    assert decide(shell("git status | grep M; curl x"), allow=allow).verdict == "ask"
    assert decide(shell("git status & curl x"), allow=allow).verdict == "ask"
    assert decide(shell("git status\ncurl x"), allow=allow).verdict == "ask"


@pytest.mark.parametrize(
    "command",
    [
        'echo "$(rm -rf build)"',
        "echo `rm -rf build`",
        "(cd x && rm -rf build)",
        "for f in a b; do rm -rf $f; done",
        "while true; do rm -rf x; done",
        "if true; then rm -rf x; fi",
        "f() { rm -rf x; }; f",
        "diff <(rm -rf x) y",
        "X=$(rm -rf x) make",
        "cat <<EOF\n$(rm -rf x)\nEOF",
    ],
)
def test_deny_rule_inside_nested_command_denies(command):
    assert decide(shell(command), allow=["Bash"], deny=["Bash(rm *)"]).verdict == "deny"


def test_ask_rule_inside_command_substitution_asks():
    result = decide(shell("echo $(git push origin main)"), allow=["Bash"], ask=["Bash(git push *)"])
    assert result.verdict == "ask"


def test_allow_rule_does_not_cover_a_command_hidden_in_a_substitution():
    assert decide(shell('echo "$(curl evil)"'), allow=["Bash(echo *)"]).verdict == "ask"
    assert decide(shell('echo "$(date)"'), allow=["Bash(echo *)", "Bash(date)"]).verdict == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "/bin/rm -rf x",
        "/usr/bin/rm -rf x",
        '"rm" -rf x',
        "'r'm -rf x",
        "r\\m -rf x",
        "sudo rm -rf x",
        "sudo -u root -- rm -rf x",
        "env FOO=1 rm -rf x",
        "exec rm -rf x",
        "sh -c 'rm -rf x'",
        "bash -lc 'echo hi; rm -rf x'",
        "sudo sh -c 'timeout 5 rm -rf x'",
        "eval 'rm -rf x'",
        "nice -n 5 nohup rm -rf x",
        "timeout -s KILL 30 rm -rf x",
        "command rm -rf x",
        "builtin rm -rf x",
        "xargs rm -rf < list",
        "find . -name '*.o' -exec rm -rf {} +",
        "env -S 'rm -rf x'",
    ],
)
def test_deny_rule_sees_through_paths_quotes_and_wrappers(command):
    assert decide(shell(command), allow=["Bash"], deny=["Bash(rm *)"]).verdict == "deny"


@pytest.mark.parametrize(
    "command",
    ["git -C ../other push --force", "git -c user.name=x --no-pager push origin main", "/usr/bin/git push"],
)
def test_deny_rule_skips_git_global_options(command):
    assert decide(shell(command), allow=["Bash"], deny=["Bash(git push *)"]).verdict == "deny"


def test_allow_rule_must_also_cover_commands_run_on_the_lines_behalf():
    assert decide(shell("find . -exec rm {} +"), allow=["Bash(find *)"]).verdict == "ask"
    assert (
        decide(shell("find . -exec grep -l x {} +"), allow=["Bash(find *)", "Bash(grep *)"]).verdict
        == "allow"
    )
    assert decide(shell("sh -c 'npm test'"), allow=["Bash(sh *)"]).verdict == "ask"
    assert decide(shell("sh -c 'npm test'"), allow=["Bash(sh *)", "Bash(npm test)"]).verdict == "allow"


def test_redirect_inside_a_shell_string_is_a_write_too():
    assert decide(shell("sh -c 'echo x > /etc/motd'"), allow=["Bash"]).verdict == "ask"
    assert decide(shell("sh -c 'echo x > .env'"), allow=["Bash"], deny=["Read(.env)"]).verdict == "deny"


def test_deny_rule_does_not_fire_on_a_mere_mention():
    assert decide(shell("echo rm -rf x"), allow=["Bash"], deny=["Bash(rm *)"]).verdict == "allow"
    assert decide(shell("git log --grep push"), allow=["Bash"], deny=["Bash(git push *)"]).verdict == "allow"


def test_allow_rule_does_not_look_through_sudo():
    assert decide(shell("sudo ls"), allow=["Bash(ls *)"]).verdict == "ask"


@pytest.mark.parametrize(
    "command",
    ["timeout 30 npm test", "time npm test", "nice -n 10 npm test", "nohup npm test", "command npm test"],
)
def test_allow_rule_sees_past_harmless_wrappers(command):
    assert decide(shell(command), allow=["Bash(npm test *)"]).verdict == "allow"


def test_allow_rule_sees_past_known_safe_variables_only():
    assert decide(shell("NODE_ENV=test CI=1 npm test"), allow=["Bash(npm test *)"]).verdict == "allow"
    assert decide(shell("PAGER='sh -c evil' git log"), allow=["Bash(git log *)"]).verdict == "ask"
    assert decide(shell("LD_PRELOAD=x.so npm test"), allow=["Bash(npm test *)"]).verdict == "ask"


def test_any_variable_assignment_is_stripped_for_deny():
    assert decide(shell("LD_PRELOAD=x.so PAGER=y rm -rf x"), deny=["Bash(rm *)"]).verdict == "deny"


def test_redirect_outside_the_workspace_is_a_write_that_needs_approval():
    result = decide(shell("echo hi > /etc/motd"), allow=["Bash(echo *)"])
    assert result.verdict == "ask"


@pytest.mark.parametrize(
    "command", ["echo hi >&/etc/motd", "echo hi >& /etc/motd", "echo hi &>/etc/motd", "echo hi 2>>/etc/motd"]
)
def test_ampersand_redirects_to_a_file_are_writes_not_deleted_tokens(command):
    assert decide(shell(command), allow=["Bash(echo *)"]).verdict == "ask"


@pytest.mark.parametrize(
    "command",
    ["echo hi 2>&1", "echo hi >&2", "echo hi > /dev/null 2>&1", "echo hi >&-", "cat <<EOF\nhi\nEOF"],
)
def test_descriptor_duplication_dev_null_and_here_docs_are_not_writes(command):
    assert decide(shell(command), allow=["Bash(echo *)", "Bash(cat)"]).verdict == "allow"


def test_redirect_covered_by_an_edit_allow_rule_is_allowed():
    allow = ["Bash(npm test *)", "Edit(logs/**)"]
    assert decide(shell("npm test > logs/out.txt"), allow=allow).verdict == "allow"
    assert decide(shell("npm test > other.txt"), allow=allow).verdict == "ask"


def test_redirect_to_a_path_an_edit_deny_covers_is_denied():
    result = decide(shell("echo x > .git/config"), allow=["Bash"], deny=["Edit(.git/**)"])
    assert (result.verdict, result.rule) == ("deny", "Edit(.git/**)")


def test_read_deny_also_blocks_redirect_writes():
    assert decide(shell("echo x >> .env"), allow=["Bash"], deny=["Read(.env)"]).verdict == "deny"


def test_redirect_inside_workspace_is_allowed_where_writes_are_always_allow():
    mode_policies = {WRITE: "always_allow"}
    allow = ["Bash(npm test *)"]
    assert decide(shell("npm test > out.txt"), allow=allow, mode_policies=mode_policies).verdict == "allow"
    assert decide(shell("npm test > /etc/out.txt"), allow=allow, mode_policies=mode_policies).verdict == "ask"


def test_redirect_target_known_only_at_run_time_is_never_allowed():
    assert decide(shell("echo x > $HOME/.bashrc"), allow=["Bash", "Edit"]).verdict == "ask"


def test_redirect_target_known_only_at_run_time_asks_when_a_path_deny_cannot_be_checked():
    result = decide(shell("echo x > $TARGET"), deny=["Edit(.git/**)"], policies={SHELL: "always_allow"})
    assert (result.verdict, result.rule) == ("ask", "Edit(.git/**)")


def test_relative_redirect_after_cd_is_not_known_beforehand():
    allow = ["Bash(cd *)", "Bash(echo *)", "Edit(out/**)"]
    assert decide(shell("echo x > out/a"), allow=allow).verdict == "allow"
    assert decide(shell("cd /etc && echo x > out/a"), allow=allow).verdict == "ask"


def test_whole_edit_deny_blocks_every_redirect_write():
    assert decide(shell("ls > files.txt"), allow=["Bash"], deny=["Edit"]).verdict == "deny"


def test_invisible_characters_never_match_an_allow_rule():
    for command in ["echo hi\u200b", "echo\u00a0hi", "echo hi\u202e", "echo hi\r"]:
        assert decide(shell(command), allow=["Bash(echo *)", "Bash"]).verdict == "ask", command


def test_command_over_ten_thousand_characters_never_matches_an_allow_rule():
    assert decide(shell("echo " + "a" * 9_990), allow=["Bash(echo *)"]).verdict == "allow"
    assert decide(shell("echo " + "a" * 10_000), allow=["Bash(echo *)"]).verdict == "ask"


def test_deny_rule_still_applies_to_a_very_long_command():
    command = "echo " + "a" * 20_000 + " && rm -rf /"
    assert decide(shell(command), deny=["Bash(rm *)"]).verdict == "deny"


def test_unparseable_command_never_matches_an_allow_rule():
    assert decide(shell('echo "unterminated'), allow=["Bash(echo *)", "Bash"]).verdict == "ask"


def test_deny_rule_is_checked_textually_in_an_unparseable_command():
    result = decide(shell("[[ -d build ]] && rm -rf build"), allow=["Bash"], deny=["Bash(rm *)"])
    assert result.verdict == "deny"


def test_unparseable_command_that_a_deny_rule_cannot_check_asks_even_under_always_allow():
    result = decide(shell("[[ -d build ]] && make"), deny=["Bash(rm *)"], policies={SHELL: "always_allow"})
    assert (result.verdict, result.rule) == ("ask", "Bash(rm *)")
    assert "could not be checked" in result.reason


def test_unparseable_command_asks_when_a_write_deny_cannot_be_checked():
    result = decide(
        shell("[[ -n x ]] && echo x > .env"), deny=["Read(.env)"], policies={SHELL: "always_allow"}
    )
    assert (result.verdict, result.rule) == ("ask", "Read(.env)")


def test_unparseable_command_is_still_denied_by_a_deny_policy():
    result = decide(shell("[[ -n x ]] && make"), deny=["Bash(rm *)"], policies={SHELL: "deny"})
    assert (result.verdict, result.source) == ("deny", "config")


@pytest.mark.parametrize(
    "command",
    [
        "$'r\\x6d' -rf x",
        "$'\\162\\155' -rf x",
        "sh -c 'echo '\"'\"'hi'\"'\"'; rm -rf x'",
        "sh -c 'sh -c '\"'\"'rm -rf x'\"'\"''",
    ],
)
def test_deny_rule_sees_through_ansi_c_and_nested_quoting(command):
    assert decide(shell(command), allow=["Bash"], deny=["Bash(rm *)"]).verdict == "deny"


def test_nested_quoting_that_parses_cleanly_can_still_be_allowed():
    command = "sh -c 'echo '\"'\"'hi'\"'\"''"
    assert decide(shell(command), allow=["Bash(sh *)", "Bash(echo *)"]).verdict == "allow"


def test_shell_rule_with_a_non_string_command_fails_closed():
    assert decide(shell(["rm", "-rf", "/"]), deny=["Bash(rm *)"]).verdict == "deny"
    assert decide(shell(None), ask=["Bash(git push *)"]).verdict == "ask"
    assert decide(shell(42), allow=["Bash(ls *)"], policies={}).verdict == "ask"


def test_time_keyword_is_a_wrapper_even_though_bashlex_rejects_it():
    assert decide(shell("time rm -rf x"), deny=["Bash(rm *)"]).verdict == "deny"
    assert decide(shell("time -p make"), allow=["Bash(make *)"]).verdict == "allow"


# --- paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "answer"),
    [
        (".env", "/repo/.env", "deny"),
        (".env", "/repo/deep/er/.env", "deny"),
        ("/.env", "/repo/pkg/.env", "allow"),
        ("./config/*.json", "/repo/config/a.json", "deny"),
        ("./config/*.json", "/repo/config/sub/a.json", "allow"),
        ("config/**", "/repo/config/sub/a.json", "deny"),
        ("config/**", "/repo/pkg/config/a.json", "allow"),
        ("//etc/**", "/etc/ssl/certs/x", "deny"),
        ("*.pem", "/repo/keys/server.pem", "deny"),
    ],
)
def test_read_deny_path_patterns_anchor_like_gitignore(pattern, path, answer):
    assert decide(call(READ, path=path), deny=[f"Read({pattern})"]).verdict == answer


def test_home_pattern_matches_under_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert decide(call(READ, path=str(tmp_path / ".ssh/id_rsa")), deny=["Read(~/.ssh/**)"]).verdict == "deny"
    assert decide(call(READ, path="~/.ssh/id_rsa"), deny=["Read(~/.ssh/**)"]).verdict == "deny"


def test_relative_path_arguments_resolve_against_the_workspace():
    assert decide(call(READ, path="secrets/a"), deny=["Read(/secrets/**)"]).verdict == "deny"
    assert decide(call(READ, path="docs/../secrets/a"), deny=["Read(/secrets/**)"]).verdict == "deny"


def test_dot_dot_is_resolved_before_an_allow_rule_matches():
    result = decide(
        call(EDIT, path="src/../../etc/passwd", old_text="a", new_text="b"), allow=["Edit(src/**)"]
    )
    assert result.verdict == "ask"


def test_read_deny_blocks_edits_but_edit_deny_does_not_block_reads():
    assert decide(call(EDIT, path=".env", old_text="a", new_text="b"), deny=["Read(.env)"]).verdict == "deny"
    assert decide(call(READ, path=".env"), deny=["Edit(.env)"]).verdict == "allow"


def test_carve_out_removes_paths_from_a_deny_list():
    deny = ["Read(.env*)", "Read(!.env.example)"]
    assert decide(call(READ, path="pkg/.env.example"), deny=deny).verdict == "allow"
    assert decide(call(READ, path="pkg/.env.local"), deny=deny).verdict == "deny"


def test_carve_out_removes_paths_from_an_ask_list():
    ask = ["Edit(src/**)", "Edit(!src/generated/**)"]
    allow = ["Edit(src/**)"]
    assert decide(call(WRITE, path="src/generated/a.py", content=""), ask=ask, allow=allow).verdict == "allow"
    assert decide(call(WRITE, path="src/a.py", content=""), ask=ask, allow=allow).verdict == "ask"


def test_carve_out_from_another_source_does_not_open_a_deny():
    engine = PolicyEngine(rules(deny=["Read(.env*)"], source="user")).with_rules(
        rules(deny=["Read(!.env.example)"], source="workspace")
    )
    assert engine.evaluate(call(READ, path=".env.example")).verdict == "deny"


def test_listing_a_denied_directory_is_denied():
    assert decide(call(LIST, path="secrets"), deny=["Read(secrets/**)"]).verdict == "deny"
    assert decide(call(LIST, path="."), deny=["Read(secrets/**)"]).verdict == "allow"


@pytest.mark.parametrize("pattern", ["../../etc/*", "/etc/*.conf", "/etc"])
def test_glob_pattern_climbing_out_of_its_path_is_checked(pattern):
    assert decide(call(GLOB, pattern=pattern, path="."), deny=["Read(//etc/**)"]).verdict == "deny"
    assert decide(call(GLOB, pattern="src/**/*.py", path="."), deny=["Read(//etc/**)"]).verdict == "allow"


def test_path_rule_with_a_missing_or_odd_path_fails_closed():
    assert decide(call(READ), deny=["Read(.env)"]).verdict == "deny"
    assert decide(call(READ, path=7), deny=["Read(.env)"]).verdict == "deny"
    assert decide(call(WRITE, content="x"), allow=["Edit(src/**)"]).verdict == "ask"


@pytest.fixture
def linked_workspace(tmp_path: Path) -> tuple[Path, Path]:
    """/ws/src/link -> /outside/secret.txt, and /ws/src/real.txt."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (workspace / "src" / "real.txt").write_text("r")
    os.symlink(outside / "secret.txt", workspace / "src" / "link")
    return workspace, outside


def test_allow_through_a_symlink_needs_link_and_target_to_match(linked_workspace):
    workspace, outside = linked_workspace
    write = call(WRITE, workspace, path="src/link", content="x")
    assert decide(write, allow=["Edit(src/**)"]).verdict == "ask"
    assert decide(write, allow=["Edit(src/**)", f"Edit(/{outside}/**)"]).verdict == "allow"
    assert (
        decide(call(WRITE, workspace, path="src/real.txt", content="x"), allow=["Edit(src/**)"]).verdict
        == "allow"
    )


def test_deny_through_a_symlink_applies_if_link_or_target_matches(linked_workspace):
    workspace, outside = linked_workspace
    read = call(READ, workspace, path="src/link")
    assert decide(read, deny=[f"Read(/{outside}/**)"]).verdict == "deny"
    assert decide(read, deny=["Read(src/link)"]).verdict == "deny"
    assert decide(read, deny=["Read(secret.txt)"]).verdict == "deny"


def test_redirect_through_a_symlink_is_checked_at_its_target(linked_workspace):
    workspace, outside = linked_workspace
    result = decide(shell("echo x > src/link", workspace), allow=["Bash"], deny=[f"Edit(/{outside}/**)"])
    assert result.verdict == "deny"


# --- URLs and other MCP tools ---------------------------------------------------------------


def test_webfetch_domain_rule_allows_subdomains_only():
    allow = ["WebFetch(domain:*.example.com)"]
    assert decide(call(NAVIGATE, url="https://docs.example.com/x"), allow=allow).verdict == "allow"
    assert decide(call(NAVIGATE, url="https://example.com.evil.net/"), allow=allow).verdict == "ask"


def test_domain_deny_fails_closed_on_a_url_without_a_host():
    deny = ["WebFetch(domain:evil.com)"]
    assert decide(call(NAVIGATE, url="javascript:alert(1)"), deny=deny).verdict == "deny"
    assert decide(call(NAVIGATE, url="https://EVIL.com/"), deny=deny).verdict == "deny"
    assert decide(call(NAVIGATE, url="https://good.com/"), deny=deny).verdict == "ask"


def test_param_glob_matches_one_top_level_argument():
    allow = ["mcp__github__create_issue(repo:acme/*)"]
    assert decide(call("mcp__github__create_issue", repo="acme/site"), allow=allow).verdict == "allow"
    assert decide(call("mcp__github__create_issue", repo="other/site"), allow=allow).verdict == "ask"


def test_omitted_argument_never_matches_a_param_rule():
    tool = "mcp__github__create_issue"
    assert decide(call(tool, title="x"), allow=[f"{tool}(repo:*)"]).verdict == "ask"
    assert (
        decide(call(tool, title="x"), allow=["mcp__github"], deny=[f"{tool}(repo:secret*)"]).verdict
        == "allow"
    )


def test_param_rule_on_a_structured_value_fails_closed():
    tool = "mcp__github__create_issue"
    assert (
        decide(call(tool, repo=["secret"]), allow=["mcp__github"], deny=[f"{tool}(repo:secret*)"]).verdict
        == "deny"
    )


def test_server_rule_does_not_cover_a_server_whose_name_merely_starts_the_same():
    assert decide(call("mcp__github-enterprise__get_issue"), allow=["mcp__github"]).verdict == "ask"


# --- plan mode ------------------------------------------------------------------------------


def test_plan_mode_never_auto_approves_a_write_by_rule():
    result = decide(call(WRITE, path="src/a.py", content=""), allow=["Edit(src/**)"], mode="plan")
    assert (result.verdict, result.source) == ("ask", "mode:plan")
    assert decide(shell("npm test"), allow=["Bash(npm test)"], mode="plan").verdict == "ask"


def test_plan_mode_never_auto_approves_a_write_by_policy():
    result = decide(
        call(EDIT, path="a", old_text="", new_text=""), mode="plan", mode_policies={EDIT: "always_allow"}
    )
    assert (result.verdict, result.source) == ("ask", "mode:plan")


def test_plan_mode_still_allows_reads_and_read_only_tools():
    assert decide(call(READ, path="a.py"), mode="plan").verdict == "allow"
    read_only = ToolAnnotations(readOnlyHint=True)
    lookup = call("mcp__github__get_issue", annotations=read_only, number=1)
    assert decide(lookup, allow=["mcp__github"], mode="plan").verdict == "allow"
    assert (
        decide(call("mcp__github__get_issue", number=1), allow=["mcp__github"], mode="plan").verdict == "ask"
    )


def test_plan_mode_keeps_deny_rules_and_deny_policies():
    assert decide(shell("rm -rf x"), deny=["Bash(rm *)"], mode="plan").verdict == "deny"
    assert (
        decide(call(WRITE, path="a", content=""), mode="plan", mode_policies={WRITE: "deny"}).verdict
        == "deny"
    )


# --- policies ---------------------------------------------------------------------------------


def test_default_policies_run_reads_and_ask_for_writes_and_shell():
    file_and_shell = {k: v for k, v in DEFAULT_POLICIES.items() if k.startswith(("mcp__file__", "mcp__shell__"))}
    assert file_and_shell == {
        "mcp__file__read_file": "always_allow",
        "mcp__file__list_dir": "always_allow",
        "mcp__file__glob": "always_allow",
        "mcp__file__grep": "always_allow",
        "mcp__file__write_file": "ask",
        "mcp__file__edit_file": "ask",
        "mcp__shell__exec": "ask",
    }


def test_default_policies_ask_before_the_browser_acts_scheduling_and_forgetting():
    asking = {k for k, v in DEFAULT_POLICIES.items() if v == "ask"}
    assert {"mcp__browser__navigate", "mcp__browser__click", "mcp__browser__evaluate"} <= asking
    assert {"mcp__cron__cron_create", "mcp__cron__cron_delete", "mcp__memory__memory_forget"} <= asking
    assert DEFAULT_POLICIES["mcp__browser__snapshot"] == "always_allow"
    assert DEFAULT_POLICIES["mcp__memory__memory_search"] == "always_allow"
    assert DEFAULT_POLICIES["mcp__invoke_agent__invoke_agent"] == "always_allow"


@pytest.mark.parametrize(
    ("policies", "answer"),
    [
        ({"mcp__file": "deny", "mcp__file__*": "ask", "mcp__file__read_file": "always_allow"}, "allow"),
        ({"mcp__file": "deny", "mcp__file__*": "always_allow"}, "allow"),
        ({"mcp__file": "always_allow", "mcp__file__read_*": "deny"}, "deny"),
        ({"mcp__file__*": "always_allow", "mcp__file__read_*": "deny"}, "deny"),
        ({"*": "deny", "mcp__file": "always_allow"}, "allow"),
        ({"mcp__*": "ask"}, "ask"),
    ],
)
def test_most_specific_policy_key_wins(policies, answer):
    assert decide(call(READ, path="a"), policies=policies).verdict == answer


def test_mode_policies_come_before_the_engine_policies():
    result = decide(
        call(WRITE, path="a", content=""), mode="edit", mode_policies={"mcp__file": "always_allow"}
    )
    assert (result.verdict, result.source) == ("allow", "mode:edit")


def test_server_policy_covers_every_tool_of_that_server():
    assert (
        decide(call("mcp__github__create_issue"), policies={"mcp__github": "always_allow"}).verdict == "allow"
    )
    assert (
        decide(call("mcp__gitlab__create_issue"), policies={"mcp__github": "always_allow"}).verdict == "ask"
    )


def test_policies_merged_over_the_defaults_still_name_built_in_values_default():
    engine = PolicyEngine(rules(), {**DEFAULT_POLICIES, SHELL: "always_allow"})
    assert (
        engine.evaluate(call(WRITE, path="a", content="")).reason
        == "policy mcp__file__write_file = ask (default)"
    )
    assert engine.evaluate(shell("ls")).source == "config"
    assert engine.with_rules(rules()).evaluate(shell("ls")).source == "config"


def test_policy_for_reports_the_effective_policy():
    engine = PolicyEngine(rules(), {"mcp__github": "deny", "mcp__github__get_*": "always_allow"})
    assert engine.policy_for("mcp__github__get_issue") == "always_allow"
    assert engine.policy_for("mcp__github__create_issue") == "deny"
    assert engine.policy_for("mcp__github__create_issue", {"mcp__github__create_issue": "ask"}) == "ask"
    assert engine.policy_for("mcp__other__x") is None


def test_invalid_policy_is_refused_at_construction():
    with pytest.raises(ValueError):
        PolicyEngine(rules(), {"mcp__file": "sometimes"})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        PolicyEngine(rules(), {"Bash": "ask"})


def test_rules_come_before_policies():
    assert decide(call(READ, path=".env"), deny=["Read(.env)"]).verdict == "deny"
    assert (
        decide(call(WRITE, path="a", content=""), allow=["Edit"], policies={WRITE: "deny"}).verdict == "allow"
    )


# --- read-only auto-allow -----------------------------------------------------------------------

READ_ONLY = ToolAnnotations(readOnlyHint=True)


def test_read_only_tool_of_a_trusted_server_is_allowed_when_enabled():
    lookup = call("mcp__memory__search", annotations=READ_ONLY, query="x")
    assert decide(lookup, read_only_auto_allow=True).verdict == "allow"
    assert decide(lookup).verdict == "ask"


@pytest.mark.parametrize(
    ("name", "annotations"),
    [
        ("mcp__github__get_issue", READ_ONLY),
        ("mcp__memory__search", None),
        ("mcp__memory__search", ToolAnnotations()),
        ("mcp__memory__search", ToolAnnotations(readOnlyHint=True, destructiveHint=True)),
        ("mcp__memory__search", ToolAnnotations(readOnlyHint=False)),
    ],
)
def test_read_only_auto_allow_needs_trust_and_a_clean_read_only_hint(name, annotations):
    assert decide(call(name, annotations=annotations), read_only_auto_allow=True).verdict == "ask"


def test_trusted_servers_can_be_chosen():
    engine = PolicyEngine(rules(), read_only_auto_allow=True, trusted_servers=("github",))
    assert engine.evaluate(call("mcp__github__get_issue", annotations=READ_ONLY)).verdict == "allow"
    assert engine.evaluate(call("mcp__memory__search", annotations=READ_ONLY)).verdict == "ask"


def test_policy_comes_before_read_only_auto_allow():
    lookup = call("mcp__memory__search", annotations=READ_ONLY)
    assert decide(lookup, read_only_auto_allow=True, policies={"mcp__memory": "ask"}).verdict == "ask"


def test_file_readers_are_read_only_and_writers_and_shell_are_not():
    assert is_read_only(call(READ, path="a"))
    assert not is_read_only(call(WRITE, path="a", annotations=READ_ONLY))
    assert not is_read_only(call(SHELL, command="ls", annotations=READ_ONLY))


def test_workspace_of_the_call_anchors_workspace_patterns(tmp_path):
    inside = call(READ, tmp_path, path="secrets/a")
    assert decide(inside, deny=["Read(/secrets/**)"]).verdict == "deny"
    assert (
        decide(call(READ, REPO, path=str(tmp_path / "secrets/a")), deny=["Read(/secrets/**)"]).verdict
        == "allow"
    )


# --- commands decided only when they run (issue 13, item 2) ----------------------------------

COMPUTED_RM = [
    "x=rm; $x v",
    "$(echo rm) v",
    "`echo rm` v",
    "rm${IFS}v",
    '"$x" v',
    "${x:-rm} v",
    "sudo $x v",
    "timeout 5 $cmd v",
    "{rm,v}",
    "/bin/r? v",
    "/???/?m v",
    "printf 'rm v' | sh",
    "sh <<EOF\nrm v\nEOF",
    "bash <<< 'rm v'",
    "cat f | bash -",
    "sh -s < script",
    "bash -c \"$code\"",
    "bash $script",
    'eval "$x"',
    "eval $(cat cmd)",
    "source <(echo rm v)",
    ". /dev/stdin",
    "find . -delete",
    "find . -name '*.tmp' -delete",
    "find . -exec $x {} +",
    "echo rm v | xargs sh -c",
    "echo 'rm v' | xargs -I{} sh -c {}",
    "echo rm | xargs -I % % v",
    "echo rm v | xargs env",
    "echo rm v | xargs sudo",
    "trap 'rm v' EXIT",
    "alias x=rm",
    "watch -n 1 rm v",
    "busybox rm v",
    "hash -p /bin/rm ls; ls v",
]


@pytest.mark.parametrize("command", COMPUTED_RM)
def test_a_command_whose_program_is_known_only_when_it_runs_is_denied_by_a_deny_rule_naming_one(command):
    result = decide(shell(command), allow=["Bash(*)"], deny=["Bash(rm *)"])
    assert result.verdict == "deny", result.reason


def test_the_denial_says_why_the_command_could_not_be_checked():
    assert decide(shell("x=rm; $x v"), allow=["Bash"], deny=["Bash(rm *)"]).reason == (
        "deny rule Bash(rm *) (user) may match `$x v`: `$x` is known only when it runs"
    )
    assert decide(shell("printf 'rm v' | sh"), allow=["Bash"], deny=["Bash(rm *)"]).reason == (
        "deny rule Bash(rm *) (user) may match `sh`: sh reads its commands from standard input"
    )
    assert "find -delete removes files as rm does" in decide(
        shell("find . -delete"), allow=["Bash"], deny=["Bash(rm -rf *)"]
    ).reason


def test_an_ask_rule_naming_a_command_asks_for_a_computed_one():
    assert decide(shell("$x push origin"), allow=["Bash"], ask=["Bash(git push *)"]).verdict == "ask"


@pytest.mark.parametrize("command", ["git $x origin", "git $sub", "git pu* origin", "git $opt push", "$g push"])
def test_an_unknown_word_where_the_rule_names_a_subcommand_is_denied(command):
    assert decide(shell(command), allow=["Bash"], deny=["Bash(git push *)"]).verdict == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "ls *.py",
        'echo "$HOME"',
        "cat $(ls)",
        "cd $dir && make",
        'git commit -m "$msg"',
        "git status $x",
        'for f in *.txt; do cat "$f"; done',
        "bash build.sh arg",
        "sh -c 'echo hi'",
        "find . -name '*.py' -exec grep x {} +",
        "echo a | xargs -I{} echo {}",
        "echo x | xargs",
        "rmdir x",
    ],
)
def test_unknown_words_the_rule_cannot_name_leave_a_command_allowed(command):
    result = decide(shell(command), allow=["Bash"], deny=["Bash(rm *)", "Bash(git push *)"])
    assert result.verdict == "allow", result.reason


# --- third-party read-only tools (issue 34, item 4) ----------------------------------------------


def read_only_tools(**kwargs) -> PolicyEngine:
    return PolicyEngine(rules(**kwargs), allow_read_only_tools=True)


def test_a_third_party_read_only_tool_runs_unasked_only_when_a_person_says_so():
    lookup = call("mcp__crm__lookup", annotations=READ_ONLY, id="42")
    assert PolicyEngine(rules()).evaluate(lookup).verdict == "ask"  # off by default
    allowed = read_only_tools().evaluate(lookup)
    assert (allowed.verdict, allowed.source) == ("allow", "allow_read_only_tools")
    assert allowed.reason == "read-only tool of crm, as pinned: allowed (allow_read_only_tools)"
    assert read_only_tools().effective_policy("mcp__crm__lookup", READ_ONLY) == "always_allow"


@pytest.mark.parametrize(
    "annotations",
    [None, ToolAnnotations(), ToolAnnotations(readOnlyHint=True, destructiveHint=True), ToolAnnotations(openWorldHint=True)],
)
def test_allow_read_only_tools_needs_a_clean_read_only_hint(annotations):
    assert read_only_tools().evaluate(call("mcp__crm__lookup", annotations=annotations)).verdict == "ask"


def test_a_changed_read_only_tool_still_asks_and_rules_and_the_managed_layer_decide_first():
    change = ToolChange(
        server="crm",
        tool="lookup",
        fields=["description"],
        before="a",
        after="b",
        fingerprint="b" * 64,
        pinned_fingerprint="a" * 64,
        pinned_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    changed = ToolCallView(name="mcp__crm__lookup", arguments={}, workspace=REPO, annotations=READ_ONLY, changed=change)
    assert read_only_tools().evaluate(changed).verdict == "ask"
    lookup = call("mcp__crm__lookup", annotations=READ_ONLY)
    assert read_only_tools(deny=["mcp__crm__lookup"]).evaluate(lookup).verdict == "deny"
    assert read_only_tools(ask=["mcp__crm"]).evaluate(lookup).verdict == "ask"
    managed = PolicyEngine(rules(), allow_read_only_tools=True, managed=rules(ask=["mcp__crm__lookup"], source="managed"))
    assert managed.evaluate(lookup).verdict == "ask"
    assert PolicyEngine(rules(), {"mcp__crm": "ask"}, allow_read_only_tools=True).evaluate(lookup).verdict == "ask"


def test_allow_read_only_tools_leaves_the_trusted_servers_to_read_only_auto_allow():
    assert read_only_tools().evaluate(call("mcp__memory__search", annotations=READ_ONLY)).verdict == "ask"
    assert read_only_tools().with_rules(rules()).allow_read_only_tools
