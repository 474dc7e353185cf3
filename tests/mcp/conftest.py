"""Shared helpers for the MCP pool tests: configs that run the fixture server as a real subprocess."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from backend.mcp.config import McpServerConfig

ECHO_SERVER = Path(__file__).parent / "fixtures" / "echo_server.py"

EchoConfig = Callable[..., McpServerConfig]


@pytest.fixture
def echo_config() -> EchoConfig:
    """Build a config that runs the fixture echo server; keyword arguments override fields."""

    def make(**overrides: Any) -> McpServerConfig:
        fields: dict[str, Any] = {"command": sys.executable, "args": [str(ECHO_SERVER)], "start_timeout": 30}
        return McpServerConfig(**(fields | overrides))

    return make


@pytest.fixture
def python_config() -> Callable[[str], McpServerConfig]:
    """A config that runs `python -c CODE`: servers that misbehave on purpose."""

    def make(code: str, **overrides: Any) -> McpServerConfig:
        return McpServerConfig(command=sys.executable, args=["-c", code], **overrides)

    return make
