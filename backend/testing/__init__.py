"""Test doubles that ship with Overseer: a scripted model behind real OpenAI and Anthropic HTTP APIs."""

from backend.testing.model_server import ScriptedModelServer
from backend.testing.script import ModelRequest, Reply, Script, ScriptedToolCall, SeenImage, SeenToolResult

__all__ = ["ModelRequest", "Reply", "Script", "ScriptedModelServer", "ScriptedToolCall", "SeenImage", "SeenToolResult"]
