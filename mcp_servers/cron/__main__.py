"""`python -m mcp_servers.cron --host-url URL`: serve the cron tools over stdio (token from $OVERSEER_TOKEN)."""

from mcp_servers._shared.cli import add_host_arguments, run_server
from mcp_servers.cron.server import DESCRIPTION, create_server

if __name__ == "__main__":
    run_server("cron", create_server, description=DESCRIPTION, add_arguments=add_host_arguments)
