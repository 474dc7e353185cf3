"""The roots the pool offers a server: the workspaces of the sessions calling it.

One server process serves every session, so "the client's roots" has no single answer. The
pool answers `roots/list` with the workspace of the call the request belongs to when it can
tell, and with every workspace that has a call in flight when it cannot:

- On a 2026-07-28 connection a server asks within the call's own round trip (an
  `InputRequiredResult`), so the answer is exactly the calling session's workspace.
- On a handshake-era connection (the reference servers) `roots/list` is a request of its own
  that names no call. The answer is then the workspaces of all calls in flight on that server,
  or, when none is, the workspace of the last call. Before a call whose workspace the server
  has not been given yet, the pool sends `notifications/roots/list_changed`, so a server that
  keeps its roots asks again (the 2026-07-28 era has no client notifications, and needs none).

Roots are advice to a server, not a fence: the built-in servers keep taking the workspace from
the request's `_meta`, and what a tool may touch is decided by the gate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import mcp_types

_call_workspace: ContextVar[Path | None] = ContextVar("overseer_call_workspace", default=None)
"""The workspace of the call running in this task, for a `roots/list` asked within that call."""


class WorkspaceRoots:
    """The workspaces of one server's calls: which are in flight, which came last."""

    def __init__(self) -> None:
        self._in_flight: Counter[Path] = Counter()
        self._last: Path | None = None

    def current(self) -> tuple[Path, ...]:
        """What a `roots/list` that names no call is answered with (see the module docstring)."""
        if self._in_flight:
            return tuple(sorted(self._in_flight))
        return (self._last,) if self._last is not None else ()

    def for_request(self) -> tuple[Path, ...]:
        """The roots for a `roots/list` asked now: the calling workspace when known, else `current()`."""
        workspace = _call_workspace.get()
        return (workspace,) if workspace is not None else self.current()

    @contextmanager
    def calling(self, workspace: Path) -> Iterator[None]:
        """Count a call from `workspace` as in flight, and mark this task as that call's, meanwhile."""
        workspace = workspace.absolute()
        self._in_flight[workspace] += 1
        self._last = workspace
        token = _call_workspace.set(workspace)
        try:
            yield
        finally:
            _call_workspace.reset(token)
            self._in_flight[workspace] -= 1
            if self._in_flight[workspace] <= 0:
                del self._in_flight[workspace]


def roots_result(workspaces: tuple[Path, ...]) -> mcp_types.ListRootsResult:
    """The `roots/list` answer for these workspaces, as `file://` URIs named after their folders."""
    return mcp_types.ListRootsResult(
        roots=[mcp_types.Root(uri=path.as_uri(), name=path.name or str(path)) for path in workspaces]
    )
