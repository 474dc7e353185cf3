"""The paths to a model: ModelClient, the direct OpenAI and Anthropic wire paths, LiteLLM's model map,
thinking, prompt caching, tool-call arguments and tool images on the wire. Nothing here knows a session."""
