"""Overseer's built-in MCP tool servers. They import nothing of `backend`."""
