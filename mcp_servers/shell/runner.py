"""Running one shell command: its own process group, merged output kept to a tail, a hard timeout."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_servers._shared.cli import MANAGED_ENV
from mcp_servers._shared.limits import SHELL_OUTPUT_BYTES, TailBuffer
from mcp_servers.shell.reaper import REAPER

DRAIN_GRACE_SECONDS = 1.0
"""How long to keep reading after the command ended, for output its background jobs still send."""

READ_CHUNK = 65_536


@dataclass(kw_only=True)
class CommandOutcome:
    """What a finished (or killed) command left behind."""

    exit_code: int | None
    """None when the command was killed on timeout."""
    timed_out: bool
    output: bytes
    """The tail of stdout and stderr, interleaved as written."""
    dropped: int
    """Bytes cut from the start of the output to respect the limit."""
    output_left_open: bool
    """Background processes still held the output open when reading stopped."""


async def run_command(
    command: str,
    cwd: Path,
    timeout: float,
    *,
    output_limit: int = SHELL_OUTPUT_BYTES,
    wrap: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> CommandOutcome:
    """Run `bash -c command` in `cwd`; on timeout SIGKILL its whole process group.

    `wrap` is the sandbox's command prefix (bwrap, Landlock): it starts in the same process group,
    so a timeout kills it, and it takes every process of the sandbox with it.
    stdin is /dev/null: the server's own stdin is the MCP transport. The command's environment is
    `environ` (default: the server's own) without the managed flag.
    """
    env = {key: value for key, value in (os.environ if environ is None else environ).items() if key != MANAGED_ENV}
    # Our own pipe rather than PIPE: asyncio's proc.wait() would otherwise also wait
    # for the pipe to close, which a background job (`server &`) may never do.
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *wrap,
            "bash",
            "-c",
            command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,  # its own process group, so a timeout can kill every descendant
            preexec_fn=REAPER.preexec(),  # and the group dies with this server, however it ends
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    stream, transport = await _open_reader(read_fd)
    buffer = TailBuffer(output_limit)
    reader = asyncio.create_task(_pump(stream, buffer))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
            kill_process_group(proc.pid)
            await proc.wait()
        done, _ = await asyncio.wait({reader}, timeout=DRAIN_GRACE_SECONDS)
        return CommandOutcome(
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            output=buffer.getvalue(),
            dropped=buffer.dropped,
            output_left_open=not done,
        )
    finally:
        if proc.returncode is None:  # cancelled while running: leave nothing behind
            kill_process_group(proc.pid)
        reader.cancel()
        transport.close()


def kill_process_group(pgid: int) -> None:
    """SIGKILL every process in the group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


async def _open_reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(loop=loop)
    pipe = os.fdopen(fd, "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream, loop=loop), pipe
        )
    except BaseException:
        pipe.close()
        raise
    return stream, transport


async def _pump(stream: asyncio.StreamReader, buffer: TailBuffer) -> None:
    while chunk := await stream.read(READ_CHUNK):
        buffer.write(chunk)
