"""A sandboxed command's connection to a host off the allowlist, asked as a `network` approval.

The egress proxy (backend/sandbox/proxy.py) holds the connection while the person is asked in
the command's session, like any other approval and on every channel: allow once (this
connection), for the session (this host and port, until the host restarts), always (kept in
the data dir; an admin's answer), or deny. No answer in time refuses.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from backend.paths import private_opener
from backend.approvals.broker import ApprovalBroker
from backend.approvals.asking import WaitingSink, ask_and_wait
from backend.approvals.untrusted import UntrustedContent
from backend.sandbox.proxy import NetworkRequest

NETWORK_TOOL = "network"
"""The approval's tool name: what the card and the terminal show for a connection."""


class NetworkDesk:
    """Decides the egress proxy's questions (its `decide`) by asking a person."""

    def __init__(
        self,
        broker: ApprovalBroker,
        sessions: WaitingSink,
        *,
        remembered: Path,
        untrusted: UntrustedContent | None = None,
    ) -> None:
        """`remembered`: the JSON file of hosts a person allowed always. `untrusted`: with
        `permissions.after_untrusted: ask`, a session that took in outside text is asked about
        every connection, remembered hosts too (issue 34)."""
        self._untrusted = untrusted
        self._broker = broker
        self._sessions = sessions
        self._file = remembered
        self._session_allows: dict[str, set[str]] = {}
        self._always: set[str] = set(_load(remembered))

    def always_allowed(self) -> list[str]:
        """`host:port` entries a person allowed always."""
        return sorted(self._always)

    async def decide(self, request: NetworkRequest) -> bool:
        key = f"{request.host}:{request.port}"
        after = None
        if self._untrusted is not None:
            await self._untrusted.load(request.session_id)
            after = self._untrusted.before(request.session_id)
        remembered = key in self._always or key in self._session_allows.get(request.session_id, ())
        if remembered and after is None:
            return True
        reason = (
            f"A command wants to connect to {key}, which is not on the sandbox's network allowlist "
            "(sandbox.network.allow)"
        )
        if after is not None:
            reason = (
                f"A command wants to connect to {key} {after.label} (outside text from {after.source}): "
                "every connection asks for the rest of the session"
            )
        approval = await ask_and_wait(
            self._broker,
            self._sessions,
            session_id=request.session_id,
            kind="network",
            tool_call_id=f"network:{uuid.uuid4().hex[:12]}",
            tool_name=NETWORK_TOOL,
            arguments={"host": request.host, "port": request.port, "scheme": request.scheme},
            reason=reason,
        )
        if approval.status != "allowed" or approval.decision is None:
            return False
        if approval.decision.kind == "allow_session":
            self._session_allows.setdefault(request.session_id, set()).add(key)
        elif approval.decision.kind == "allow_always":
            self._always.add(key)
            _save(self._file, sorted(self._always))
        return True


def _load(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [str(item) for item in data] if isinstance(data, list) else []


def _save(path: Path, hosts: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    with open(temp, "w", opener=private_opener) as out:
        json.dump(hosts, out)
    os.replace(temp, path)
