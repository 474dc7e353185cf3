"""Which of a workspace's protected files one tool call may write (for bootstrap_guard).

- A file tool's write, or any tool that may change something (not read-only), whose path-like
  argument resolves to one: relative, `./`, `..` and symlinks resolved both ways, as the rules'
  own path matching does (`path_candidates`). A protected name ending in `/` is a folder
  (`.overseer/skills/`): any path inside it counts, and the folder itself.
- A shell command, cut by the rules' own parser (`analyse_command`): a redirection to one; an
  argument naming one for any program that is not a known reader (or a folder holding one, for
  rm, mv, rsync, `find -delete`, `git checkout`...; for cp, ln and install only what they write);
  a glob or brace expansion that may yield one; an argument that is not a plain path (inline
  code, a script) mentioning one's name; and, when the targets are known only as the line runs
  (unparseable, `> "$F"`, `cd`, xargs, an interpreter, a here-document), the line mentioning one.
Reading stays free: the file server's readers, and `cat`, `grep`, `sed` without `-i`, ... The
memory server writes memory/MEMORY.md through its own tools, which take no path: never counted.

Limits: the shell check reads the command's text. A program that writes a file by itself (a
script named only by its own name, `git stash`, a branch switch) or a name assembled at run
time without being spelled out is not caught; only a sandbox around the process could.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

from backend.domain.tools import split_tool_name
from backend.rules.call_paths import (
    GLOB,
    PLAIN,
    REMOVERS,
    analysed,
    argument_values,
    brace_expansions,
    path_arguments,
    unwrapped,
)
from backend.rules.path_match import path_candidates
from backend.rules.policy_engine import ToolCallView, is_read_only
from backend.rules.grammar import SHELL_TOOL
from backend.rules.shell_match import CommandAnalysis
from backend.rules.shell_parse import Word
from backend.rules.shell_wrappers import SHELLS, program_name, strip_git_globals

_MEMORY_SERVER = "memory"  # writes memory/MEMORY.md through its own path: never asked about here
_REMOVING_TOOL = re.compile(r"delete|remove|move|rename|unlink|rmdir")
# Programs that only read the files they are given (their output goes through redirections);
# not `uniq IN OUT`, `tree -o OUT`, `sort -o OUT`, which write one.
_READERS = frozenset(
    """cat head tail less more grep egrep fgrep rg ag wc ls stat file diff cmp md5sum sha1sum
    sha256sum sha512sum b2sum cksum nl od hexdump strings echo printf realpath readlink basename
    dirname du true false test [ pwd which type column cut tr fold rev jq bat""".split()
)
# Readers whose script may write (`sed 'w f'`, awk's `print > "f"`): only their code is looked at.
_SCRIPTED_READERS = frozenset({"sed", "awk", "gawk", "mawk"})
_SED_IN_PLACE = re.compile(r"^(-[a-zA-Z]*i|--in-place)")
# Programs whose operands are read but for the destination (the last one, or `-t DIR`).
_COPIERS = frozenset({"cp", "install", "ln"})
_FIND_WRITES = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_GIT_READS = frozenset(
    """status log diff show add commit push fetch branch tag blame grep ls-files remote rev-parse
    describe shortlog""".split()
)
_INTERPRETERS = frozenset(
    {"python", "python3", "node", "deno", "bun", "perl", "ruby", "php", "lua", "Rscript", "xargs", *SHELLS}
)


def written_files(files: Sequence[str], view: ToolCallView) -> tuple[str, ...]:
    """Those of `files` the call may write, in the order given. A relative name is in the workspace;
    an absolute one (a file the prompt falls back to, in the data dir) is found by its path only;
    a name ending in `/` is a folder, written when anything inside it is."""
    if not files:
        return ()
    if view.name == SHELL_TOOL:
        command = view.arguments.get("command") if isinstance(view.arguments, dict) else None
        if not isinstance(command, str):
            return ()
        found = _Finder(files, view.workspace)
        found.shell(analysed(command))
    else:
        values = [] if _reads_only(view) else path_arguments(view.arguments)
        if not values:
            return ()  # a read, or no path: nothing to resolve (the gate's common case stays cheap)
        found = _Finder(files, view.workspace)
        removing = _REMOVING_TOOL.search((split_tool_name(view.name) or ("", view.name))[1]) is not None
        for value in values:
            found.value(value, holders=removing)
    return tuple(name for name in files if name in found.hits)


def _reads_only(view: ToolCallView) -> bool:
    server = (split_tool_name(view.name) or ("", ""))[0]
    return server == _MEMORY_SERVER or is_read_only(view)


class _Finder:
    """Collects the protected files one call may write into `hits`."""

    def __init__(self, files: Sequence[str], workspace: Path) -> None:
        self.workspace = workspace
        self.hits: set[str] = set()
        root, real_root = os.path.normpath(workspace), os.path.realpath(workspace)
        self._targets = {name: _spellings(root, real_root, name.rstrip("/")) for name in files}
        self._folders = frozenset(name for name in files if name.endswith("/"))
        self._holder_sets: dict[str, set[str]] | None = None
        # A folder is mentioned by its own name (`skills` in `cd .overseer && echo x > skills/a`).
        self._mentions = {
            n: _mention_pattern(os.path.basename(n.rstrip("/"))) for n in files if not os.path.isabs(n)
        }

    @property
    def _holders(self) -> dict[str, set[str]]:
        """The folders holding each file, up to `/`; built only for a command that removes folders."""
        if self._holder_sets is None:
            targets = self._targets.items()
            self._holder_sets = {name: {p for t in spots for p in _parents(t)} for name, spots in targets}
        return self._holder_sets

    def value(self, value: str, *, holders: bool = False) -> None:
        """One path-like value: a protected file (or, with `holders`, a folder holding one)."""
        for expanded in brace_expansions(value):
            if PLAIN.match(expanded):
                candidates = path_candidates(expanded, self.workspace) or []
                for name in self._targets:
                    spots = self._targets[name] | (self._holders[name] if holders else set())
                    inside = name in self._folders and any(
                        _inside(candidate, folder) for candidate in candidates for folder in self._targets[name]
                    )
                    if inside or spots.intersection(candidates):
                        self.hits.add(name)
            elif GLOB.match(expanded):
                patterns = path_candidates(expanded, self.workspace) or []
                for name in self._targets:
                    spots = self._targets[name] | (self._holders[name] if holders else set())
                    inside = name in self._folders and any(
                        _may_match_inside(pattern, folder) for pattern in patterns for folder in self._targets[name]
                    )
                    if inside or any(fnmatchcase(spot, pattern) for spot in spots for pattern in patterns):
                        self.hits.add(name)
            else:
                self.mentioned(expanded)

    def mentioned(self, text: str) -> None:
        """Text that is not a path (code, a script, a whole command): a protected file's name in it counts."""
        self.hits.update(name for name, pattern in self._mentions.items() if pattern.search(text))

    def shell(self, analysis: CommandAnalysis) -> None:
        uncertain = analysis.unchecked is not None or analysis.changes_directory or "<<" in analysis.command
        for write in analysis.writes:
            if write.path is None or (analysis.changes_directory and not write.path.startswith("/")):
                uncertain = True  # known only when the command runs
                if write.path is None and GLOB.match(write.raw) and not analysis.changes_directory:
                    self.value(write.raw)  # bash expands a glob in a redirection that names one file
            else:
                self.value(write.path)
        for part in analysis.parts:
            words, through = unwrapped(part.words)
            if words and self._command(words):
                # What a writing program gets, or runs, may be known only when the line runs.
                uncertain = uncertain or "xargs" in through or any(w.dynamic or w.ambiguous for w in words)
                uncertain = uncertain or program_name(words[0].text) in _INTERPRETERS
        if uncertain:
            self.mentioned(analysis.command)

    def _command(self, words: list[Word]) -> bool:
        """Look at one simple command; False when it only reads (then nothing it names is written)."""
        texts = [w.text for w in words]
        program = program_name(texts[0])
        operands = [t for t in texts[1:] if t not in ("-", "--")]
        if program in _READERS or (program == "find" and not _find_writes(operands)):
            return False
        in_place = (program == "sed" and any(_SED_IN_PLACE.match(t) for t in operands)) or (
            program != "sed" and any("inplace" in t for t in operands)  # gawk -i inplace
        )
        if program in _SCRIPTED_READERS and not in_place:
            for text in operands:
                if not PLAIN.match(text):
                    self.mentioned(text)  # the script: `sed 'w AGENTS.md'`
            return False
        git = strip_git_globals(texts) or texts
        if program == "git" and len(git) > 1 and git[1] in _GIT_READS:
            # `git add AGENTS.md`, `git commit -m "..AGENTS.md.."` leave the files as they are.
            for text in git[2:]:
                if text.startswith("--output="):
                    self.value(text.partition("=")[2])
            return False
        if program in _COPIERS or program == "mv":
            self._copy(operands, moves=program == "mv")
            return True
        holders = program in REMOVERS or program == "find" or program == "git"
        for text in operands:
            for value in argument_values(text):
                self.value(value, holders=holders)
        return True

    def _copy(self, operands: list[str], *, moves: bool) -> None:
        """cp, ln, install, mv: what they write is the destination, or a file in it; mv also removes
        its sources (and a folder holding a protected file), the others only read them."""
        directory = _option_value(operands, "-t", "--target-directory")
        paths = [o for o in operands if not o.startswith("-") and o != directory]
        if directory is None:
            if len(paths) < 2:
                return
            directory, paths = paths[-1], paths[:-1]
            self.value(directory)
        for text in operands:
            if text.startswith("-") and not PLAIN.match(text):
                self.mentioned(text)
        for source in paths:
            if moves:
                self.value(source, holders=True)
            leaf = os.path.basename(source.rstrip("/")) if source.rstrip("/") else ""
            if leaf in ("", ".", ".."):
                self.value(directory, holders=True)  # `cp -r src/. .`: the folder's contents land here
            else:
                self.value(os.path.join(directory, leaf))


def _find_writes(operands: list[str]) -> bool:
    """Whether `find` deletes, writes a file, or runs a program that is not a reader on what it finds."""
    for i, text in enumerate(operands):
        if text in _FIND_WRITES:
            runs = operands[i + 1] if text.startswith(("-exec", "-ok")) and i + 1 < len(operands) else None
            if runs is None or program_name(runs) not in _READERS:
                return True
    return False


def _option_value(operands: list[str], short: str, long: str) -> str | None:
    for i, text in enumerate(operands):
        if text == short or text == long:
            return operands[i + 1] if i + 1 < len(operands) else None
        if text.startswith(long + "="):
            return text.partition("=")[2]
        if text.startswith(short) and len(text) > len(short) and not text.startswith("--"):
            return text[len(short) :]
    return None


def _spellings(root: str, real_root: str, name: str) -> set[str]:
    """`root/name` as written (normalised) and with symlinks resolved, the two readings path_candidates
    gives. The workspace is resolved once per call; inside it a symlink is looked for step by step
    (an lstat each), and only a name that has one is resolved whole."""
    written = os.path.normpath(os.path.join(root, name))
    if os.path.isabs(name):
        return {written, os.path.realpath(written)}
    current = real_root
    for part in name.split("/"):
        current = os.path.join(current, part)
        if os.path.islink(current):
            return {written, os.path.realpath(written)}
    return {written, current}


def _inside(path: str, folder: str) -> bool:
    """Whether `path` lies under `folder` (both normalised and absolute)."""
    return path.startswith(folder.rstrip("/") + "/")


def _may_match_inside(pattern: str, folder: str) -> bool:
    """Whether a shell glob may expand to something under `folder`: it has more parts than the
    folder, and each of the folder's parts matches the pattern's part in its place."""
    parts, folder_parts = pattern.split("/"), folder.rstrip("/").split("/")
    return len(parts) > len(folder_parts) and all(
        fnmatchcase(name, part) for name, part in zip(folder_parts, parts, strict=False)
    )


def _parents(path: str) -> Iterable[str]:
    """Every folder holding `path`, up to `/`: removing or replacing one removes the file too."""
    current = os.path.dirname(path)
    while True:
        yield current
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


@lru_cache(maxsize=64)
def _mention_pattern(basename: str) -> re.Pattern[str]:
    # A name on its own: not `XAGENTS.md`, not `AGENTS.md.bak`; a path ending in it counts.
    return re.compile(rf"(?<![\w.-]){re.escape(basename)}(?![\w-]|\.\w)")
