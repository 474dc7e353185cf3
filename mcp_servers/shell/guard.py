"""A second line of defence: refuse shell commands that are obviously catastrophic.

This is NOT the security boundary. The boundary is the host's approval policy
(permission rules and the human who approves `exec` calls). The checks below catch
well-known disasters typed plainly (`rm -rf /`, `mkfs`, writing to a disk device,
power commands, fork bombs, `chmod -R 777 /`); anything indirect (variables,
`eval` of an encoded string, a script file) passes straight through them. A
false positive costs the model a reworded command; a miss costs nothing this
module ever promised.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

DISK_DEVICE = r"/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d|mapper/)"
_DD_TO_DISK = re.compile(r"\bof=" + DISK_DEVICE)
_REDIRECT_TO_DISK = re.compile(r">\|?\s*" + DISK_DEVICE)
# A function whose body pipes itself into itself: `:(){ :|:& };:` and renamed variants.
_FORK_BOMB = re.compile(r"(?P<name>[^\s(){}|;&]+)\s*\(\s*\)\s*\{[^}]*?(?P=name)\s*\|\s*&?\s*(?P=name)")
_SEGMENT_SPLIT = re.compile(r"&&|\|\||\$\(|[;&|\n()`]")

WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "nohup",
        "nice",
        "ionice",
        "time",
        "command",
        "builtin",
        "exec",
        "xargs",
        "stdbuf",
        "chroot",
        "then",
        "do",
        "else",
        "!",
        "{",
    }
)
_WRAPPER_OPTIONS_WITH_VALUE = frozenset({"-u", "-g", "-n", "-c", "-C", "-D", "-p", "-I"})
POWER_COMMANDS = frozenset({"shutdown", "reboot", "halt", "poweroff"})
FORMAT_COMMANDS = frozenset({"mke2fs", "wipefs"})
RECURSIVE_PERMISSION_COMMANDS = frozenset({"chmod", "chown", "chgrp"})
SYSTEM_DIRS = frozenset(
    {
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/opt",
        "/proc",
        "/root",
        "/sbin",
        "/srv",
        "/sys",
        "/usr",
        "/var",
    }
)
HOME_TARGETS = frozenset({"~", "$HOME", "${HOME}"})
_MAX_DEPTH = 3


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """Why a command was refused: a short rule id and a sentence for the model."""

    rule: str
    reason: str


def check_command(command: str) -> Refusal | None:
    """The first reason to refuse `command`, or None when no check objects."""
    return _check(command, depth=0)


def _check(command: str, *, depth: int) -> Refusal | None:
    if _FORK_BOMB.search(command):
        return Refusal(rule="fork-bomb", reason="it defines a fork bomb")
    if _DD_TO_DISK.search(command) or _REDIRECT_TO_DISK.search(command):
        return Refusal(rule="disk-write", reason="it writes directly to a disk device")
    for segment in _SEGMENT_SPLIT.split(command):
        tokens = _tokens(segment)
        refusal = _check_simple_command(tokens)
        if refusal:
            return refusal
        if depth < _MAX_DEPTH:
            # A quoted argument may be a whole command (`bash -c '...'`, `sudo sh -c "..."`).
            for token in tokens:
                if any(ch.isspace() for ch in token):
                    refusal = _check(token, depth=depth + 1)
                    if refusal:
                        return refusal
    return None


def _check_simple_command(tokens: list[str]) -> Refusal | None:
    index = _command_index(tokens)
    if index is None:
        return None
    name = posixpath.basename(tokens[index])
    args = tokens[index + 1 :]
    if name in POWER_COMMANDS:
        return Refusal(rule="power", reason=f"'{name}' would stop or restart the machine")
    if name == "systemctl" and any(a in POWER_COMMANDS or a == "kexec" for a in args):
        return Refusal(rule="power", reason="'systemctl' would stop or restart the machine")
    if name in ("init", "telinit") and args[:1] in (["0"], ["6"]):
        return Refusal(rule="power", reason=f"'{name} {args[0]}' would stop or restart the machine")
    if name.startswith("mkfs") or name in FORMAT_COMMANDS:
        return Refusal(rule="format", reason=f"'{name}' formats or wipes a filesystem")
    if name == "rm":
        return _check_rm(args)
    if name in RECURSIVE_PERMISSION_COMMANDS:
        flags, targets = _split_flags(args)
        if _recursive(flags) and any(_is_critical_target(t) for t in targets):
            return Refusal(
                rule="recursive-permissions",
                reason=f"recursive '{name}' on the root, a system folder or the home folder",
            )
    return None


def _check_rm(args: list[str]) -> Refusal | None:
    flags, targets = _split_flags(args)
    if "--no-preserve-root" in flags:
        return Refusal(rule="rm-root", reason="'rm --no-preserve-root' can delete the whole filesystem")
    if _recursive(flags):
        for target in targets:
            if _is_critical_target(target):
                return Refusal(
                    rule="rm-root",
                    reason=f"'rm -r {target}' would delete the root, a system folder or the home folder",
                )
    return None


def _command_index(tokens: list[str]) -> int | None:
    """Index of the command word: past variable assignments, wrappers like sudo, and their options."""
    index = 0
    after_wrapper = False
    while index < len(tokens):
        token = tokens[index]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", token, re.DOTALL):
            index += 1
        elif posixpath.basename(token) in WRAPPERS:
            after_wrapper = True
            index += 1
        elif after_wrapper and token.startswith("-"):
            index += 2 if token in _WRAPPER_OPTIONS_WITH_VALUE else 1
        elif after_wrapper and token.isdigit():  # `nice 10 ...`-style numeric arguments
            index += 1
        else:
            return index
    return None


def _split_flags(args: list[str]) -> tuple[list[str], list[str]]:
    flags: list[str] = []
    targets: list[str] = []
    only_targets = False
    for arg in args:
        if arg == "--":
            only_targets = True
        elif not only_targets and arg.startswith("-") and arg != "-":
            flags.append(arg)
        else:
            targets.append(arg)
    return flags, targets


def _recursive(flags: list[str]) -> bool:
    return any(
        flag == "--recursive" or (not flag.startswith("--") and ("r" in flag or "R" in flag))
        for flag in flags
    )


def _is_critical_target(target: str) -> bool:
    """The root, a top-level system folder or the home folder, however spelled (`/*`, `//`, `/.`, `~/`)."""
    stripped = target
    while stripped.endswith(("/*", "/.", "/")) and len(stripped) > 1:
        stripped = stripped[:-2] if stripped.endswith(("/*", "/.")) else stripped[:-1]
        stripped = stripped or "/"
    if stripped in HOME_TARGETS:
        return True
    if not target.startswith("/"):
        return False
    normal = "/" + posixpath.normpath(stripped).lstrip("/")
    return normal == "/" or normal in SYSTEM_DIRS


def _tokens(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=True)
    except ValueError:
        # Unbalanced quotes (often from splitting inside a quoted string): fall back to words.
        return [word.strip("'\"") for word in segment.split()]
