"""What the host (`backend`) and the tool servers (`mcp_servers`) must read the same way.

Both import this package; it imports neither (pyproject.toml's import contracts). `home.py` is
what a leading `~` means to the file tools and to the rules; `memory_files.py` is the format of
a workspace's memory files, written by the memory server and by the engine.
"""
