"""The network bridge inside the sandbox: a TCP proxy port relayed to the host's egress proxy.

    python3 -I -S netbridge.py SOCKET PORT -- COMMAND [ARG...]

Inside a sandbox whose only network is its own loopback, it listens on 127.0.0.1:PORT and, once
it listens, starts COMMAND with HTTP(S)_PROXY (http://127.0.0.1:PORT) and ALL_PROXY
(socks5h://127.0.0.1:PORT) set and NO_PROXY empty. Each connection to the port is relayed to the
Unix socket SOCKET, the host's proxy, which speaks both. It forwards SIGTERM, SIGINT and SIGHUP to
COMMAND and exits with COMMAND's status (128+N when signal N ended it, as a shell says); 125 when
the bridge itself cannot start, 126/127 when COMMAND cannot be run or found.

Standalone on purpose: only the Python install and this file are visible in the sandbox. It runs
on every sandboxed command, so it imports only builtin low-level modules: `socket`, `signal` and
`threading` pull in enum and functools and would double Python's start-up time (~13 ms more).
"""

import _signal
import _socket
import _thread
import os
import sys

_FORWARDED_SIGNALS = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)
_CHUNK = 65536
_BRIDGE_FAILED = 125
_child_pid = 0


def _fail(message: str) -> None:
    os.write(2, ("netbridge: " + message + "\n").encode(errors="replace"))
    os._exit(_BRIDGE_FAILED)


def _listen(port: int) -> _socket.socket:
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
    except OSError as error:
        _fail("cannot listen on 127.0.0.1:%d: %s" % (port, error.strerror))
    return listener


def _forward(signum: int, frame: object) -> None:
    if _child_pid > 0:
        os.kill(_child_pid, signum)


def _run_command(command: list[str], port: int) -> None:
    """In the forked child: become COMMAND, with the proxy variables set."""
    for signum in _FORWARDED_SIGNALS:
        _signal.signal(signum, _signal.SIG_DFL)
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec:
    # `yes | head` in the command would never end.
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(_signal, name):
            _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
    http = "http://127.0.0.1:%d" % port
    socks = "socks5h://127.0.0.1:%d" % port  # socks5h: names are resolved by the proxy, not here
    env = dict(os.environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[name] = http
    env["ALL_PROXY"] = env["all_proxy"] = socks
    env["NO_PROXY"] = env["no_proxy"] = ""
    try:
        _exec(command, env)
    except OSError as error:
        os.write(2, ("netbridge: %s: %s\n" % (command[0], error.strerror)).encode(errors="replace"))
        os._exit(127 if isinstance(error, FileNotFoundError) else 126)


def _exec(command: list[str], env: dict[str, str]) -> None:
    """os.execvpe without its PATH lookup, which imports `warnings` (~1.5 ms on every command)."""
    if "/" in command[0]:
        os.execve(command[0], command, env)
    denied = None
    for folder in env.get("PATH", os.defpath).split(":"):
        try:
            os.execve(os.path.join(folder or ".", command[0]), command, env)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except PermissionError as error:  # as execvp: "permission denied" only if nothing else runs
            denied = denied or error
    raise denied or FileNotFoundError(2, "No such file or directory", command[0])


def _pump(source: _socket.socket, target: _socket.socket) -> None:
    """Copy until the source ends or either side fails."""
    try:
        while True:
            data = source.recv(_CHUNK)
            if not data:
                return
            target.sendall(data)
    except OSError:
        return


def _shutdown(sock: _socket.socket, how: int) -> None:
    try:
        sock.shutdown(how)
    except OSError:
        pass


def _relay(client: _socket.socket, path: str) -> None:
    """One connection of the command, to the proxy's socket and back."""
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    inbound_done = _thread.allocate_lock()
    inbound_done.acquire()

    def inbound() -> None:
        _pump(upstream, client)
        # The proxy is done: end both ways (shutdown also wakes the other thread's recv).
        _shutdown(client, _socket.SHUT_RDWR)
        _shutdown(upstream, _socket.SHUT_RDWR)
        inbound_done.release()

    _thread.start_new_thread(inbound, ())
    _pump(client, upstream)
    # The command is done sending: half-close only, its request may still be answered.
    _shutdown(upstream, _socket.SHUT_WR)
    inbound_done.acquire()
    client.close()
    upstream.close()


def _accept_forever(listener: _socket.socket, path: str) -> None:
    while True:
        try:
            fd, _ = listener._accept()
        except OSError:
            return
        client = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM, 0, fd)
        _thread.start_new_thread(_relay, (client, path))


def _exit_status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _quiet_standard_streams() -> None:
    """Let only the command hold stdin and stdout, so a reader sees EOF when the command closes them."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)


def main(argv: list[str]) -> None:
    """Run the bridge (see the module doc); never returns."""
    global _child_pid
    if len(argv) < 4 or argv[2] != "--":
        _fail("usage: netbridge.py SOCKET PORT -- COMMAND [ARG...]")
    path, port_text, command = argv[0], argv[1], argv[3:]
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        _fail("the port must be a number from 1 to 65535, not %r" % port_text)
    port = int(port_text)
    listener = _listen(port)
    for signum in _FORWARDED_SIGNALS:  # before the fork, so none is missed once the child runs
        _signal.signal(signum, _forward)
    pid = os.fork()
    if pid == 0:
        listener.close()
        _run_command(command, port)
    _child_pid = pid
    _quiet_standard_streams()
    _thread.start_new_thread(_accept_forever, (listener, path))
    _, status = os.waitpid(pid, 0)
    # Not sys.exit: relays still copying must not keep the sandbox alive after its command.
    os._exit(_exit_status(status))


if __name__ == "__main__":
    main(sys.argv[1:])
