"""Text of an earlier tool result going out in a later call's arguments (issue 34, item 4).

A secret read a moment ago (`.env`, a token a tool printed) that shows up in the `body` of a
call to another tool is the shape of an exfiltration, whether the model was told to do it by
injected text or not. `ResultTaint` remembers, per session, the distinctive pieces of each
result (secret-looking tokens, the values of `KEY=value` lines whose key names a secret) and
finds them in a new call's argument strings, as they are or base64 / base64url / hex encoded.

Common words and short values are never remembered: a piece is either a token of at least 16
characters that looks random (several character classes, high entropy), or the value (at least
8 characters) of a key that names a secret. Memory is bounded: so many pieces per session, so
many sessions, the oldest dropped first. Pure: no I/O; the gate feeds it and asks it.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter, OrderedDict
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from backend.domain.stakes import CarriedResult, Encoding, carried_text
from backend.domain.tools import split_tool_name
from backend.rules.policy_engine import Evaluation, ToolCallView, is_read_only

MIN_TOKEN = 16
"""A token shorter than this is never remembered on its looks alone."""
MIN_SECRET_VALUE = 8
"""The shortest value of a secret-named key (`PASSWORD=...`) that is remembered."""
MIN_ENTROPY = 3.0
"""Bits per character a token needs to look random (English words stay under it; keys do not)."""
PIECES_PER_SESSION = 512
SESSIONS_KEPT = 128
SCANNED_CHARS = 64_000
"""Only this much of a result is read (about 15 ms on the event loop): a secret sits near the top
of what a tool printed, and a long result is mostly text no one would send out."""
MAX_ARGUMENT_STRINGS = 256

_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~:@]{%d,}" % MIN_TOKEN)
_SECRET_KEY = re.compile(r"(?i)(secret|token|passw(or)?d|\bpwd\b|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth)")
_KEY_VALUE = re.compile(
    r"""(?mx)
    ["']?(?P<key>[A-Za-z_][A-Za-z0-9_.-]{1,63})["']?   # KEY, "key", 'key'
    \s*[:=]\s*
    ["']?(?P<value>[^\s"',;}{]+)                        # its value, up to a quote or a space
    """
)
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")


@dataclass(frozen=True, kw_only=True)
class _Origin:
    tool_name: str
    tool_call_id: str
    step: int
    secret: bool
    """The piece looks like a credential (a secret-named key's value, or a mixed-case key), not
    merely an id (a hash, a UUID): only such text makes an allowed call ask (the gate)."""


@dataclass
class _Session:
    pieces: OrderedDict[str, _Origin]
    results: int = 0


def secret_pieces(text: str) -> dict[str, bool]:
    """The distinctive pieces of a result's text worth watching for, in order, each with whether
    it looks like a credential rather than an id."""
    text = text[:SCANNED_CHARS]
    found: dict[str, bool] = {}
    for match in _KEY_VALUE.finditer(text):
        value = match.group("value").strip()
        if _SECRET_KEY.search(match.group("key")) and len(value) >= MIN_SECRET_VALUE and not _placeholder(value):
            found[value] = True
    for match in _TOKEN.finditer(text):
        for token in _token_parts(match.group(0)):
            if token not in found and looks_random(token):
                found[token] = _mixed_case(token)
    return found


def looks_random(token: str) -> bool:
    """Whether a token of at least MIN_TOKEN characters looks like a key rather than a word or a path."""
    if len(token) < MIN_TOKEN:
        return False
    classes = sum(bool(re.search(p, token)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    if classes < 2 or _path_like(token):
        return False
    return _entropy(token) >= MIN_ENTROPY


def _mixed_case(token: str) -> bool:
    return all(re.search(p, token) for p in ("[a-z]", "[A-Z]", "[0-9]"))


def _path_like(token: str) -> bool:
    """`/usr/lib/python3.11/site-packages`, `api.example.com/v1`: every segment a word, a number or short."""
    segments = [s for s in re.split(r"[/._\-:@~+=]", token) if s]
    return len(segments) > 1 and all(_WORDLIKE.fullmatch(s) for s in segments)


_WORDLIKE = re.compile(r"[A-Za-z][a-z]*[0-9]{0,2}|[A-Z]+[0-9]{0,2}|[0-9]+|.{1,3}")


class ResultTaint:
    """Per session: the pieces of recent tool results, and where they turn up again."""

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def remember(self, session_id: str, *, tool_name: str, tool_call_id: str, text: str) -> None:
        """Note one tool result of the session (every result counts as a step, pieces or not)."""
        session = self._session(session_id)
        session.results += 1
        for piece, secret in secret_pieces(text).items():
            origin = _Origin(tool_name=tool_name, tool_call_id=tool_call_id, step=session.results, secret=secret)
            session.pieces.pop(piece, None)  # seen again: it is the newest now
            session.pieces[piece] = origin
        while len(session.pieces) > PIECES_PER_SESSION:
            session.pieces.popitem(last=False)

    def find(self, session_id: str, arguments: Any) -> list[CarriedResult]:
        """Each argument string that carries a remembered piece (plain or encoded), once per argument."""
        session = self._sessions.get(session_id)
        if session is None or not session.pieces:
            return []
        found: list[CarriedResult] = []
        for where, value in _strings(arguments, ""):
            hit = _carried(value, session.pieces)
            if hit is None:
                continue
            origin, encoding = hit
            found.append(
                CarriedResult(
                    argument=where or "(the arguments)",
                    tool_name=origin.tool_name,
                    step=origin.step,
                    tool_call_id=origin.tool_call_id,
                    encoding=encoding,
                    looks_secret=origin.secret or encoding != "plain",  # an encoded id is hiding something too
                    text=carried_text(origin.tool_name, origin.step, encoding),
                )
            )
        return found

    def forget(self, session_id: str) -> None:
        """Drop a session's memory (it ended)."""
        self._sessions.pop(session_id, None)

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.pop(session_id, None) or _Session(pieces=OrderedDict())
        self._sessions[session_id] = session
        while len(self._sessions) > SESSIONS_KEPT:
            self._sessions.popitem(last=False)
        return session


def _carried(value: str, pieces: OrderedDict[str, _Origin]) -> tuple[_Origin, Encoding] | None:
    """The newest remembered piece in `value`, as it is, else in one of its decoded runs."""
    for text, encoding in _readings(value):
        for piece in reversed(pieces):
            if piece in text:
                return pieces[piece], encoding
    return None


def _readings(value: str) -> Iterator[tuple[str, Encoding]]:
    """The value itself, then what each base64 or hex run of it decodes to."""
    yield value, "plain"
    for match in _HEX_RUN.finditer(value):
        decoded = _text_of(binascii.unhexlify(match.group(0)))
        if decoded:
            yield decoded, "hex"
    for match in _BASE64_RUN.finditer(value):
        decoded = _base64(match.group(0))
        if decoded:
            yield decoded, "base64"


def _base64(run: str) -> str | None:
    standard = run.replace("-", "+").replace("_", "/").rstrip("=")
    standard += "=" * (-len(standard) % 4)
    try:
        raw = base64.b64decode(standard, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _text_of(raw)


def _text_of(raw: bytes) -> str | None:
    """Decoded bytes as text, when they mostly are text (random bytes are not worth a search)."""
    text = raw.decode("utf-8", errors="ignore")
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in text)
    return text if text and printable >= 0.9 * len(text) else None


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string in the arguments with its place, depth-first, bounded."""
    stack: list[tuple[str, Any]] = [(where, value)]
    seen = 0
    while stack and seen < MAX_ARGUMENT_STRINGS:
        place, item = stack.pop(0)
        if isinstance(item, str):
            seen += 1
            yield place, item
        elif isinstance(item, dict):
            stack.extend((f"{place}.{key}" if place else str(key), v) for key, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((f"{place}[{i}]", v) for i, v in enumerate(item))


def _token_parts(token: str) -> list[str]:
    """A token and its pieces split at `=` and `:` (`KEY=abc...` remembers `abc...` too)."""
    parts = [token]
    for sep in ("=", ":"):
        parts.extend(p for part in list(parts) for p in part.split(sep) if p and p != part)
    return list(dict.fromkeys(p.strip("=") for p in parts if p.strip("=")))


def _entropy(token: str) -> float:
    counts = Counter(token)
    total = len(token)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _placeholder(value: str) -> bool:
    """`changeme`-like or templated values (`${TOKEN}`, `<your-key>`, `xxxxxxxx`) are not secrets."""
    return value.startswith(("$", "<", "{")) or len(set(value.lower())) <= 2 or value.lower() in _PLACEHOLDERS


_PLACEHOLDERS = frozenset({"changeme", "password", "redacted", "undefined", "none", "null", "********"})


CARRIED_SOURCE = "result_taint"
"""The `source` of an evaluation that asks because an argument carries an earlier result's text."""


def escalates(carried: list[CarriedResult], view: ToolCallView, trusted_servers: Collection[str]) -> bool:
    """Whether result text in these arguments makes an allowed call ask: credential-like text (or
    any encoded) going to a third-party tool that does not say it only reads."""
    server = (split_tool_name(view.name) or ("", ""))[0]
    return (
        any(c.looks_secret for c in carried)
        and server not in trusted_servers
        and not is_read_only(view)
    )


def carried_review(
    view: ToolCallView, evaluation: Evaluation, carried: list[CarriedResult], trusted_servers: Collection[str]
) -> Evaluation:
    """An allow by a rule or policy becomes an ask when `escalates` says so; a hook's allow (a
    person's own script decided with the arguments in view), an ask and a deny stand."""
    if evaluation.verdict != "allow" or evaluation.source == "hook" or not escalates(carried, view, trusted_servers):
        return evaluation
    first = carried[0]
    reason = (
        f"{first.text}, in `{first.argument}`; {evaluation.reason} was not written with that in view: ask"
    )
    return Evaluation(verdict="ask", reason=reason, source=CARRIED_SOURCE)
