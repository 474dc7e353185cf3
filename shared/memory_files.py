"""The memory files of a workspace: `memory/MEMORY.md` (curated facts) and `memory/HISTORY.md` (a log).

MEMORY.md is Markdown a person can read and edit by hand::

    # Memory

    ## General

    - The person prefers tabs over spaces. <!-- id:m3f2a1 -->

One fact per bullet, under `## <section>` headings. A saved fact carries its id in a trailing
HTML comment (invisible when rendered); a fact a person wrote without one gets an id derived from
its text, so it can still be found and forgotten. Edits keep every other line as the person wrote it.

HISTORY.md is append-only: one `## <timestamp>` heading per entry, then its text.

This module imports nothing of `backend` or `mcp`: the tool server and the engine both use it.
Every write is atomic (temp file + `os.replace`) and held under an advisory lock across
processes, because the engine and the memory server may write the same workspace at once.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; writes stay atomic, only serialisation is lost
    fcntl = None  # type: ignore[assignment]

MEMORY_DIR = "memory"
MEMORY_FILE = "MEMORY.md"
HISTORY_FILE = "HISTORY.md"
DEFAULT_SECTION = "General"
LOCK_FILE = ".overseer/memory.lock"

_HEADING = re.compile(r"^##\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_ID_COMMENT = re.compile(r"\s*<!--\s*id:\s*([A-Za-z0-9_-]+)\s*-->\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(kw_only=True, frozen=True)
class Entry:
    """One searchable unit: a MEMORY.md fact or a HISTORY.md entry."""

    id: str
    file: str
    """`MEMORY.md` or `HISTORY.md`."""
    section: str
    text: str


@dataclass(kw_only=True, frozen=True)
class Fact:
    """A fact found in MEMORY.md, with the lines it spans (`end` exclusive)."""

    id: str
    section: str
    text: str
    start: int
    end: int


@dataclass(kw_only=True, frozen=True)
class SavedFact:
    """What saving one fact did: `added` is False when an equal fact was already there."""

    id: str
    section: str
    added: bool


def memory_path(workspace: Path) -> Path:
    """`<workspace>/memory/MEMORY.md`."""
    return workspace / MEMORY_DIR / MEMORY_FILE


def history_path(workspace: Path) -> Path:
    """`<workspace>/memory/HISTORY.md`."""
    return workspace / MEMORY_DIR / HISTORY_FILE


def short_id(prefix: str, text: str, length: int = 6) -> str:
    """A short id derived from `text`: the same text always gets the same id."""
    return prefix + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:length]


def normalise(text: str) -> str:
    """The form two facts are compared in: whitespace collapsed, case folded, no final period."""
    return " ".join(text.split()).casefold().rstrip(".")


def clean_fact(text: str) -> str:
    """A fact as one bullet line; ValueError when it is empty or would break the file's format."""
    cleaned = " ".join(text.split())
    cleaned = re.sub(r"^[-*+](\s+|$)", "", cleaned)
    if not cleaned:
        raise ValueError("the fact is empty; give one short sentence to remember")
    if "<!--" in cleaned or "-->" in cleaned:
        raise ValueError("the fact contains an HTML comment marker ('<!--' or '-->'); rephrase it without")
    return cleaned


def clean_section(section: str | None) -> str:
    """A section name as one heading line; empty means the default section."""
    cleaned = " ".join((section or "").split()).strip("#").strip()
    return cleaned or DEFAULT_SECTION


def parse_memory(text: str) -> list[Fact]:
    """Every bullet of MEMORY.md as a Fact, ids explicit or derived, in file order.

    Bullets before any `##` heading belong to the default section; indented lines under a
    bullet continue it; fenced code blocks are skipped. A derived id that collides with an
    earlier one is lengthened, so two different facts never share an id.
    """
    lines = text.splitlines()
    found: list[tuple[str | None, str, str, int, int]] = []
    section = DEFAULT_SECTION
    in_fence = False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _HEADING.match(line)
        if heading:
            section = clean_section(heading.group(1))
            continue
        bullet = _BULLET.match(line)
        if bullet:
            found.append((*_split_id(bullet.group(2)), section, number, number + 1))
        elif found and found[-1][4] == number and line[:1] in (" ", "\t") and line.strip():
            explicit, body, sec, start, _ = found[-1]
            more_id, more = _split_id(line.strip())
            found[-1] = (explicit or more_id, f"{body} {more}".strip(), sec, start, number + 1)
    taken = {explicit for explicit, *_ in found if explicit}
    facts: list[Fact] = []
    for explicit, body, sec, start, end in found:
        fact_id = explicit or _unique_id("m", body, taken)
        taken.add(fact_id)
        facts.append(Fact(id=fact_id, section=sec, text=body, start=start, end=end))
    return facts


def parse_history(text: str) -> list[Entry]:
    """HISTORY.md's entries: the text under each `##` heading, the heading as its section."""
    entries: list[Entry] = []
    taken: set[str] = set()
    section, body = "", []

    def flush() -> None:
        joined = "\n".join(body).strip()
        if joined:
            entry_id = _unique_id("h", f"{section}\n{joined}", taken)
            taken.add(entry_id)
            entries.append(Entry(id=entry_id, file=HISTORY_FILE, section=section, text=joined))

    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            flush()
            section, body = heading.group(1), []
        elif not line.startswith("# "):
            body.append(line)
    flush()
    return entries


def memory_entries(text: str) -> list[Entry]:
    """MEMORY.md's facts as search entries."""
    return [Entry(id=f.id, file=MEMORY_FILE, section=f.section, text=f.text) for f in parse_memory(text)]


def with_fact(text: str, fact: str, section: str) -> tuple[str, SavedFact]:
    """MEMORY.md's text with `fact` added at the end of `section` (created when missing).

    A fact equal to one already present (see `normalise`), in any section, is not added again.
    """
    facts = parse_memory(text)
    wanted = normalise(fact)
    for existing in facts:
        if normalise(existing.text) == wanted:
            return text, SavedFact(id=existing.id, section=existing.section, added=False)
    fact_id = _unique_id("m", fact, {f.id for f in facts})
    bullet = f"- {fact} <!-- id:{fact_id} -->"
    lines = text.splitlines() or ["# Memory"]
    # Sections match case-insensitively, so "preferences" joins an existing "## Preferences".
    in_section = [f for f in facts if f.section.casefold() == section.casefold()]
    heading_at = _heading_index(lines, section)
    if in_section:
        lines.insert(in_section[-1].end, bullet)
        section = in_section[-1].section
    elif heading_at is not None:
        section = clean_section(lines[heading_at][2:])
        after = heading_at + 1
        while after < len(lines) and not lines[after].strip():
            after += 1
        lines[heading_at + 1 : after] = ["", bullet] + ([""] if after < len(lines) else [])
    else:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["", f"## {section}", "", bullet]
    return "\n".join(lines) + "\n", SavedFact(id=fact_id, section=section, added=True)


def without_fact(text: str, fact_id: str) -> tuple[str, list[Fact]]:
    """MEMORY.md's text with every line of the fact `fact_id` removed, and what was removed."""
    gone = [f for f in parse_memory(text) if f.id == fact_id]
    if not gone:
        return text, []
    drop = {n for f in gone for n in range(f.start, f.end)}
    lines = [line for n, line in enumerate(text.splitlines()) if n not in drop]
    return "\n".join(lines) + "\n", gone


def history_block(text: str, when: datetime) -> str:
    """One HISTORY.md entry: a timestamp heading and the text."""
    return f"## {when.strftime('%Y-%m-%d %H:%M %Z').strip()}\n\n{text.strip()}\n"


# reading and writing, atomically and under the lock


def read_text(path: Path) -> str:
    """A memory file's text; empty when it does not exist yet."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def save_facts(workspace: Path, facts: list[tuple[str, str | None]]) -> list[SavedFact]:
    """Add `(fact, section)` pairs to MEMORY.md in one write; duplicates are reported, not added.

    ValueError (before anything is written) when a fact is empty or malformed.
    """
    cleaned = [(clean_fact(fact), clean_section(section)) for fact, section in facts]
    path = memory_path(workspace)
    with locked(workspace):
        text = read_text(path)
        outcomes = []
        for fact, section in cleaned:
            text, outcome = with_fact(text, fact, section)
            outcomes.append(outcome)
        if any(o.added for o in outcomes):
            write_atomic(path, text)
    return outcomes


def forget_fact(workspace: Path, fact_id: str) -> list[Fact]:
    """Remove the fact `fact_id` from MEMORY.md; returns what was removed (empty: no such fact)."""
    path = memory_path(workspace)
    with locked(workspace):
        text, gone = without_fact(read_text(path), fact_id)
        if gone:
            write_atomic(path, text)
    return gone


def append_history(workspace: Path, text: str, *, when: datetime) -> None:
    """Append one timestamped entry to HISTORY.md (created with a title when missing)."""
    if not text.strip():
        raise ValueError("the history entry is empty")
    path = history_path(workspace)
    with locked(workspace):
        current = read_text(path).rstrip("\n")
        head = f"{current}\n\n" if current else "# History\n\n"
        write_atomic(path, head + history_block(text, when))


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step: a reader sees the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def locked(workspace: Path) -> Iterator[None]:
    """Hold the workspace's memory lock (an advisory lock on `.overseer/memory.lock`)."""
    lock_path = workspace / LOCK_FILE
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _split_id(body: str) -> tuple[str | None, str]:
    match = _ID_COMMENT.search(body)
    if match is None:
        return None, body.strip()
    return match.group(1), body[: match.start()].strip()


def _unique_id(prefix: str, text: str, taken: set[str]) -> str:
    length = 6
    while (candidate := short_id(prefix, text, length)) in taken and length < 64:
        length += 1
    return candidate


def _heading_index(lines: list[str], section: str) -> int | None:
    wanted = section.casefold()
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        if match and clean_section(match.group(1)).casefold() == wanted:
            return index
    return None
