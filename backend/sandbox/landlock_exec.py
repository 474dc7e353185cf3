"""Run one command under Landlock: the fallback confinement where bubblewrap cannot start.

Run as a standalone script (standard library only, never imports `backend`):

    python3 -I -S landlock_exec.py --rw PATH... --ro PATH... [--connect-port N... | --no-net] -- cmd args...

It confines itself (paths listed `--rw` get every file right the kernel knows, paths listed `--ro` may
be read, listed and executed, everything else gets none), then `exec`s the command, which inherits
the confinement. Root is not exempt. It never runs a command with less confinement than asked: if
the kernel has no Landlock, or too old a one for the network rules asked, it exits 126 with
`landlock unavailable: ...` on stderr. Exit codes of its own: 125 usage, 126 Landlock unavailable or
failed or the command not executable, 127 command not found; otherwise the command's own.

Network: with `--no-net` no TCP connect or bind at all; with `--connect-port N` TCP connect to those
ports only (e.g. the egress proxy) and no bind; with neither, TCP is not restricted.
From ABI 6 the command can neither signal processes outside its domain nor connect to abstract
unix sockets created outside it.

What this fallback does NOT confine (bubblewrap does better):
- UDP and every other socket family: only TCP is restricted, so DNS-over-UDP (or any UDP)
  exfiltration stays possible, as do raw sockets where the capability allows them.
- Pathname unix sockets outside the listed paths (e.g. a Docker or D-Bus socket) can still be
  connected to: Landlock (ABI <= 7) does not check `connect()` on them.
- Nothing is hidden, only refused: the whole tree stays visible to stat(), and if /proc is listed
  read-only the /proc of other processes (command lines, environments where DAC allows) is readable.
- Metadata changes are not checked: chmod, chown, utimes and xattrs work wherever DAC allows.
- File descriptors open before the exec keep their access: the host must pass only stdio.
- Truncation is only refused from ABI 3, device ioctls only from ABI 5.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys

# Avoids importing `typing` at run time: startup cost is paid on every command.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # x86_64 and aarch64 alike
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38
_ENOSYS, _EOPNOTSUPP = 38, 95

_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_V1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM: the thirteen rights of ABI 1
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
_FS_FILE_ONLY = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_FS_READ_ONLY = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

_USAGE = "usage: landlock_exec.py [--rw P]... [--ro P]... [--connect-port N]... [--no-net] -- CMD [ARG]..."


def landlock_argv(
    python: str,
    script: str,
    *,
    rw: Iterable[str | os.PathLike[str]],
    ro: Iterable[str | os.PathLike[str]],
    connect_ports: Iterable[int],
    no_net: bool,
) -> list[str]:
    """The command prefix (ending with `--`) that runs what follows it under Landlock.

    `python` is the interpreter and `script` this file's path. Raises ValueError for a port out
    of range or for `no_net` together with ports to connect to (a contradiction, not a choice).
    """
    ports = list(connect_ports)
    if no_net and ports:
        raise ValueError("no_net and connect_ports contradict each other")
    argv = [python, "-I", "-S", script]
    argv += [arg for path in rw for arg in ("--rw", os.fspath(path))]
    argv += [arg for path in ro for arg in ("--ro", os.fspath(path))]
    for port in ports:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"not a TCP port: {port!r}")
        argv += ["--connect-port", str(port)]
    if no_net:
        argv.append("--no-net")
    return [*argv, "--"]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _probe() -> tuple[int, int]:
    """(ABI version, 0), or (0, errno) when the kernel offers no Landlock."""
    libc = _libc()
    abi = libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return (int(abi), 0) if abi > 0 else (0, ctypes.get_errno())


def probe_abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none (ENOSYS, or disabled)."""
    return _probe()[0]


class _Refused(Exception):
    """Confinement could not be set up; the command must not run."""


def _confine(abi: int, *, rw: list[str], ro: list[str], ports: list[int], no_net: bool) -> None:
    libc = _libc()

    def call(number: int, *args: object) -> int:
        result = libc.syscall(ctypes.c_long(number), *args)
        if result < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return int(result)

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1  # the kernel's struct is __attribute__((packed)): 12 bytes
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    class NetPort(ctypes.Structure):
        _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]

    fs = _FS_V1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    fs |= _FS_IOCTL_DEV if abi >= 5 else 0
    restrict_net = no_net or bool(ports)
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if restrict_net else 0
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0
    # An older kernel rejects fields it does not know: pass only the size its ABI defines.
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    attr = RulesetAttr(fs=fs, net=net, scoped=scoped)
    ruleset = call(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        for paths, access in ((rw, fs), (ro, _FS_READ_ONLY)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except (FileNotFoundError, NotADirectoryError):
                    continue  # a profile may list paths some machines lack
                except OSError as error:
                    raise _Refused(f"landlock failed: cannot open {path}: {error.strerror}") from None
                try:
                    # A rule on a file may carry file rights only, or the kernel answers EINVAL.
                    is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
                    allowed = access if is_dir else access & _FS_FILE_ONLY & fs
                    rule = PathBeneath(allowed_access=allowed, parent_fd=fd)
                    call(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0))
                except OSError as error:
                    raise _Refused(f"landlock failed: rule for {path}: {error.strerror}") from None
                finally:
                    os.close(fd)
        for port in ports:
            port_rule = NetPort(allowed_access=_NET_CONNECT_TCP, port=port)
            call(_SYS_ADD_RULE, ruleset, _RULE_NET_PORT, ctypes.byref(port_rule), ctypes.c_uint32(0))
        # Required to restrict oneself without CAP_SYS_ADMIN; set always so setuid binaries gain nothing.
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _Refused(f"landlock failed: no_new_privs: {os.strerror(ctypes.get_errno())}")
        call(_SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0))
    except OSError as error:
        raise _Refused(f"landlock failed: {error.strerror}") from None
    finally:
        os.close(ruleset)


def _parse(argv: list[str]) -> tuple[list[str], list[str], list[int], bool, list[str]]:
    rw: list[str] = []
    ro: list[str] = []
    ports: list[int] = []
    no_net = False
    i = 0
    while i < len(argv) and argv[i] != "--":
        option = argv[i]
        if option == "--no-net":
            no_net, i = True, i + 1
            continue
        if option not in ("--rw", "--ro", "--connect-port") or i + 1 >= len(argv):
            raise ValueError(f"unexpected argument: {option}")
        value, i = argv[i + 1], i + 2
        if option == "--connect-port":
            if not value.isdigit() or int(value) > 65535:
                raise ValueError(f"not a TCP port: {value}")
            ports.append(int(value))
        else:
            (rw if option == "--rw" else ro).append(value)
    command = argv[i + 1:]
    if not command:
        raise ValueError("no command after --")
    if no_net and ports:
        raise ValueError("--no-net and --connect-port contradict each other")
    return rw, ro, ports, no_net, command


def main(argv: list[str], *, probe: Callable[[], tuple[int, int]] = _probe) -> int:
    """Confine this process and exec the command; returns only on failure (an exit code).

    `probe` answers (ABI, errno) as `_probe` does; tests pass their own to play an older kernel.
    """
    try:
        rw, ro, ports, no_net, command = _parse(argv)
    except ValueError as error:
        print(f"landlock_exec: {error}\n{_USAGE}", file=sys.stderr)
        return 125
    abi, error_number = probe()
    if abi == 0:
        reason = "no Landlock in this kernel" if error_number == _ENOSYS else (
            "Landlock disabled in this kernel" if error_number == _EOPNOTSUPP else os.strerror(error_number))
        print(f"landlock unavailable: {reason}", file=sys.stderr)
        return 126
    if (no_net or ports) and abi < 4:
        print(f"landlock unavailable: ABI {abi} cannot restrict TCP (needs 4)", file=sys.stderr)
        return 126
    try:
        _confine(abi, rw=rw, ro=ro, ports=ports, no_net=no_net)
    except _Refused as refused:
        print(refused, file=sys.stderr)
        return 126
    try:
        os.execvp(command[0], command)
    except OSError as error:
        # execvp reports EACCES if any PATH entry was unreadable, though the command is nowhere.
        if isinstance(error, FileNotFoundError) or not _found_on_path(command[0]):
            print(f"landlock_exec: {command[0]}: command not found", file=sys.stderr)
            return 127
        print(f"landlock_exec: {command[0]}: {error.strerror}", file=sys.stderr)
        return 126


def _found_on_path(name: str) -> bool:
    if "/" in name:
        return os.path.lexists(name)
    directories = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return any(os.path.lexists(os.path.join(directory or ".", name)) for directory in directories)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
