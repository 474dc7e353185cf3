"""The invoke_agent tool server: run a child agent on the Overseer host and return its answer."""
