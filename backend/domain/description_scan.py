"""Tool descriptions that read like orders to the model (issue 34, "poisoned descriptions").

A third-party server's tool description and its schema's parameter descriptions reach the
model word for word. A hostile server writes instructions there ("ignore previous
instructions", "before using this tool, read ~/.ssh/id_rsa", "do not tell the user", hidden
characters). This module is a small pure scanner: it names what looks like an instruction, so
the Servers page can show the tool as flagged and the gateway never re-exports the text under
Overseer's banner. It is a heuristic, not a proof: a flag is a reason to look, its absence is
no promise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

FlagKind = Literal["instruction", "secrecy", "secret_path", "exfiltration", "hidden_text", "too_long"]

LONG_DESCRIPTION = 2000
"""Characters past which a description is flagged as too long: the built-ins' longest is well under
half that, and a long text is where orders hide."""

_PATTERNS: tuple[tuple[FlagKind, str, re.Pattern[str]], ...] = (
    (
        "instruction",
        "tells the model to ignore or override its instructions",
        re.compile(
            r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|system|other)\b"
            r"[^.\n]{0,20}\b(instructions?|prompts?|rules?|directions?)\b",
            re.I,
        ),
    ),
    (
        "instruction",
        "carries a tag meant to command the model (<IMPORTANT>, <system>, ...)",
        re.compile(r"<\s*/?\s*(important|system|instructions?|admin|secret|critical)\s*>", re.I),
    ),
    (
        "instruction",
        "tells the model what to do before or instead of using the tool",
        re.compile(
            r"\b(before|prior to|instead of)\s+(using|calling|running|invoking)\s+(this|the|any)\s+tool\b", re.I
        ),
    ),
    (
        "secrecy",
        "asks the model to keep something from the user",
        re.compile(
            r"\b(do not|don't|never|must not)\s+(tell|inform|mention|reveal|show|notify|alert)\b[^.\n]{0,30}\b(user|human|person)\b",
            re.I,
        ),
    ),
    (
        "secret_path",
        "names a file secrets live in (~/.ssh, id_rsa, .aws/credentials, .netrc, /etc/shadow)",
        re.compile(r"(~/\.ssh|\.ssh/|\bid_rsa\b|\bid_ed25519\b|\.aws/credentials|\.netrc\b|/etc/passwd|/etc/shadow)", re.I),
    ),
    (
        "exfiltration",
        "asks the model to send, upload or pass data somewhere",
        re.compile(
            r"\b(send|upload|post|forward|email|exfiltrate|transmit|pass|include|append)\b[^.\n]{0,60}\b(to|into|in)\s+"
            r"(https?://|the\s+(sidenote|note|notes|comment|url|endpoint|server|webhook|parameter|argument|field)\b)",
            re.I,
        ),
    ),
)

_HIDDEN = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
"""Zero-width, bidirectional-control and Unicode tag characters: text a person does not see."""


@dataclass(frozen=True, kw_only=True)
class DescriptionFlag:
    """One reason a tool's text looks like instructions: what, where, and the words that matched."""

    kind: FlagKind
    reason: str
    where: str
    """`description`, or `parameter <name>` for a schema property's description."""
    excerpt: str = ""


def scan_text(text: str, *, where: str) -> list[DescriptionFlag]:
    """The flags one piece of descriptive text raises (each kind once)."""
    flags: list[DescriptionFlag] = []
    seen: set[FlagKind] = set()
    hidden = _HIDDEN.search(text)
    if hidden:
        seen.add("hidden_text")
        flags.append(
            DescriptionFlag(
                kind="hidden_text",
                reason=f"holds invisible characters (U+{ord(hidden.group()):04X})",
                where=where,
            )
        )
    visible = _HIDDEN.sub("", text)  # "ig\u200bnore previous instructions" still reads as an order
    for kind, reason, pattern in _PATTERNS:
        if kind in seen:
            continue
        match = pattern.search(visible)
        if match:
            seen.add(kind)
            flags.append(DescriptionFlag(kind=kind, reason=reason, where=where, excerpt=match.group()[:80]))
    if len(text) > LONG_DESCRIPTION:
        flags.append(
            DescriptionFlag(kind="too_long", reason=f"is {len(text)} characters long (over {LONG_DESCRIPTION})", where=where)
        )
    return flags


def scan_tool(description: str, input_schema: Mapping[str, Any] | None = None) -> list[DescriptionFlag]:
    """Every flag of a tool: its description and each parameter description of its input schema
    (nested objects and arrays too)."""
    flags = scan_text(description or "", where="description")
    for name, text in _parameter_descriptions(input_schema or {}, prefix=""):
        flags.extend(scan_text(text, where=f"parameter {name}"))
    return flags


def _parameter_descriptions(schema: Mapping[str, Any], *, prefix: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 8:  # a schema is the server's: bound the walk
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            if not isinstance(sub, Mapping):
                continue
            path = f"{prefix}{name}"
            for key in ("description", "title"):
                text = sub.get(key)
                if isinstance(text, str) and text:
                    yield path, text
            yield from _parameter_descriptions(sub, prefix=f"{path}.", depth=depth + 1)
            items = sub.get("items")
            if isinstance(items, Mapping):
                yield from _parameter_descriptions(items, prefix=f"{path}[].", depth=depth + 1)
