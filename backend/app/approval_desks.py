"""The desks where an MCP server's own requests are put to a person as approvals.

Three requests do not come from the model's tool calls but from a server while it runs one: its
questions (`elicitation/create`), its requests to sample the session's model
(`sampling/createMessage`), and a sandboxed command's connection to a host off the allowlist
(held by the egress proxy, which only exists to ask the network desk). Each is asked in the
calling session like any approval. Unlike a tool call's approval, none can outlive the process:
the request that waits for the answer ends with the server's connection.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from backend.approvals.asking import WaitingSink
from backend.approvals.broker import ApprovalBroker
from backend.approvals.elicitation_desk import ElicitationDesk
from backend.approvals.network_desk import NetworkDesk
from backend.approvals.sampling_desk import SamplingDesk
from backend.approvals.untrusted import UntrustedContent
from backend.mcp.elicitation import SamplingHandler
from backend.mcp.pool import McpPool
from backend.sandbox.launcher import SandboxStatus
from backend.sandbox.proxy import EgressProxy

SERVER_REQUEST_KINDS = ("elicitation", "sampling", "network")
"""Approvals asked for a server's own request, which a restart ends (they cannot be resumed)."""


class ApprovalDesks:
    """The elicitation, sampling and network desks of one host, and the egress proxy that asks the last."""

    def __init__(
        self,
        *,
        broker: ApprovalBroker,
        sessions: WaitingSink,
        data_dir: Path,
        untrusted: UntrustedContent,
        sandbox: SandboxStatus,
    ) -> None:
        """`sessions`: told while a session waits on a desk (the host forwards it to the runner)."""
        self._broker = broker
        self.elicitations = ElicitationDesk(broker, sessions)
        self.sampling = SamplingDesk(broker, sessions)
        self.network = NetworkDesk(broker, sessions, remembered=data_dir / "network_allow.json", untrusted=untrusted)
        """Asks a person about a command's connection to a host off the allowlist."""
        self.egress: EgressProxy | None = None
        if sandbox.supports_proxy:
            # It opens a socket only for a session whose commands get the network (the host's
            # `sandbox.network`, or an agent's own). Unix socket paths are short (108 bytes):
            # a private folder of its own under /tmp, removed at the end.
            self.egress = EgressProxy(Path(tempfile.mkdtemp(prefix="overseer-net-")), decide=self.network.decide)
        self._sample: SamplingHandler | None = None

    def serve(self, pool: McpPool, *, sample: SamplingHandler) -> None:
        """Take the pool's servers' questions, and hand their sampling requests to `sample`."""
        pool.elicitations.handler = self.elicitations.ask
        pool.elicitations.sampler = sample
        self._sample = sample

    def leave(self, pool: McpPool) -> None:
        """Stop answering a shared pool that outlives this host (another host may have taken it over)."""
        if pool.elicitations.handler == self.elicitations.ask:
            pool.elicitations.handler = None
        if self._sample is not None and pool.elicitations.sampler == self._sample:
            pool.elicitations.sampler = None

    async def withdraw_server_requests(self) -> None:
        """Close the questions and sampling requests servers asked before the last shutdown.

        Unlike a tool call's approval, they cannot be resumed: the request that waited for the
        answer ended with the server's connection, and an answer now would reach nobody.
        """
        for approval in await self._broker.pending():
            if approval.kind in SERVER_REQUEST_KINDS:
                await self._broker.cancel(
                    approval.id, "Overseer restarted, and the MCP server's request ended with its connection."
                )

    async def aclose(self) -> None:
        """Close the egress proxy and remove its folder of sockets."""
        if self.egress is not None:
            await self.egress.aclose()
            shutil.rmtree(self.egress.directory, ignore_errors=True)
