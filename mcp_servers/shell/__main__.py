"""`python -m mcp_servers.shell --root DIR`: serve the shell tool over stdio."""

from mcp_servers._shared.cli import run_server
from mcp_servers.shell.server import create_server

if __name__ == "__main__":
    run_server("shell", create_server)
