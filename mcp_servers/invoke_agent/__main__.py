"""`python -m mcp_servers.invoke_agent --host-url URL`: serve the invoke_agent tool over stdio."""

from mcp_servers._shared.cli import ServerCommand, add_host_arguments
from mcp_servers.invoke_agent.server import DESCRIPTION, create_server

COMMAND = ServerCommand(
    name="invoke_agent", factory=create_server, description=DESCRIPTION, add_arguments=add_host_arguments
)
"""This server's command line; the test harness builds it in memory from the same arguments."""

if __name__ == "__main__":
    COMMAND.run()
