"""`python -m mcp_servers.shell --root DIR`: serve the shell tool over stdio."""

from mcp_servers._shared.cli import ServerCommand
from mcp_servers.shell.server import create_server

COMMAND = ServerCommand(name="shell", factory=create_server, takes_environ=True)
"""This server's command line; the test harness builds it in memory from the same arguments."""

if __name__ == "__main__":
    COMMAND.run()
