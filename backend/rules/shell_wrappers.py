"""What a command really runs: wrappers, assignments, `sh -c`, git's global options, inline code."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from backend.rules.shell_parse import Word

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_DURATION = re.compile(r"^\d+(\.\d+)?[smhd]?$")

# Variables an allow rule may see past: they change formatting or locale, never which code runs.
SAFE_ENV_VARS = frozenset(
    """CI NODE_ENV RUST_BACKTRACE RUST_LOG PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONWARNINGS
    PYTEST_DISABLE_PLUGIN_AUTOLOAD GOOS GOARCH CGO_ENABLED GOEXPERIMENT GO111MODULE LANG LANGUAGE
    LC_ALL LC_CTYPE LC_TIME LC_NUMERIC LC_COLLATE LC_MESSAGES TZ TERM COLORTERM NO_COLOR FORCE_COLOR
    CLICOLOR COLUMNS LINES DEBUG VERBOSE""".split()
)

# Options that take a separate value, per wrapper; anything else starting with `-` is a flag.
_WRAPPER_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "command": frozenset(),
    "builtin": frozenset(),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset(
        """-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t --type
        -U --other-user -T --command-timeout -R --chroot""".split()
    ),
    "doas": frozenset({"-u", "-C"}),
    "exec": frozenset({"-a"}),
    "xargs": frozenset(
        """-a --arg-file -d --delimiter -E -I -L --max-lines -n --max-args -P --max-procs -s
        --max-chars --process-slot-var""".split()
    ),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "setsid": frozenset(),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "-u"}),
    "busybox": frozenset(),  # a multi-call binary: `busybox rm x` is rm
}
WRAPPERS = frozenset(_WRAPPER_VALUE_OPTIONS)
"""Programs that run the command after their options (deny rules look through all of them)."""
ALLOW_WRAPPERS = frozenset({"timeout", "time", "nice", "nohup", "command", "builtin"})
_ASSIGNING_WRAPPERS = frozenset({"env", "sudo", "doas"})
# The options an allow rule may see past; `time -o FILE` writes a file, so it is not here.
_STRICT_OPTIONS: dict[str, re.Pattern[str]] = {
    "timeout": re.compile(
        r"^(--preserve-status|--foreground|-v|--verbose|-[sk]\S*|--signal=\S+|--kill-after=\S+)$"
    ),
    "time": re.compile(r"^-p$"),
    "nice": re.compile(r"^(-n\S*|-\d+|--adjustment=\S+)$"),
    "command": re.compile(r"^-p$"),
}

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_GIT_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"}
)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})

# Interpreter -> the flags that hand it code inline (single-letter ones may be combined: -lc).
_INLINE_CODE_FLAGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "python": (frozenset("c"), frozenset()),
    "pypy": (frozenset("c"), frozenset()),
    "node": (frozenset("ep"), frozenset({"--eval", "--print"})),
    "nodejs": (frozenset("ep"), frozenset({"--eval", "--print"})),
    "bun": (frozenset("ep"), frozenset({"--eval", "--print"})),
    "deno": (frozenset(), frozenset({"eval"})),
    "perl": (frozenset("eE"), frozenset()),
    "ruby": (frozenset("e"), frozenset()),
    "php": (frozenset("r"), frozenset()),
    "lua": (frozenset("e"), frozenset()),
    "luajit": (frozenset("e"), frozenset()),
    "osascript": (frozenset("e"), frozenset()),
    "rscript": (frozenset("e"), frozenset()),
    "julia": (frozenset("e"), frozenset({"--eval"})),
    "pwsh": (frozenset("c"), frozenset({"-command", "-encodedcommand", "-ec"})),
    "powershell": (frozenset("c"), frozenset({"-command", "-encodedcommand", "-ec"})),
    **{shell: (frozenset("c"), frozenset()) for shell in SHELLS},
}


def program_name(word: str) -> str:
    """`/bin/rm` -> `rm`: the name a deny rule is written against."""
    return os.path.basename(word) or word


def is_assignment(word: Word) -> bool:
    """Whether a word is a leading `NAME=value`."""
    return word.assignment or _ASSIGNMENT.match(word.text) is not None


def assignment_name(word: Word) -> str:
    """`FOO=bar` -> `FOO`."""
    return word.text.partition("=")[0]


def strip_wrapper(words: Sequence[Word], *, strict: bool) -> list[Word] | None:
    """The command a wrapper runs (`timeout 30 npm test` -> `npm test`), or None if not wrapped.

    `strict` (for allow rules) knows only the harmless wrappers, spelled plainly, with the
    options they document; otherwise (for deny rules) `env`, `sudo`, `exec`, `xargs`... are
    looked through too and any flag is skipped.
    """
    if not words:
        return None
    # `\time` only skips alias lookup (and is how bashlex is shown the `time` keyword).
    name = words[0].raw.removeprefix("\\") if strict else program_name(words[0].text)
    if name not in (ALLOW_WRAPPERS if strict else _WRAPPER_VALUE_OPTIONS):
        return None
    texts = [w.text for w in words]
    if name == "command" and texts[1:2] and texts[1] in ("-v", "-V"):
        return None  # `command -v x` looks a name up, it runs nothing
    strict_option = _STRICT_OPTIONS.get(name) if strict else None
    value_options = _WRAPPER_VALUE_OPTIONS[name]
    i = 1
    while i < len(words):
        text = texts[i]
        if text == "--":
            i += 1
            break
        if text == "-" or not text.startswith("-"):
            break
        takes_value = text in value_options
        if strict and (
            strict_option is None
            or not strict_option.match(words[i].raw)
            or any(w.dynamic for w in words[i : i + 1 + takes_value])
        ):
            return None
        i += 2 if takes_value else 1
    if name == "timeout":
        if i >= len(words) or not _DURATION.match(texts[i]) or words[i].dynamic:
            return None
        i += 1
    if name in _ASSIGNING_WRAPPERS:
        while i < len(words) and is_assignment(words[i]):
            i += 1
    rest = list(words[i:])
    return rest or None


def strip_git_globals(texts: Sequence[str]) -> list[str] | None:
    """`git -C dir push` -> `git push`; None when there is nothing to skip."""
    if not texts or program_name(texts[0]) != "git":
        return None
    i = 1
    while i < len(texts) and texts[i].startswith("-"):
        i += 2 if texts[i] in _GIT_VALUE_OPTIONS else 1
    return ["git", *texts[i:]] if i > 1 else None


def inner_commands(words: Sequence[Word]) -> list[str | list[Word]]:
    """Commands a command runs on its behalf: `sh -c '...'`, `eval ...`, `find -exec ...`, `env -S`.

    Strings still have to be parsed; word lists are commands already.
    """
    if not words:
        return []
    texts = [w.text for w in words]
    program = program_name(texts[0])
    found: list[str | list[Word]] = []
    if program in SHELLS:
        code = _shell_code(texts)
        if code is not None:
            found.append(code)
    elif program == "eval" and len(texts) > 1:
        found.append(" ".join(texts[1:]))
    elif program in ("su", "runuser"):
        found.extend(_option_values(texts, "-c", "--command"))
    elif program == "env":
        found.extend(_option_values(texts, "-S", "--split-string"))
    elif program == "alias":
        found.extend(t.partition("=")[2] for t in texts[1:] if "=" in t)  # with expand_aliases, runs later
    elif program == "trap" and len(texts) > 2 and texts[1] != "-p":
        found.append(texts[1])  # runs on a signal or at exit
    elif program == "hash" and "-p" in texts[1:-1]:
        # `hash -p /bin/rm ls` makes every later `ls` run /bin/rm: the path is what runs.
        found.append([words[texts.index("-p", 1) + 1]])
    elif program == "watch":
        found.extend(_watch_command(texts))
    elif program == "find":
        for i, text in enumerate(texts):
            if text in _FIND_EXEC:
                rest = list(words[i + 1 :])
                end = next((j for j, w in enumerate(rest) if w.text in (";", "+")), len(rest))
                if rest[:end]:
                    found.append(rest[:end])
    return found


def _watch_command(texts: Sequence[str]) -> list[str]:
    """`watch -n 1 rm x` runs `sh -c 'rm x'` over and over."""
    i = 1
    while i < len(texts) and texts[i].startswith("-"):
        i += 2 if texts[i] in ("-n", "--interval", "-q", "--equexit") else 1
    return [" ".join(texts[i:])] if i < len(texts) else []


def _shell_code(texts: Sequence[str]) -> str | None:
    i, has_c = 1, False
    while i < len(texts):
        text = texts[i]
        if text in _SHELL_VALUE_OPTIONS:
            i += 2
            continue
        if text == "--" or not text.startswith(("-", "+")) or text in ("-", "+"):
            break
        if not text.startswith("--") and "c" in text[1:]:
            has_c = True
        i += 1
    return texts[i] if has_c and i < len(texts) else None


def runs_inline_code(texts: Sequence[str]) -> bool:
    """Whether the command hands an interpreter code inline (`python -c`, `node -e`, `bash -c`)."""
    if not texts:
        return False
    program = program_name(texts[0]).lower()
    if program == "eval":
        return True
    base = re.sub(r"[\d.]+$", "", program)
    flags = _INLINE_CODE_FLAGS.get(program) or _INLINE_CODE_FLAGS.get(base)
    if flags is None:
        return False
    letters, words = flags
    for text in texts[1:]:
        lowered = text.lower()
        if lowered in words or lowered.partition("=")[0] in words:
            return True
        if text.startswith("-") and not text.startswith("--") and letters & set(text[1:]):
            return True
        if not text.startswith("-"):
            return False  # past the options: a script file, not inline code
    return False


def changes_directory(texts: Sequence[str]) -> bool:
    """Whether the command moves the shell to another directory (`cd`, `pushd`, `popd`)."""
    return bool(texts) and program_name(texts[0]) in _DIRECTORY_CHANGERS


def _option_values(texts: list[str], short: str, long: str) -> list[str]:
    """Values of `-x VALUE`, `--long VALUE` and `--long=VALUE` in a word list."""
    values = []
    for i, text in enumerate(texts):
        if text in (short, long) and i + 1 < len(texts):
            values.append(texts[i + 1])
        elif text.startswith(long + "="):
            values.append(text.partition("=")[2])
    return values
