"""`python -m mcp_servers.file --root DIR`: serve the file tools over stdio."""

from mcp_servers._shared.cli import run_server
from mcp_servers.file.server import create_server

if __name__ == "__main__":
    run_server("file", create_server)
