"""`python -m mcp_servers.cron --host-url URL`: serve the cron tools over stdio (token from $OVERSEER_TOKEN)."""

from mcp_servers._shared.cli import ServerCommand, add_host_arguments
from mcp_servers.cron.server import DESCRIPTION, create_server

COMMAND = ServerCommand(name="cron", factory=create_server, description=DESCRIPTION, add_arguments=add_host_arguments)
"""This server's command line; the test harness builds it in memory from the same arguments."""

if __name__ == "__main__":
    COMMAND.run()
