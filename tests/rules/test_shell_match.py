"""Shell patterns and the cutting of a command line into the parts rules match."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from backend.rules.shell_match import ShellPattern, analyse_command, escape_pattern


def parts(command: str, *, deny_only: bool = False) -> list[str]:
    return [p.text for p in analyse_command(command).parts if p.deny_only == deny_only]


def deny_forms(command: str) -> set[str]:
    return {form for part in analyse_command(command).parts for form in part.deny_forms}


# --- patterns -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "command", "matches"),
    [
        ("npm run build", "npm run build", True),
        ("npm run build", "npm run build --watch", False),
        ("ls *", "ls", True),
        ("ls *", "ls -la", True),
        ("ls *", "lsof", False),
        ("npm run test:*", "npm run test", True),
        ("npm run test:*", "npm run test -- --watch", True),
        ("npm run test:*", "npm run testing", False),
        ("git * main", "git push origin main", True),
        ("git * main", "git push origin main2", False),
        ("*", "anything at all", True),
        ("echo *", "echo 'multi\nline'", True),
        ("rm -rf \\*", "rm -rf *", True),
        ("rm -rf \\*", "rm -rf /", False),
    ],
)
def test_shell_pattern_semantics(pattern, command, matches):
    assert ShellPattern.parse(pattern).matches(command) is matches


def test_escaped_pattern_matches_exactly_its_command():
    command = "find . -name \\*.py > out*"
    pattern = ShellPattern.parse(escape_pattern(command))
    assert pattern.matches(command)
    assert not pattern.matches("find . -name \\*.py > outside")


def test_empty_shell_pattern_is_refused():
    with pytest.raises(ValueError):
        ShellPattern.parse("  ")


# --- cutting into parts ----------------------------------------------------------------------


def test_command_is_split_on_every_list_and_pipe_operator():
    assert parts("a && b || c; d | e |& f & g\nh") == list("abcdefgh")


def test_nested_commands_are_parts_too():
    assert parts('echo "$(date)" `whoami` <(ls) && (cd x; make) && for i in 1; do rm $i; done') == [
        'echo "$(date)" `whoami` <(ls)',
        "date",
        "whoami",
        "ls",
        "cd x",
        "make",
        "rm $i",
    ]


def test_allow_forms_drop_harmless_wrappers_and_safe_variables():
    (part,) = analyse_command("NODE_ENV=test timeout -s KILL 30 nice -n 5 npm test").parts
    assert part.allow_forms[-1] == "npm test"
    assert part.allow_forms[0] == "NODE_ENV=test timeout -s KILL 30 nice -n 5 npm test"


def test_allow_forms_keep_unsafe_variables_and_risky_wrapper_options():
    (part,) = analyse_command("PAGER=evil git log").parts
    assert part.allow_forms[-1] == "PAGER=evil git log"
    (timed,) = analyse_command("time -o /etc/motd make").parts
    assert "make" not in timed.allow_forms
    (lookup,) = analyse_command("command -v rm").parts
    assert lookup.allow_forms == ("command -v rm",)


def test_deny_forms_normalise_program_quotes_and_wrappers():
    forms = deny_forms("sudo -u root env A=1 '/bin/rm' -rf \"x y\"")
    assert "rm -rf x y" in forms


def test_deny_forms_skip_git_global_options():
    assert "git push --force" in deny_forms("git -C ../x -c a=b --no-pager push --force")


def test_shell_c_string_is_parsed_into_parts_of_its_own():
    assert parts("bash -ec 'cd /; rm -rf x > log'") == ["bash -ec 'cd /; rm -rf x > log'", "cd /", "rm -rf x"]
    assert [w.path for w in analyse_command("bash -ec 'cd /; rm -rf x > log'").writes] == ["log"]


def test_eval_and_find_exec_are_looked_through():
    assert parts("eval 'rm -rf x'")[1:] == ["rm -rf x"]
    assert parts("find . -exec rm {} ;")[1:] == ["rm {}"]
    assert parts("sudo su -c 'rm x'")[1:] == ["rm x"]


def test_inline_code_is_flagged():
    for command in ["python -c 'x'", "python3.12 -Ic 'x'", "node -e x", "bash -c x", "perl -ne x", "eval x"]:
        assert analyse_command(command).inline_code, command
    for command in ["python script.py", "node app.js", "bash script.sh", "sh -x run.sh"]:
        assert not analyse_command(command).inline_code, command


def test_inline_code_behind_a_wrapper_is_flagged():
    assert analyse_command("sudo timeout 5 python3 -c 'x'").inline_code


# --- redirections ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("a > f", ["f"]),
        ("a >> f", ["f"]),
        ("a 2> f", ["f"]),
        ("a >| f", ["f"]),
        ("a <> f", ["f"]),
        ("a &> f", ["f"]),
        ("a &>> f", ["f"]),
        ("a >&f", ["f"]),
        ("a &>2", ["2"]),
        ("a 2>1", ["1"]),
        ("a 2>&1 >&2 >&-", []),
        ("a > /dev/null 2>/dev/null", []),
        ("a < f", []),
        ("a <<< 'text'", []),
        ("cat <<EOF\nbody\nEOF", []),
        ("{ a; b; } > grouped", ["grouped"]),
        ("while read l; do :; done < in > out", ["out"]),
    ],
)
def test_redirections_that_open_a_file_for_writing_are_writes(command, targets):
    assert [w.path for w in analyse_command(command).writes] == targets


def test_write_target_with_an_expansion_is_unknown():
    for command in ["a > $HOME/x", 'a > "$(pick)"', "a > *.log", "a > ~bob/x"]:
        assert [w.path for w in analyse_command(command).writes] == [None], command


def test_write_target_under_home_is_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert [w.path for w in analyse_command("a > ~/x").writes] == [f"{tmp_path}/x"]


def test_cd_is_noticed_so_relative_writes_are_not_trusted():
    assert analyse_command("cd /tmp && a > f").changes_directory
    assert not analyse_command("a > f").changes_directory


# --- what blocks allow rules -------------------------------------------------------------------


@pytest.mark.parametrize(
    "char", ["\u200b", "\u200d", "\u2060", "\ufeff", "\u202e", "\u00a0", "\u3000", "\r", "\x1b"]
)
def test_invisible_characters_block_allow_rules(char):
    assert "invisible" in (analyse_command(f"echo a{char}b").allow_blocker or "")


def test_tabs_newlines_and_visible_unicode_do_not_block_allow_rules():
    assert analyse_command("echo 'héllo wörld ✓'\tx\necho y").allow_blocker is None


def test_length_limit_blocks_allow_rules():
    assert analyse_command("x" * 10_000).allow_blocker is None
    assert "10,000" in (analyse_command("x" * 10_001).allow_blocker or "")


def test_unparseable_command_blocks_allow_and_falls_back_to_deny_only_parts():
    analysis = analyse_command('[[ -f x ]] && rm -rf "y')
    assert "parsed" in (analysis.allow_blocker or "")
    assert analysis.unchecked
    assert all(p.deny_only for p in analysis.parts)
    assert any(form.startswith("rm -rf") for p in analysis.parts for form in p.deny_forms)


def test_nested_unparseable_shell_string_blocks_allow_and_marks_the_analysis_unchecked():
    analysis = analyse_command("sh -c '[[ x ]] && rm y'")
    assert "parsed" in (analysis.allow_blocker or "")
    assert analysis.unchecked
    assert "rm y" in {form for p in analysis.parts for form in p.deny_forms}


def test_empty_command_has_no_parts():
    analysis = analyse_command("   ")
    assert (analysis.parts, analysis.writes, analysis.allow_blocker) == ((), (), None)


def test_analysis_does_not_touch_the_filesystem(tmp_path: Path):
    analyse_command(f"echo x > {tmp_path}/never")
    assert not (tmp_path / "never").exists()


def test_fallback_still_looks_through_shell_strings():
    analysis = analyse_command("[[ -f x ]] && sudo sh -c 'rm -rf /'")
    assert "rm -rf /" in {form for p in analysis.parts for form in p.deny_forms}


def test_shells_nested_too_deep_are_unchecked():
    command = "rm x"
    for _ in range(6):
        command = "sh -c " + shlex.quote(command)
    analysis = analyse_command(command)
    assert analysis.unchecked == "too many nested shells"
    assert analysis.allow_blocker
