"""Cut a shell command line into simple commands and redirections with a real parser (bashlex)."""

from __future__ import annotations

import codecs
import contextlib
import re
import shlex
from dataclasses import dataclass
from typing import Any

import bashlex

# Redirections that open a file for writing. `>&word` writes only when `word` is not a number.
WRITE_OPERATORS = frozenset({">", ">>", ">|", "<>", "&>", "&>>", ">&"})
_HEREDOC_OPERATORS = frozenset({"<<", "<<-"})
_DYNAMIC_KINDS = frozenset({"parameter", "commandsubstitution", "processsubstitution"})
_STRUCTURE_KINDS = frozenset({"operator", "pipe", "reservedword", "tilde", "heredoc"})

# bashlex does not know the `time` keyword; as a plain word it means the same to us.
_TIME_KEYWORD = re.compile(r"(^|[;&|(\n{!`]|\$\(|\b(?:do|then|else|elif|if|while|until)\b)(\s*)time(?=\s|$)")
# The textual fallback cuts at every operator and at every opening of a nested command; braces
# stay in words (`{rm,v}` is brace expansion), a lone `{` or `}` is dropped as a keyword.
_FALLBACK_CUT = re.compile(r"\|\||&&|;;|\$\(|<\(|>\(|[;&|\n()`]")
_MAX_LIFT_DEPTH = 16
LIFTED = "$__"
"""What a lifted substitution leaves in its word: an expansion, known only when it runs."""
_QUOTED_DELIMITER = re.compile(r"(<<-?[ \t]*)(?:(['\"])(\w+)\2|\\(\w+))")
_PLAIN_DELIMITER = re.compile(r"<<-?[ \t]*(\w+)")
_ANSI_C_QUOTE = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)
_LEADING_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "do", "while", "until", "!", "done", "fi", "esac", "{", "}"}
)


@dataclass(frozen=True)
class Word:
    """One word of a command: as written, and as the shell reads it (quotes removed)."""

    raw: str
    text: str
    assignment: bool = False
    dynamic: bool = False
    """Holds an expansion (`$x`, `$(...)`, backticks), so its value is unknown before it runs."""
    parser_text: str | None = None
    """bashlex's own quote removal, when it disagrees with `text` (it mishandles `'a'"'"'b'`)."""

    @property
    def ambiguous(self) -> bool:
        """Whether the two quote removals disagree, so the word's value is not certain."""
        return self.parser_text is not None


@dataclass(frozen=True)
class SimpleCommand:
    """A program and its arguments, without redirections."""

    words: tuple[Word, ...]
    nested: bool = False
    """Inside a substitution, subshell, loop, condition or function body."""


@dataclass(frozen=True, kw_only=True)
class ShellSyntax:
    """What the parser found: every simple command at every depth, and every write."""

    commands: tuple[SimpleCommand, ...] = ()
    writes: tuple[Word, ...] = ()
    error: str | None = None


class _Unsupported(Exception):
    pass


def parse_shell(command: str) -> ShellSyntax:
    """Parse `command`; on failure `error` says why and nothing else is set."""
    if not command.strip():
        return ShellSyntax()
    try:
        source, trees, quoted = _parse(command)
        walker = _Walker(source, quoted)
        for tree in trees:
            walker.visit(tree, nested=False)
    except _Unsupported as exc:
        return ShellSyntax(error=str(exc))
    except Exception as exc:  # bashlex raises many types (ParsingError, NotImplementedError, ...)
        return ShellSyntax(error=f"{type(exc).__name__}: {exc}")
    return ShellSyntax(commands=tuple(walker.commands), writes=tuple(walker.writes))


def fallback_commands(command: str, *, depth: int = 0) -> tuple[SimpleCommand, ...]:
    """Best-effort commands of a line the parser refused, for deny/ask checks only.

    Cuts at every operator and nested-command opening, and reads each piece twice: split on
    whitespace as written, and split shell-style with quotes removed. The line is also read
    with each substitution lifted out (`"$(printf rm)" v` -> `"$__" v`, and `printf rm` on its
    own), so a command whose program comes from a substitution is still seen as unknown.
    """
    found: list[SimpleCommand] = []
    pieces = _FALLBACK_CUT.split(command)
    lifted, bodies = lift_substitutions(command)
    if bodies:
        pieces += _FALLBACK_CUT.split(lifted)
        if depth < _MAX_LIFT_DEPTH:
            for body in bodies:
                found += fallback_commands(body, depth=depth + 1)
    for piece in pieces:
        readings = [piece.split()]
        with contextlib.suppress(ValueError):  # unbalanced quotes: the whitespace reading stays
            readings.append(shlex.split(piece, posix=True))
        for tokens in readings:
            while tokens and tokens[0] in _LEADING_KEYWORDS:
                tokens = tokens[1:]
            if tokens:
                found.append(SimpleCommand(tuple(Word(t, t) for t in tokens), nested=True))
    return tuple(dict.fromkeys(found))


def lift_substitutions(text: str) -> tuple[str, list[str]]:
    """`echo "$(rm v)" x` -> (`echo "$__" x`, [`rm v`]): substitutions out, their bodies apart.

    Parentheses are counted, quotes are not: this serves a line the parser refused, where a
    rough reading that keeps `$__` in command position is what matters. An unclosed
    substitution runs to the end of the line.
    """
    out: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith(("$(", "<(", ">("), i):
            end = _closing_paren(text, i + 2)
            body = text[i + 2 : end]
            if text.startswith("$((", i) and body.endswith(")"):
                # Arithmetic, `$((1+2))`: it runs nothing itself, only the substitutions it holds.
                bodies += lift_substitutions(body[1:-1])[1]
            else:
                bodies.append(body)
            out.append(LIFTED)
            i = end + 1
        elif text[i] == "`" and (i == 0 or text[i - 1] != "\\"):
            end = text.find("`", i + 1)
            end = len(text) if end == -1 else end
            bodies.append(text[i + 1 : end])
            out.append(LIFTED)
            i = end + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out), bodies


def _closing_paren(text: str, start: int) -> int:
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def unquote(raw: str) -> str | None:
    """Quote removal for one word as bash does it, or None when the word does not read as one.

    Handles `'...'`, `"..."`, backslashes, `$'...'` (ANSI-C) and `$"..."`; expansions are
    left as written.
    """
    text = _ANSI_C_QUOTE.sub(lambda found: "'" + _ansi_c(found.group(1)).replace("'", "'\\''") + "'", raw)
    text = text.replace('$"', '"').replace("\\\n", "")
    try:
        tokens = shlex.split(text, posix=True)
    except ValueError:
        return None
    return tokens[0] if len(tokens) == 1 else None


def _ansi_c(body: str) -> str:
    body = re.sub(r"\\[eE]", r"\\x1b", body).replace("\\?", "?")
    try:
        return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


def _parse(command: str) -> tuple[str, list[Any], frozenset[str]]:
    """bashlex's parse, retried with the readings it lacks; returns the text it finally parsed."""
    attempts = [command]
    if "<<" in command and not command.endswith("\n"):
        attempts.append(command + "\n")  # a here-document needs its closing line ended
    quoted: frozenset[str] = frozenset()
    if "<<" in command:
        quoted = _quoted_delimiters(command)
        if quoted:
            attempts += [_QUOTED_DELIMITER.sub(r"\1\3\4", text) for text in list(attempts)]
    if "time" in command:
        attempts += [_TIME_KEYWORD.sub(r"\1\2\\time", text) for text in list(attempts)]
    error: Exception | None = None
    for text in attempts:
        try:
            return text, list(bashlex.parse(text)), quoted
        except Exception as exc:  # try the next reading, report the first failure
            error = error or exc
    assert error is not None
    raise error


def _quoted_delimiters(command: str) -> frozenset[str]:
    """Here-document delimiters written only quoted (`<<'EOF'`): their bodies are literal text.

    bashlex looks for the quoted spelling as the closing line, so such documents are shown to it
    unquoted; a name also used unquoted somewhere is left out, its bodies still get checked.
    """
    quoted = {found.group(3) or found.group(4) for found in _QUOTED_DELIMITER.finditer(command)}
    plain = {found.group(1) for found in _PLAIN_DELIMITER.finditer(command)}
    return frozenset(quoted - plain)


class _Walker:
    """Collects simple commands and writes from a bashlex tree; refuses what it cannot see into."""

    def __init__(self, source: str, quoted_delimiters: frozenset[str] = frozenset()) -> None:
        self.source = source
        self.quoted_delimiters = quoted_delimiters
        self.commands: list[SimpleCommand] = []
        self.writes: list[Word] = []

    def visit(self, node: Any, *, nested: bool) -> None:
        """Walk one node; `nested` says it sits inside another command's structure."""
        kind = node.kind
        if kind == "command":
            self._command(node, nested=nested)
        elif kind in ("list", "pipeline"):
            for part in node.parts:
                self.visit(part, nested=nested)
        elif kind == "compound":
            for part in node.list:
                self.visit(part, nested=True)
        elif kind in ("if", "for", "while", "until", "function"):
            for part in node.parts:
                self.visit(part, nested=True)
        elif kind in ("word", "assignment"):
            for part in getattr(node, "parts", []):
                self.visit(part, nested=True)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.visit(node.command, nested=True)
        elif kind == "parameter":
            if any(mark in node.value for mark in ("$(", "`", "<(", ">(")):
                raise _Unsupported("command substitution inside a parameter expansion")
        elif kind == "redirect":
            self._redirect(node)
        elif kind not in _STRUCTURE_KINDS:
            raise _Unsupported(f"unsupported shell syntax: {kind}")
        if kind != "command":
            for redirect in getattr(node, "redirects", []) or []:
                self._redirect(redirect)

    def _command(self, node: Any, *, nested: bool) -> None:
        words: list[Word] = []
        inner: list[Any] = []
        for part in node.parts:
            if part.kind in ("word", "assignment"):
                words.append(self._word(part))
                inner.append(part)
            elif part.kind == "redirect":
                self._redirect(part)
            else:
                inner.append(part)
        if words:
            self.commands.append(SimpleCommand(tuple(words), nested=nested))
        for part in inner:
            self.visit(part, nested=True)

    def _word(self, node: Any) -> Word:
        start, end = node.pos
        raw = self.source[start:end]
        dynamic = any(part.kind in _DYNAMIC_KINDS for part in getattr(node, "parts", []))
        text = unquote(raw)
        if text is None or text == node.word:
            return Word(raw, node.word, node.kind == "assignment", dynamic)
        return Word(raw, text, node.kind == "assignment", dynamic, parser_text=node.word)

    def _redirect(self, node: Any) -> None:
        operator, target = node.type, node.output
        if operator in _HEREDOC_OPERATORS:
            self._heredoc(node)
            return
        if not isinstance(target, (int, str)):
            self.visit(target, nested=True)
        writes = operator in WRITE_OPERATORS or (">" in operator and operator not in WRITE_OPERATORS)
        if not writes:
            return
        if operator == ">&" and (isinstance(target, int) or target == "-"):
            return  # N>&M duplicates a descriptor, >&- closes one: nothing is opened
        word = Word(str(target), str(target)) if isinstance(target, (int, str)) else self._word(target)
        if word.text != "/dev/null":
            self.writes.append(word)

    def _heredoc(self, node: Any) -> None:
        start, end = node.output.pos
        delimiter = self.source[start:end]
        body = getattr(getattr(node, "heredoc", None), "value", "") or ""
        quoted = any(mark in delimiter for mark in ("'", '"', "\\")) or delimiter in self.quoted_delimiters
        if not quoted and ("$(" in body or "`" in body):
            # An unquoted here-document runs its substitutions; bashlex does not parse them.
            raise _Unsupported("command substitution inside a here-document")
