"""Overseer: an MCP-native agent host with human-in-the-loop approvals."""
