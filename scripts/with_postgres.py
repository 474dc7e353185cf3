#!/usr/bin/env python3
"""Run a command with a PostgreSQL server for the tests: the machine's, or a private one for the run.

    scripts/with_postgres.py .venv/bin/python -m pytest -q

If a Postgres server answers at `OVERSEER_TEST_POSTGRES_URL` (default
postgresql://postgres@127.0.0.1:5432/postgres), the command runs as it is. Otherwise this script
starts a server of its own: Debian's `postgresql` package (apt-get, as root, when no `initdb` is
found), `initdb` in a temporary folder (trust auth, superuser `postgres`), listening on 127.0.0.1
only (5432 if free, else a free port), its Unix socket in that folder. The command then runs with
`OVERSEER_TEST_POSTGRES_URL` naming that server; when it ends, however it ends, the server is stopped
and the folder removed. The script exits with the command's status.

Standard library only: `make test` runs it before anything else is known to work. Postgres refuses
to run as root, so as root the server runs as Debian's `postgres` user.
"""

from __future__ import annotations

import ctypes
import glob
import os
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import parse_qs, unquote, urlsplit

URL_VARIABLE = "OVERSEER_TEST_POSTGRES_URL"
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
SERVER_USER = "postgres"  # Debian's package creates it; also the superuser initdb makes
START_TIMEOUT = 30.0  # seconds for the server to accept connections
STOP_TIMEOUT = 15.0  # seconds for a fast shutdown before the server is killed
PROBE_TIMEOUT = 1.0
SSL_REQUEST = struct.pack("!ii", 8, 80877103)  # the protocol's SSLRequest: a server answers one byte


@dataclass(kw_only=True, frozen=True)
class Target:
    """Where a Postgres URL points: a TCP host and port, or a Unix socket directory and port."""

    host: str
    port: int

    @property
    def unix_socket(self) -> str | None:
        """The socket file when `host` is a directory (libpq's rule: a host starting with `/`)."""
        return f"{self.host}/.s.PGSQL.{self.port}" if self.host.startswith("/") else None

    def __str__(self) -> str:
        return self.unix_socket or f"{self.host}:{self.port}"


def target_of(url: str) -> Target:
    """The server a libpq URL or `key=value` conninfo string names (libpq's defaults fill the gaps)."""
    if "://" in url:
        parts = urlsplit(url)
        first = parts.netloc.rpartition("@")[2].split(",")[0]  # libpq tries a host list in order
        if first.startswith("["):  # [::1]:5432
            host, _, rest = first[1:].partition("]")
            port = rest.removeprefix(":")
        else:
            host, _, port = first.partition(":")
        query = parse_qs(parts.query)
        host = query.get("host", [unquote(host)])[0]
        port = query.get("port", [port])[0]
    else:
        pairs = dict(item.split("=", 1) for item in url.split() if "=" in item)
        host, port = pairs.get("host", ""), pairs.get("port", "")
    host = host.split(",")[0] or "/var/run/postgresql"  # Debian's libpq default socket directory
    return Target(host=host, port=int(port.split(",")[0] or 5432))


def answers(target: Target, timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether a Postgres server is listening at `target`: it answers an SSLRequest with `S` or `N`."""
    try:
        if target.unix_socket:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            address: str | tuple[str, int] = target.unix_socket
        else:
            info = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)[0]
            sock = socket.socket(info[0], socket.SOCK_STREAM)
            address = info[4][:2]
        with sock:
            sock.settimeout(timeout)
            sock.connect(address)
            sock.sendall(SSL_REQUEST)
            return sock.recv(1) in (b"S", b"N")
    except OSError:
        return False


def port_is_free(port: int) -> bool:
    """Whether 127.0.0.1:`port` can be bound now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """5432 if it is free, else a port the kernel picks (free now; the server binds it a moment later)."""
    if port_is_free(5432):
        return 5432
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_bin_dir() -> Path | None:
    """The directory holding `initdb` and `postgres`: Debian's newest, else whatever `initdb` PATH has."""
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    if found:
        newest = max(found, key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
        return Path(newest).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def install_postgresql() -> None:
    """Debian's `postgresql` package, as `make test` installs Chromium: root only."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql"]
    subprocess.run(install, check=True, env=env)


def stop_when_this_script_dies() -> None:
    """In the server's process before exec: if this script is killed (SIGKILL leaves no `finally`),
    the kernel sends the server SIGINT, its fast shutdown, instead of leaving it running."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG


def fail(message: str) -> NoReturn:
    """Say why on stderr and exit 1 (the `finally` blocks still stop the server)."""
    print(f"with_postgres: {message}", file=sys.stderr)
    raise SystemExit(1)


@dataclass(kw_only=True)
class PrivateServer:
    """A throwaway cluster in a temporary folder, run by `user` (None: this process's user)."""

    bin_dir: Path
    user: pwd.struct_passwd | None
    folder: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def _log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def _spawn(self, argv: list[str], *, session: bool) -> subprocess.Popen[bytes]:
        """`argv` as the server's user, in the folder, its output appended to the log; `session`:
        in a session of its own, out of reach of a Ctrl-C in the terminal (this script stops it)."""
        as_user: dict[str, object] = {}
        if self.user is not None:
            as_user = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        with self.log.open("ab") as log:
            return subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder, start_new_session=session,
                preexec_fn=stop_when_this_script_dies, **as_user,  # type: ignore[arg-type]
            )

    def start(self) -> None:
        """initdb, then the server; returns once it accepts connections (bounded by START_TIMEOUT)."""
        data, bin_dir = self.folder / "data", self.bin_dir
        initdb_argv = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                       "-E", "UTF8", "--locale=C", "--no-sync"]  # fmt: skip
        initdb = self._spawn(initdb_argv, session=False)
        if initdb.wait() != 0:
            fail(f"initdb failed ({initdb.returncode}):\n{self._log_text()}")
        server_argv = [str(bin_dir / "postgres"), "-D", str(data),
                       "-h", "127.0.0.1", "-p", str(self.port), "-k", str(self.folder),
                       # A cluster that lives for one run: durability buys nothing and costs time.
                       "-c", "fsync=off", "-c", "synchronous_commit=off",
                       "-c", "full_page_writes=off"]  # fmt: skip
        self.process = self._spawn(server_argv, session=True)
        deadline = time.monotonic() + START_TIMEOUT
        pid_file = data / "postmaster.pid"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                fail(f"the server exited ({self.process.returncode}):\n{self._log_text()}")
            # What `pg_ctl -w` waits for: the 8th line of postmaster.pid turns to "ready".
            lines = pid_file.read_text(errors="replace").splitlines() if pid_file.exists() else []
            if len(lines) >= 8 and lines[7].strip() == "ready":
                if answers(Target(host="127.0.0.1", port=self.port)):
                    return
            time.sleep(0.05)
        fail(f"the server did not accept connections within {START_TIMEOUT:.0f} s:\n{self._log_text()}")

    def stop(self) -> None:
        """Fast shutdown (SIGINT: open sessions are ended), then SIGKILL if it takes too long."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_forwarding_signals(command: list[str], env: dict[str, str]) -> int:
    """Run `command` to its end; SIGTERM/SIGHUP are passed on, SIGINT reaches it from the terminal."""
    received: list[int] = []
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, _frame: object) -> None:
        if child is None:
            received.append(signum)
        else:
            child.send_signal(signum)

    # Handlers, not SIG_IGN: handlers reset to the default in the child, an ignored signal would not.
    signal.signal(signal.SIGINT, lambda _signum, _frame: None)
    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGHUP, forward)
    try:
        child = subprocess.Popen(command, env=env)
    except OSError as error:
        print(f"with_postgres: cannot run {command[0]!r}: {error.strerror}", file=sys.stderr)
        return 127
    for signum in received:  # one that came while the child was being started
        child.send_signal(signum)
    code = child.wait()
    return 128 - code if code < 0 else code


def main(argv: list[str]) -> int:
    """See the module docstring."""
    if not argv:
        fail("usage: with_postgres.py COMMAND [ARG...]")
    target = target_of(os.environ.get(URL_VARIABLE) or DEFAULT_URL)
    if answers(target):
        os.execvp(argv[0], argv)

    bin_dir = server_bin_dir()
    if bin_dir is None:
        if os.geteuid() != 0:
            fail(f"no Postgres server at {target} and no initdb to start one; run as root (`make test` then "
                 f"installs Debian's postgresql), start a server, or set {URL_VARIABLE}")  # fmt: skip
        install_postgresql()
        if answers(target):  # the package may have started its own cluster there
            os.execvp(argv[0], argv)
        bin_dir = server_bin_dir()
        if bin_dir is None:
            fail("installed postgresql, yet no initdb under /usr/lib/postgresql/*/bin")

    user = None
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam(SERVER_USER)
        except KeyError:
            fail(f"Postgres refuses to run as root and there is no {SERVER_USER!r} user to run it as")

    # Until the command runs, a SIGTERM or SIGHUP ends this script through its `finally`.
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda signum, _frame: sys.exit(128 + signum))
    started = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="overseer-postgres-"))
    server = PrivateServer(bin_dir=bin_dir, user=user, folder=folder, port=free_port())
    try:
        if user is not None:
            os.chown(folder, user.pw_uid, user.pw_gid)
        server.start()
        print(f"with_postgres: no server at {target}; started {server.url} in {folder} "
              f"({time.monotonic() - started:.1f} s)", file=sys.stderr)  # fmt: skip
        return run_forwarding_signals(argv, {**os.environ, URL_VARIABLE: server.url})
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
        if folder.exists():
            print(f"with_postgres: could not remove {folder}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
