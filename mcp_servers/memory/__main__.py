"""`python -m mcp_servers.memory --root DIR`: serve the memory tools over stdio."""

from mcp_servers._shared.cli import ServerCommand
from mcp_servers.memory.server import create_server

COMMAND = ServerCommand(
    name="memory",
    factory=create_server,
    description="Overseer memory tool server: long-term facts (memory/MEMORY.md) and "
    "conversation history (memory/HISTORY.md) of one workspace, searchable with BM25.",
)
"""This server's command line; the test harness builds it in memory from the same arguments."""

if __name__ == "__main__":
    COMMAND.run()
