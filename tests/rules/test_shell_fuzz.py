"""Generated attempts to run a denied command by another spelling: none gets past the deny rule.

Each strategy below spells `rm` a way bash still runs as rm (quotes, paths, expansions, globs,
wrappers, nested shells, pipes into a shell, here-documents, xargs, find), and nests the
spellings. With `allow: [Bash(*)]` and `deny: [Bash(rm *)]` every one must be denied
(issue 13: "a fuzz test generates shell commands against the deny rules").
"""

from __future__ import annotations

import shlex

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.rules.support import decide, shell

# Ways to write the program name that bash reads as rm.
NAMES = st.sampled_from(
    [
        "rm",
        "/bin/rm",
        "/usr/bin/rm",
        '"rm"',
        "'rm'",
        "r''m",
        'r""m',
        "r\\m",
        "\\rm",
        "$'\\x72m'",
        "$'rm'",
        '$"rm"',
        "$x",
        "${x}",
        '"$x"',
        "${x:-rm}",
        "$(echo rm)",
        "`echo rm`",
        '"$(printf rm)"',
        "rm${IFS}",
        "/???/?m",
        "/bin/r?",
        "/bin/r[m]",
        "{rm,}",
    ]
)
ARGS = st.sampled_from(["v", "-rf v", "-f -- v", "-r ./v", "*", "$target", '"$(cat list)"', ""])
PREFIXES = st.sampled_from(["", "x=rm; ", "x=rm ", "true && ", "false || ", "echo hi; ", "cd /tmp && ", "FOO=1 "])
WRAPPERS = st.sampled_from(
    [
        "sudo ",
        "sudo -u root -- ",
        "env ",
        "env FOO=1 ",
        "nice -n 5 ",
        "nohup ",
        "timeout 5 ",
        "timeout -s KILL 5 ",
        "command ",
        "builtin ",
        "exec ",
        "time ",
        "stdbuf -o0 ",
        "setsid ",
        "busybox ",
        "xargs ",
        "ionice -c 3 ",
    ]
)


@st.composite
def simple_rm(draw: st.DrawFn) -> str:
    wrappers = draw(st.lists(WRAPPERS, max_size=2))
    args = draw(ARGS)
    return "".join(wrappers) + draw(NAMES) + (" " + args if args else "")


def _nest(inner: str, how: str) -> str:
    quoted = shlex.quote(inner)
    return {
        "sh -c": f"sh -c {quoted}",
        "bash -lc": f"bash -lc {quoted}",
        "eval": f"eval {quoted}",
        "pipe to sh": f"printf '%s\\n' {quoted} | sh",
        "pipe to bash -s": f"echo {quoted} | bash -s",
        "here-string": f"bash <<< {quoted}",
        "here-document": f"sh <<'EOF'\n{inner}\nEOF",
        "substitution": f'echo "$( {inner})"',  # the space: `$((` would open arithmetic
        "backticks": f"echo `{inner}`" if "`" not in inner else f"echo $({inner})",
        "subshell": f"({inner})",
        "group": f"{{ {inner}; }}",
        "if": f"if true; then {inner}; fi",
        "for": f"for i in 1; do {inner}; done",
        "function": f"f() {{ {inner}; }}; f",
        "xargs -I": f"echo {quoted} | xargs -I{{}} sh -c {{}}",
        "xargs sh -c": f"echo {quoted} | xargs sh -c",
        "trap": f"trap {quoted} EXIT",
        "process substitution": f"source <(echo {quoted})",
        "watch": f"watch -n 1 {quoted}",
        "su": f"su -c {quoted}",
        "env -S": f"env -S {quoted}",
    }[how]


NESTINGS = st.sampled_from(
    [
        "sh -c",
        "bash -lc",
        "eval",
        "pipe to sh",
        "pipe to bash -s",
        "here-string",
        "here-document",
        "substitution",
        "backticks",
        "subshell",
        "group",
        "if",
        "for",
        "function",
        "xargs -I",
        "xargs sh -c",
        "trap",
        "process substitution",
        "watch",
        "su",
        "env -S",
    ]
)


@st.composite
def rm_commands(draw: st.DrawFn) -> str:
    command = draw(PREFIXES) + draw(simple_rm())
    for how in draw(st.lists(NESTINGS, max_size=2)):
        command = _nest(command, how)
    return command


DIRECT = st.sampled_from(["find . -delete", "find . -name '*.tmp' -delete", "find . -exec rm {} +", "find . -execdir rm -f {} \\;"])


@settings(max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(rm_commands(), DIRECT))
def test_no_spelling_of_a_denied_command_is_allowed(command: str) -> None:
    result = decide(shell(command), allow=["Bash(*)"], deny=["Bash(rm *)"])
    assert result.verdict == "deny", f"{command!r}: {result.verdict} ({result.reason})"


@settings(max_examples=200, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(rm_commands())
def test_an_ask_rule_is_as_hard_to_get_past_as_a_deny_rule(command: str) -> None:
    result = decide(shell(command), allow=["Bash(*)"], ask=["Bash(rm *)"])
    assert result.verdict in ("ask", "deny"), f"{command!r}: {result.verdict} ({result.reason})"
