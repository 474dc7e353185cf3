"""Approvals: the broker (persisted requests and the futures that wait on them), the watch that hears
answers written by other processes, the desks that ask on a server's behalf (elicitation, sampling,
network), confinement of commands and the gate, the one road to a tool. See docs/architecture.md."""
