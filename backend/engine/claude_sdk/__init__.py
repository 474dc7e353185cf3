"""The Claude Agent SDK engine: Claude Code's agent loop under Overseer's gate, pool and events."""

from backend.engine.claude_sdk.engine import ClaudeSdkEngine
from backend.engine.claude_sdk.options import SdkTarget, sdk_base_url, sdk_model

__all__ = ["ClaudeSdkEngine", "SdkTarget", "sdk_base_url", "sdk_model"]
