"""`python -m mcp_servers.invoke_agent --host-url URL`: serve the invoke_agent tool over stdio."""

from mcp_servers._shared.cli import add_host_arguments, run_server
from mcp_servers.invoke_agent.server import DESCRIPTION, create_server

if __name__ == "__main__":
    run_server("invoke_agent", create_server, description=DESCRIPTION, add_arguments=add_host_arguments)
