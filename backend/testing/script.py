"""The reply model of the scripted model server: what a test says the model answers, and what it was asked.

A test writes replies (`Reply`) or functions of the request (`Callable[[ModelRequest], Reply]`);
the server encodes them in the OpenAI or Anthropic wire format. `ModelRequest` is the request as
received, normalised across both APIs so a script can read it without caring which one was used.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from backend.engine.models.tool_media import TOOL_IMAGES_PREAMBLE

Api = Literal["openai", "anthropic"]


@dataclass(kw_only=True)
class ScriptedToolCall:
    """One tool call the scripted model makes.

    `arguments` as a dict is sent as JSON; as a str it is sent verbatim, so a test can send
    malformed JSON on purpose.
    """

    name: str
    arguments: dict | str
    id: str | None = None

    def arguments_json(self) -> str:
        """The arguments as the string the wire carries."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(kw_only=True)
class Reply:
    """One model turn: text, tool calls, or an HTTP error of `status`.

    A non-200 `status` makes the server answer with a provider-style error body; `text`, when
    given, becomes the error message. `raw_body` replaces the whole answer. `usage` is (input_tokens, output_tokens); when None the
    server estimates both from the lengths of the request and the reply. The `hang_*` fields and
    `chunk_interval` script a model that stalls; a hang lasts until the client hangs up or the
    server stops (at most `model_server.HANG_LIMIT` seconds).
    """

    text: str = ""
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)
    status: int = 200
    usage: tuple[int, int] | None = None
    raw_body: str | None = None
    """Sent as it is, with `status` and no provider framing: a broken or hostile provider."""
    hang_before_headers: bool = False
    """Read the request, then send nothing at all: a model server that hangs."""
    hang_after_chunks: int | None = None
    """Stream this many SSE events, then go silent with the connection open: a stream that
    died mid-way. A whole (non-streamed) answer hangs before its headers instead."""
    release: threading.Event | None = None
    """With `hang_after_chunks`: once set, the stream goes on to its end, so a test can look at
    what a client shows mid-answer, then let the answer finish."""
    chunk_interval: float = 0.0
    """Seconds between streamed SSE events: a slow but live model."""
    thinking: str = ""
    """Reasoning the model shows before its answer: OpenAI-style `reasoning_content` deltas, or an
    Anthropic `thinking` block (`thinking_delta`s, then a `signature_delta` of `signature_of(thinking)`)."""
    redacted_thinking: str | None = None
    """Anthropic only: an encrypted `redacted_thinking` block with this `data` (OpenAI has none)."""


@dataclass(kw_only=True)
class SeenToolResult:
    """A tool result found in the conversation a request carries."""

    text: str
    is_error: bool = False
    tool_call_id: str | None = None


@dataclass(kw_only=True)
class SeenImage:
    """An image found in the conversation a request carries, and where it was."""

    mime_type: str
    data: str
    """Base64."""
    in_tool_result: bool
    """Inside a tool result (Anthropic's native form), or in a user message (OpenAI's)."""


@dataclass
class ModelRequest:
    """What the server received, normalised across the OpenAI and Anthropic APIs."""

    api: Api
    model: str
    messages: list[dict]
    system: str | None
    tools: list[dict]
    tool_names: list[str]
    stream: bool
    raw: dict

    @classmethod
    def from_body(cls, api: Api, body: dict) -> ModelRequest:
        """Build from a decoded request body of either API."""
        messages = list(body.get("messages") or [])
        tools = list(body.get("tools") or [])
        if api == "anthropic":
            system = _text_of(body.get("system")) if body.get("system") is not None else None
        else:
            parts = [_text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")]
            system = "\n\n".join(parts) if parts else None
        return cls(
            api=api,
            model=str(body.get("model", "")),
            messages=messages,
            system=system,
            tools=tools,
            tool_names=[n for n in (_tool_name(t) for t in tools) if n],
            stream=bool(body.get("stream")),
            raw=body,
        )

    def last_tool_results(self) -> list[str]:
        """Text of the tool results in the last turn: the trailing `tool` messages (OpenAI) or the
        `tool_result` blocks of the last user message (Anthropic). Empty if the last turn has none."""
        trailing: list[SeenToolResult] = []
        for message in reversed(self.messages):
            if _is_tool_images(message) and not trailing:
                continue  # the user message carrying the turn's images (OpenAI-style APIs)
            found = _results_in(message)
            if not found:
                break
            trailing[:0] = found
            if message.get("role") != "tool":
                break  # an Anthropic user message holds the whole turn's results
        return [r.text for r in trailing]

    def tool_results(self, *, since_prompt: bool = True) -> list[SeenToolResult]:
        """Tool results in order; with `since_prompt`, only those after the person's last prompt
        (the last user message that is not just tool results)."""
        found: list[SeenToolResult] = []
        for message in self.messages:
            results = _results_in(message)
            if results:
                found.extend(results)
            elif since_prompt and _is_prompt(message):
                found = []
        return found

    def images(self, *, since_prompt: bool = True) -> list[SeenImage]:
        """Images in order, in either API's form; with `since_prompt`, only those after the
        person's last prompt."""
        found: list[SeenImage] = []
        for message in self.messages:
            if since_prompt and _is_prompt(message):
                found = []
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    found += [i for b in block["content"] if (i := _image_of(b, in_tool_result=True))]
                elif image := _image_of(block, in_tool_result=message.get("role") == "tool"):
                    found.append(image)
        return found

    def thinking_blocks(self) -> list[dict]:
        """Anthropic `thinking` / `redacted_thinking` blocks in the conversation, in order."""
        return [
            block
            for message in self.messages
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking")
        ]

    def carries_reasoning(self) -> bool:
        """Whether any message carries reasoning in a field of its own (OpenAI-style APIs:
        `reasoning_content`, `reasoning`, `thinking_blocks`) or as Anthropic blocks."""
        fields = ("reasoning_content", "reasoning", "thinking_blocks")
        return bool(self.thinking_blocks()) or any(message.get(f) for message in self.messages for f in fields)

    def last_prompt(self) -> str:
        """Text of the person's last prompt (the last user message that is not tool results)."""
        for message in reversed(self.messages):
            if _is_prompt(message):
                return _text_of(message.get("content"))
        return ""

    def estimated_input_tokens(self) -> int:
        """A rough token count of the request: characters / 4, at least 1."""
        size = len(json.dumps(self.messages)) + len(self.system or "") + len(json.dumps(self.tools))
        return max(1, size // 4)


def signature_of(thinking: str) -> str:
    """The signature the scripted Anthropic API gives a thinking block: derived from its text, so a
    test can tell whether a block came back unmodified."""
    return "sig-" + hashlib.sha256(thinking.encode()).hexdigest()[:32]


Script = list[Reply | Callable[[ModelRequest], Reply]]
ReplySource = Reply | Callable[[ModelRequest], Reply]


def estimated_output_tokens(reply: Reply) -> int:
    """A rough token count of a reply: characters / 4, at least 1."""
    size = len(reply.text) + len(reply.thinking) + sum(len(c.name) + len(c.arguments_json()) for c in reply.tool_calls)
    return max(1, size // 4)


def usage_of(reply: Reply, request: ModelRequest) -> tuple[int, int]:
    """The reply's (input_tokens, output_tokens), scripted or estimated."""
    if reply.usage is not None:
        return reply.usage
    return request.estimated_input_tokens(), estimated_output_tokens(reply)


def new_id(prefix: str) -> str:
    """A fresh provider-looking id, e.g. `call_1f3a...` or `toolu_...`."""
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _tool_name(tool: dict) -> str | None:
    # OpenAI: {"type": "function", "function": {"name": ...}}; Anthropic: {"name": ...}.
    function = tool.get("function")
    if isinstance(function, dict) and function.get("name"):
        return str(function["name"])
    name = tool.get("name")
    return str(name) if name else None


def _text_of(content: Any) -> str:
    """Text of a message content: a str, or a list of blocks/parts whose text is joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for block in content:
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                texts.append(block["text"])
        return "\n".join(texts)
    return str(content)


def _is_tool_images(message: dict) -> bool:
    """The user message that carries a turn's tool images for OpenAI-style APIs."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and bool(content)
        and isinstance(content[0], dict)
        and str(content[0].get("text", "")).startswith(TOOL_IMAGES_PREAMBLE)
    )


def _is_prompt(message: dict) -> bool:
    """A user message that is the person's: neither tool results nor a turn's tool images."""
    return message.get("role") == "user" and not _results_in(message) and not _is_tool_images(message)


def _image_of(block: Any, *, in_tool_result: bool) -> SeenImage | None:
    """An image block (Anthropic) or `image_url` part with a data URL (OpenAI), else None."""
    if not isinstance(block, dict):
        return None
    if block.get("type") == "image":
        source = block.get("source") or {}
        return SeenImage(mime_type=str(source.get("media_type")), data=str(source.get("data")), in_tool_result=in_tool_result)
    if block.get("type") == "image_url":
        url = (block.get("image_url") or {}).get("url", "")
        head, _, data = str(url).partition(";base64,")
        return SeenImage(mime_type=head.removeprefix("data:"), data=data, in_tool_result=in_tool_result)
    return None


def _results_in(message: dict) -> list[SeenToolResult]:
    """The tool results one message carries, in either wire format."""
    if message.get("role") == "tool":
        return [
            SeenToolResult(text=_text_of(message.get("content")), tool_call_id=message.get("tool_call_id"))
        ]
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return []
    return [
        SeenToolResult(
            text=_text_of(block.get("content")),
            is_error=bool(block.get("is_error")),
            tool_call_id=block.get("tool_use_id"),
        )
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def split_for_stream(text: str, parts: int = 3) -> list[str]:
    """Cut `text` into up to `parts` non-empty pieces (2+ whenever it has 2+ characters), so that a
    client has to reassemble streamed deltas rather than get lucky with one."""
    if len(text) < 2:
        return [text] if text else []
    parts = max(2, min(parts, len(text)))
    step = -(-len(text) // parts)  # ceiling division
    return [text[i : i + step] for i in range(0, len(text), step)]
