"""The Landlock fallback: real confined processes on this kernel, and the prefix the host builds."""

from __future__ import annotations

import errno
import glob
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import backend.sandbox.landlock_exec as landlock_exec
from backend.sandbox.landlock_exec import landlock_argv, probe_abi

SCRIPT = landlock_exec.__file__
# The real interpreter, not the venv's symlink: the venv's pyvenv.cfg is outside what is granted.
PYTHON = os.path.realpath(sys.executable)
SYSTEM_READ_ONLY = ["/usr", "/bin", "/etc", *glob.glob("/lib*"), os.path.realpath(sys.base_prefix)]

# Runs one action in the confined child; prints "ok", or the errno's name and exits 3.
ATTEMPT = """
import errno, sys
try:
{action}
except OSError as error:
    print(errno.errorcode[error.errno])
    sys.exit(3)
print("ok")
"""


@dataclass(kw_only=True)
class Sandbox:
    """A workspace granted read-write, and a sibling folder (with a secret file) granted nothing."""

    workspace: Path
    outside: Path
    secret: Path
    ro: list[str] = field(default_factory=lambda: list(SYSTEM_READ_ONLY))

    def run(
        self,
        command: list[str],
        *,
        ro: Sequence[str] = (),
        connect_ports: Sequence[int] = (),
        no_net: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """Runs `command` under landlock_exec.py and returns what it did."""
        prefix = landlock_argv(
            sys.executable, SCRIPT, rw=[self.workspace], ro=[*self.ro, *ro],
            connect_ports=connect_ports, no_net=no_net,
        )
        return subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=60)

    def attempt(
        self, action: str, *, ro: Sequence[str] = (), connect_ports: Sequence[int] = (), no_net: bool = False
    ) -> str:
        """Runs Python statements confined; "ok", or the name of the errno they failed with."""
        code = ATTEMPT.format(action=textwrap.indent(textwrap.dedent(action).strip(), "    "))
        result = self.run([PYTHON, "-I", "-S", "-c", code], ro=ro, connect_ports=connect_ports, no_net=no_net)
        assert result.returncode in (0, 3), result.stderr
        return result.stdout.strip()


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("secret")
    return Sandbox(workspace=workspace, outside=outside, secret=secret)


@pytest.fixture
def tcp_server() -> Iterator[socket.socket]:
    # A listening socket completes connects from its backlog: no thread, no accept needed.
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


def port_of(server: socket.socket) -> int:
    return int(server.getsockname()[1])


def connect_to(port: int) -> str:
    return f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=10).close()"


def test_this_kernel_offers_landlock_with_network_rules_and_scopes():
    assert probe_abi() >= 6


def test_a_command_writes_inside_its_workspace(sandbox: Sandbox):
    target = sandbox.workspace / "out.txt"
    assert sandbox.attempt(f"open({str(target)!r}, 'w').write('hello')") == "ok"
    assert target.read_text() == "hello"


def test_writing_a_file_outside_the_workspace_is_refused(sandbox: Sandbox):
    target = sandbox.outside / "leak.txt"
    assert sandbox.attempt(f"open({str(target)!r}, 'w').write('leak')") == "EACCES"
    assert not target.exists()


def test_the_refusal_reaches_the_caller_as_a_failing_exit_and_a_message(sandbox: Sandbox):
    result = sandbox.run([PYTHON, "-I", "-S", "-c", f"open({str(sandbox.outside / 'x')!r}, 'w')"])
    assert result.returncode != 0
    assert "PermissionError" in result.stderr


def test_reading_a_file_outside_the_granted_paths_is_refused(sandbox: Sandbox):
    assert sandbox.attempt(f"open({str(sandbox.secret)!r}).read()") == "EACCES"


def test_listing_a_folder_outside_the_granted_paths_is_refused(sandbox: Sandbox):
    assert sandbox.attempt(f"import os; os.listdir({str(sandbox.outside)!r})") == "EACCES"


def test_the_read_only_system_paths_can_be_read_and_executed(sandbox: Sandbox):
    true = os.path.realpath(shutil.which("true") or "/usr/bin/true")
    assert true.startswith("/usr/")
    assert sandbox.attempt(f"open({true!r}, 'rb').read(); import os; os.listdir('/usr')") == "ok"
    assert sandbox.run([true]).returncode == 0


def test_a_read_only_path_refuses_writes(sandbox: Sandbox, tmp_path: Path):
    readonly = tmp_path / "readonly"
    readonly.mkdir()
    (readonly / "kept.txt").write_text("kept")
    action = f"open({str(readonly / 'kept.txt')!r}, 'a').write('changed')"
    assert sandbox.attempt(action, ro=[str(readonly)]) == "EACCES"
    assert sandbox.attempt(f"open({str(readonly / 'kept.txt')!r}).read()", ro=[str(readonly)]) == "ok"
    assert (readonly / "kept.txt").read_text() == "kept"


def test_removing_a_file_outside_is_refused(sandbox: Sandbox):
    assert sandbox.attempt(f"import os; os.remove({str(sandbox.secret)!r})") == "EACCES"
    assert sandbox.secret.read_text() == "secret"


def test_a_hard_link_to_an_outside_file_cannot_be_made(sandbox: Sandbox):
    link = sandbox.workspace / "link.txt"
    action = f"import os; os.link({str(sandbox.secret)!r}, {str(link)!r})"
    assert sandbox.attempt(action) in ("EXDEV", "EACCES")
    assert not link.exists()


def test_renaming_a_workspace_file_out_of_the_workspace_is_refused(sandbox: Sandbox):
    inside = sandbox.workspace / "mine.txt"
    inside.write_text("mine")
    action = f"import os; os.rename({str(inside)!r}, {str(sandbox.outside / 'mine.txt')!r})"
    assert sandbox.attempt(action) in ("EXDEV", "EACCES")
    assert inside.exists()


def test_a_single_file_can_be_granted_without_its_folder(sandbox: Sandbox):
    sibling = sandbox.outside / "sibling.txt"
    sibling.write_text("sibling")
    granted = [str(sandbox.secret)]
    assert sandbox.attempt(f"assert open({str(sandbox.secret)!r}).read() == 'secret'", ro=granted) == "ok"
    assert sandbox.attempt(f"open({str(sibling)!r}).read()", ro=granted) == "EACCES"


def test_granted_paths_that_do_not_exist_are_skipped(sandbox: Sandbox, tmp_path: Path):
    missing = [str(tmp_path / "missing"), "/no/such/path", f"{sandbox.secret}/below-a-file"]
    assert sandbox.attempt("pass", ro=missing) == "ok"


def test_no_net_refuses_a_tcp_connect_even_to_loopback(sandbox: Sandbox, tcp_server: socket.socket):
    assert sandbox.attempt(connect_to(port_of(tcp_server)), no_net=True) in ("EACCES", "EPERM")


def test_without_network_options_tcp_is_not_restricted(sandbox: Sandbox, tcp_server: socket.socket):
    assert sandbox.attempt(connect_to(port_of(tcp_server))) == "ok"


def test_a_connect_port_allows_that_port_and_no_other(sandbox: Sandbox, tcp_server: socket.socket):
    with socket.create_server(("127.0.0.1", 0)) as other:
        allowed = [port_of(tcp_server)]
        assert sandbox.attempt(connect_to(port_of(tcp_server)), connect_ports=allowed) == "ok"
        assert sandbox.attempt(connect_to(port_of(other)), connect_ports=allowed) in ("EACCES", "EPERM")


def test_binding_a_tcp_port_is_refused_when_tcp_is_restricted(sandbox: Sandbox, tcp_server: socket.socket):
    bind = "import socket; socket.create_server(('127.0.0.1', 0)).close()"
    assert sandbox.attempt(bind, connect_ports=[port_of(tcp_server)]) in ("EACCES", "EPERM")
    assert sandbox.attempt(bind, no_net=True) in ("EACCES", "EPERM")


def test_udp_is_not_confined_by_this_fallback(sandbox: Sandbox):
    # Documented limit (DNS-over-UDP exfiltration stays possible): this test pins it down.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        port = receiver.getsockname()[1]
        send = (
            "import socket; "
            f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))"
        )
        assert sandbox.attempt(send, no_net=True) == "ok"
        receiver.settimeout(10)
        assert receiver.recv(16) == b"x"


def test_signalling_a_process_outside_is_refused(sandbox: Sandbox):
    waiting = [PYTHON, "-I", "-S", "-c", "import sys; sys.stdin.read()"]
    with subprocess.Popen(waiting, stdin=subprocess.PIPE) as outsider:
        try:
            kill = f"import os, signal; os.kill({outsider.pid}, signal.SIGTERM)"
            assert sandbox.attempt(kill) == "EPERM"
            assert outsider.poll() is None
        finally:
            outsider.kill()


def test_an_abstract_unix_socket_outside_is_refused(sandbox: Sandbox):
    name = f"\0overseer-landlock-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(name)
        server.listen()
        connect = f"import socket; socket.socket(socket.AF_UNIX).connect({name!r})"
        assert sandbox.attempt(connect) == "EPERM"


def test_root_gets_no_exemption(sandbox: Sandbox):
    # Landlock checks come on top of DAC: CAP_DAC_OVERRIDE does not get past them.
    action = f"""
        import os
        caps = int(next(l for l in open('/proc/self/status') if l.startswith('CapEff')).split()[1], 16)
        print(os.geteuid(), caps >> 1 & 1)
        open({str(sandbox.outside / 'root.txt')!r}, 'w')
    """
    euid, dac_override, outcome = sandbox.attempt(action, ro=["/proc/self"]).split()
    assert int(euid) == os.geteuid()
    if os.geteuid() == 0:
        assert dac_override == "1"
    assert outcome == "EACCES"


def test_the_exit_code_of_the_command_passes_through(sandbox: Sandbox):
    assert sandbox.run([PYTHON, "-I", "-S", "-c", "raise SystemExit(7)"]).returncode == 7


def test_a_missing_command_exits_127(sandbox: Sandbox):
    result = sandbox.run(["overseer-no-such-command"])
    assert result.returncode == 127


def test_contradictory_network_options_exit_125_before_running_anything(sandbox: Sandbox):
    argv = [sys.executable, "-I", "-S", SCRIPT, "--no-net", "--connect-port", "80", "--", "true"]
    assert subprocess.run(argv, capture_output=True, timeout=60).returncode == 125


def run_main_with_probe(probe: tuple[int, int], argv: list[str]) -> subprocess.CompletedProcess[str]:
    # In a child: if main() ever went on to exec, it must not replace the test runner.
    code = (
        f"import sys; sys.path.insert(0, {os.path.dirname(SCRIPT)!r}); import landlock_exec; "
        f"sys.exit(landlock_exec.main({argv!r}, probe=lambda: {probe!r}))"
    )
    argv = [sys.executable, "-I", "-S", "-c", code]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def test_a_kernel_without_landlock_refuses_to_run_the_command(tmp_path: Path):
    marker = tmp_path / "ran"
    result = run_main_with_probe((0, errno.ENOSYS), ["--", "touch", str(marker)])
    assert result.returncode == 126
    assert result.stderr.startswith("landlock unavailable: ")
    assert len(result.stderr.splitlines()) == 1
    assert not marker.exists()


def test_a_kernel_too_old_for_network_rules_refuses_no_net(tmp_path: Path):
    marker = tmp_path / "ran"
    result = run_main_with_probe((3, 0), ["--no-net", "--", "touch", str(marker)])
    assert result.returncode == 126
    assert result.stderr.startswith("landlock unavailable: ")
    assert not marker.exists()


def test_landlock_argv_builds_the_prefix_ending_with_a_double_dash():
    argv = landlock_argv(
        "/usr/bin/python3", "/opt/landlock_exec.py",
        rw=[Path("/w")], ro=["/usr", "/etc"], connect_ports=[3128], no_net=False,
    )
    assert argv == [
        "/usr/bin/python3", "-I", "-S", "/opt/landlock_exec.py",
        "--rw", "/w", "--ro", "/usr", "--ro", "/etc", "--connect-port", "3128", "--",
    ]
    no_net = landlock_argv("py", "s", rw=[], ro=[], connect_ports=[], no_net=True)
    assert no_net == ["py", "-I", "-S", "s", "--no-net", "--"]


@pytest.mark.parametrize("ports, no_net", [([80], True), ([70000], False), ([-1], False), ([True], False)])
def test_landlock_argv_rejects_bad_ports_and_contradictions(ports: list[int], no_net: bool):
    with pytest.raises(ValueError):
        landlock_argv("py", "s", rw=[], ro=[], connect_ports=ports, no_net=no_net)
