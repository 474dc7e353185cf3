"""The bashlex front end: simple commands at every depth, writes, and refusals."""

from __future__ import annotations

import pytest

from backend.rules.shell_parse import fallback_commands, lift_substitutions, parse_shell


def programs(command: str) -> list[str]:
    return [c.words[0].text for c in parse_shell(command).commands]


def test_words_keep_their_written_form_and_shell_reading():
    (command,) = parse_shell("echo 'a b' \"c\"d e\\ f").commands
    assert [w.raw for w in command.words] == ["echo", "'a b'", '"c"d', "e\\ f"]
    assert [w.text for w in command.words] == ["echo", "a b", "cd", "e f"]


def test_leading_assignments_are_marked():
    command = parse_shell("A=1 B=$(x) run A=2").commands[0]
    assert [w.assignment for w in command.words] == [True, True, False, False]
    assert [w.dynamic for w in command.words] == [False, True, False, False]


def test_nested_commands_are_found_and_marked_nested():
    syntax = parse_shell("if a; then b; fi; c $(d)")
    assert [(c.words[0].text, c.nested) for c in syntax.commands] == [
        ("a", True),
        ("b", True),
        ("c", False),
        ("d", True),
    ]


def test_time_keyword_is_read_as_a_word():
    assert programs("time make && ! time -p make test") == ["time", "time"]
    assert [w.text for w in parse_shell("time -p make").commands[0].words] == ["time", "-p", "make"]


def test_here_document_without_a_final_newline_parses():
    syntax = parse_shell("cat <<EOF\nhello\nEOF")
    assert syntax.error is None and programs("cat <<EOF\nhello\nEOF") == ["cat"]


@pytest.mark.parametrize(
    "command",
    [
        'echo "unterminated',
        "case x in a) b;; esac",
        "echo $((1 + 2))",
        "echo ${x:-$(rm y)}",
        "cat <<EOF\n$(rm y)\nEOF\n",
        "a=(1 2)",
    ],
)
def test_syntax_the_parser_cannot_see_into_is_an_error(command):
    assert parse_shell(command).error


@pytest.mark.parametrize("delimiter", ["'EOF'", '"EOF"', "\\EOF"])
def test_quoted_here_document_body_is_literal_text(delimiter):
    syntax = parse_shell(f"cat <<{delimiter} > out.py\nprint($(not run))\nEOF")
    assert syntax.error is None
    assert [c.words[0].text for c in syntax.commands] == ["cat"]
    assert [w.text for w in syntax.writes] == ["out.py"]


def test_delimiter_also_used_unquoted_keeps_its_bodies_checked():
    command = "cat <<'EOF'\nok\nEOF\ncat <<EOF\n$(rm y)\nEOF\n"
    assert parse_shell(command).error


def test_fallback_cuts_at_every_operator_and_reads_quotes_both_ways():
    found = {" ".join(w.text for w in c.words) for c in fallback_commands("[[ x ]] && 'rm' -rf $(y z)")}
    assert {"'rm' -rf", "rm -rf", "y z", "[[ x ]]"} <= found


def test_fallback_lifts_substitutions_out_so_a_computed_program_stays_in_command_position():
    found = {" ".join(w.text for w in c.words) for c in fallback_commands('echo "$(true && "$(printf rm)" v)"')}
    assert {"$__ v", "printf rm"} <= found


def test_lifting_leaves_arithmetic_alone_but_not_the_substitutions_inside_it():
    assert lift_substitutions("echo $(( $(wc -l < f) + 1 )) `date`") == ("echo $__ $__", ["wc -l < f", "date"])


def test_fallback_keeps_brace_expansion_in_one_word():
    assert "{rm,v}" in {c.words[0].text for c in fallback_commands("[[ a ]] && {rm,v}")}


def test_fallback_drops_leading_keywords():
    found = {c.words[0].text for c in fallback_commands("if [[ a ]]; then rm x; fi")}
    assert "rm" in found and "then" not in found and "if" not in found
