"""A stdio transport for `mcp.Client` that, unlike `mcp.client.stdio.stdio_client`, shows its process.

The pool needs the child's pid (status page, tests), its stderr in a log file of ours, and a
signal the moment the server is gone (stdout at EOF) so it can restart it without waiting for
a call to fail. The message framing and the shutdown order (close stdin, wait, then kill the
process group) follow the SDK's transport.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import anyio
import anyio.lowlevel
import mcp_types
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from backend.mcp.lines import LineSplitter, Oversized

logger = logging.getLogger(__name__)

EXIT_GRACE = 2.0
"""Seconds a server gets to exit by itself once its stdin is closed."""
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL to the server's process group."""
_FLUSH_TIMEOUT = 0.5
_POLL = 0.01


class StdioProcessTransport:
    """Launches `command args` and speaks newline-delimited JSON-RPC over its stdin/stdout.

    One instance is one process: enter it once (through `mcp.Client`). `lost` is set when the
    server's stdout ends, i.e. the process died or hung up; `pid` is known once entered.
    """

    def __init__(
        self, *, command: str, args: list[str], env: dict[str, str], cwd: str | None, errlog: IO[Any]
    ) -> None:
        self.command = command
        self.args = args
        self.env = env
        self.cwd = cwd
        self.errlog = errlog
        self.pid: int | None = None
        self.returncode: int | None = None
        self.lost = anyio.Event()
        self._process: Process | None = None
        self._cm: AbstractAsyncContextManager[TransportStreams] | None = None

    async def __aenter__(self) -> TransportStreams:
        if self._cm is not None:
            raise RuntimeError("a StdioProcessTransport can be entered only once")
        self._cm = self._run()
        return await self._cm.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._cm is not None
        return await self._cm.__aexit__(exc_type, exc, tb)

    def kill(self) -> None:
        """SIGKILL the server's process group now, for a server that stopped answering.

        The polite stop (close stdin, wait, TERM) is for servers that listen; a hung one would
        cost its full grace periods. Its death then ends stdout, which sets `lost` as a crash does.
        """
        process = self._process
        # An exited process's pid may belong to someone else by now.
        if process is not None and process.returncode is None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    def start_failure(self, exc: Exception) -> str:
        """Why the server did not start, from what ended the start (`exc`) and the process's fate."""
        leaves = _leaf_exceptions(exc)
        if self.pid is None:
            os_errors = [e for e in leaves if isinstance(e, OSError)]
            reason = (os_errors[0].strerror or str(os_errors[0])) if os_errors else str(leaves[0])
            return f"could not launch {self.command!r}: {reason}"
        if self.lost.is_set():
            return "exited while starting"
        return f"failed to start: {leaves[0]!r}"

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[TransportStreams]:
        process = await anyio.open_process(
            [self.command, *self.args],
            env=get_default_environment() | self.env,
            cwd=self.cwd,
            stderr=self.errlog,
            # Its own process group, so stopping it also stops whatever it spawned.
            start_new_session=True,
        )
        self.pid = process.pid
        self._process = process
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        writer_done = anyio.Event()

        async def read_stdout() -> None:
            assert process.stdout is not None
            try:
                async with read_writer:
                    splitter = LineSplitter()
                    async for chunk in TextReceiveStream(process.stdout, encoding="utf-8"):
                        for line in splitter.feed(chunk):
                            message = _message_of(line, splitter.limit)
                            if message is None:
                                continue
                            try:
                                await read_writer.send(message)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                # The session is gone; keep draining so a server blocked on a
                                # full pipe can still see stdin close and exit.
                                await _drain(process)
                                return
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError):
                pass  # our own shutdown, or the session went away first
            finally:
                # Set before the read stream closes (the `async with` above), so a caller
                # whose request fails with "Connection closed" already sees `lost`.
                self.lost.set()

        async def write_stdin() -> None:
            assert process.stdin is not None
            try:
                async with write_reader:
                    async for message in write_reader:
                        data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                        await process.stdin.send((data + "\n").encode())
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                # Stdin is gone, so is the server: say so first (as the reader does), then end
                # the session's reads so no request waits forever.
                self.lost.set()
                await read_writer.aclose()
            finally:
                writer_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stdout)
            tg.start_soon(write_stdin)
            try:
                yield read_stream, write_stream
            finally:
                # Stopping must finish even when the caller is cancelled, or the child leaks;
                # every wait inside is bounded.
                with anyio.CancelScope(shield=True):
                    read_stream.close()
                    write_stream.close()
                    with anyio.move_on_after(_FLUSH_TIMEOUT):
                        await writer_done.wait()
                    self.returncode = await stop_process(process)
                tg.cancel_scope.cancel()


async def stop_process(process: Process) -> int | None:
    """Close stdin, wait, then SIGTERM and SIGKILL the process group; return the exit code."""
    assert process.stdin is not None and process.stdout is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited_within(process, EXIT_GRACE):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            if await _exited_within(process, KILL_GRACE):
                break
        else:
            logger.warning("MCP server process %d survived SIGKILL; abandoning it", process.pid)
    # Whatever the server left in its group (children it did not reap or stop) dies with it,
    # whether it exited, crashed or was killed. Safe after the leader is gone: Linux does not
    # reuse a pid while it still names a process group, and an empty group is simply not found.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
    _close_subprocess_transport(process)
    return process.returncode


def _close_subprocess_transport(process: Process) -> None:
    # Not `process.aclose()`: it awaits `wait()` (see above). Closing asyncio's subprocess
    # transport directly avoids the "unclosed transport" warning; nothing public exposes it.
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(PermissionError):
            close()


async def _exited_within(process: Process, timeout: float) -> bool:
    # Polls returncode rather than `process.wait()`, which also waits for the pipes to reach
    # EOF and so hangs while a grandchild still holds them open.
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(_POLL)
    return process.returncode is not None


async def _drain(process: Process) -> None:
    """Read and drop the rest of stdout; ends when the process exits or the pipe is closed."""
    assert process.stdout is not None
    with anyio.CancelScope(shield=True):
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            while True:
                await process.stdout.receive()


def _message_of(line: str | Oversized, limit: int) -> SessionMessage | Exception | None:
    """What a line means for the session: a message, a parse error, or nothing (blank)."""
    if isinstance(line, str):
        return _parse_line(line) if line.strip() else None
    request_id = line.request_id()
    logger.warning("MCP server wrote a %d-character line; read at most %d", line.length, limit)
    if request_id is None:
        return None  # nobody to answer: the caller's own timeout ends its wait
    error = {
        "code": -32000,
        "message": (
            f"the server's answer was {line.length:,} characters, more than the {limit:,} the host "
            "reads; ask for less (a narrower path or pattern, a smaller page)"
        ),
    }
    return SessionMessage(
        mcp_types.jsonrpc_message_adapter.validate_python({"jsonrpc": "2.0", "id": request_id, "error": error})
    )


def _parse_line(line: str) -> SessionMessage | Exception:
    """One stdout line as a message; a parse error is passed on as a value for the session."""
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        logger.warning("MCP server wrote a line that is not JSON-RPC: %.200s", line)
        return exc


def _leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or the exception itself."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaf_exceptions(inner)]
    return [exc]


def log_tail(path: Path, start: int, max_bytes: int = 800) -> str:
    """The end of what a server wrote to its log since offset `start`, to quote in an error."""
    try:
        with open(path, "rb") as f:
            f.seek(max(start, f.seek(0, 2) - max_bytes))
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return ""
    # Lines starting "--- " are the pool's own markers between starts.
    lines = [line for line in lines if line.strip() and not line.startswith("--- ")][-6:]
    if not lines:
        return f"; its log is {path}"
    return f"; its log ({path}) ends with:\n" + "\n".join(lines)
