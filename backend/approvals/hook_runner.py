"""Running one configured hook handler: a command with the event's JSON on stdin, or a POST.

A command runs in its agent's sandbox (the same bubblewrap or Landlock prefix a shell command of
the session gets, from backend/approvals/confinement.py): the workspace read-write, the system
read-only, no network, the data dir hidden. Its process group is killed at its timeout. What it
says is returned as it is; what it means is backend/approvals/hook_answers.py's business.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from backend.domain.hook_config import CommandHook, HttpHook

STREAM_LIMIT = 1_000_000
"""Bytes of a handler's stdout or stderr that are read; the rest is cut."""
SAFE_ENVIRONMENT = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""What a hook command gets of the host's environment, as a stdio MCP server does: never the
host's token or a provider's API key (the agent can read what a hook writes in its workspace)."""


@dataclass(kw_only=True)
class HandlerRun:
    """What one handler did: its exit code (an HTTP hook's 2xx reads as 0), its output, or why it failed."""

    principal: str
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    failure: str | None = None
    """Set when the handler did not finish normally: it timed out, could not start, or its URL failed."""

    @property
    def failed(self) -> bool:
        return self.failure is not None


async def run_handler(
    handler: CommandHook | HttpHook,
    payload: dict[str, Any],
    *,
    cwd: Path,
    sandbox: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> HandlerRun:
    """Run one handler on `payload`; never raises (a failure is in the returned run).

    `sandbox`: the command prefix that confines a command handler (empty: unconfined).
    """
    if isinstance(handler, HttpHook):
        return await _post(handler, payload)
    return await _command(handler, payload, cwd=cwd, sandbox=sandbox, env=env)


async def _command(
    handler: CommandHook, payload: dict[str, Any], *, cwd: Path, sandbox: Sequence[str], env: dict[str, str] | None
) -> HandlerRun:
    run = HandlerRun(principal=handler.principal)
    environ = {k: v for k, v in os.environ.items() if k in SAFE_ENVIRONMENT} | (env or {})
    try:
        proc = await asyncio.create_subprocess_exec(
            *sandbox,
            "bash",
            "-c",
            handler.command,
            cwd=cwd,
            env=environ,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group: a timeout kills every descendant
        )
    except OSError as exc:
        run.failure = f"could not start: {exc}"
        return run
    data = json.dumps(payload).encode()
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(data), handler.timeout)
    except TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        run.failure = f"timed out after {handler.timeout:g}s"
        return run
    except asyncio.CancelledError:
        _kill_group(proc.pid)
        raise
    run.exit_code = proc.returncode
    run.stdout = stdout[:STREAM_LIMIT].decode(errors="replace")
    run.stderr = stderr[:STREAM_LIMIT].decode(errors="replace")
    return run


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}


def _client() -> httpx.AsyncClient:
    """One client per event loop, kept: a new one per call costs its TLS context (tens of ms)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        for stale in [other for other in _clients if other.is_closed()]:
            del _clients[stale]
        client = _clients[loop] = httpx.AsyncClient(trust_env=False)
    return client


async def close_clients() -> None:
    """Close this event loop's hook client (the host's shutdown)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()


async def _post(handler: HttpHook, payload: dict[str, Any]) -> HandlerRun:
    run = HandlerRun(principal=handler.principal)
    try:
        response = await _client().post(handler.url, json=payload, headers=handler.headers, timeout=handler.timeout)
    except httpx.TimeoutException:
        run.failure = f"timed out after {handler.timeout:g}s"
        return run
    except httpx.HTTPError as exc:
        run.failure = f"could not be reached: {type(exc).__name__}: {exc}"
        return run
    if not response.is_success:
        run.failure = f"answered HTTP {response.status_code}: {response.text[:500]}"
        return run
    run.exit_code = 0
    run.stdout = response.text[:STREAM_LIMIT]
    return run
