"""`python -m mcp_servers.memory --root DIR`: serve the memory tools over stdio."""

from mcp_servers._shared.cli import run_server
from mcp_servers.memory.server import create_server

if __name__ == "__main__":
    run_server(
        "memory",
        create_server,
        description="Overseer memory tool server: long-term facts (memory/MEMORY.md) and "
        "conversation history (memory/HISTORY.md) of one workspace, searchable with BM25.",
    )
