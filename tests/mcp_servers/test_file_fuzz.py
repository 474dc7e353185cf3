"""Generated paths against the deny rules and the file server together: no escape.

Hypothesis builds paths from the pieces attacks are made of (`..`, `~`, `~root`, absolute
prefixes, doubled slashes, symlinks to a denied folder and to outside, a hard link, globs, line
breaks) and sends each file tool at them, as the host would: the policy first (deny rules on
`./secrets/**`), then the file server, then the search filter. Whatever the model is allowed to
run, no secret's text or name reaches it and nothing outside the workspace or in the denied
folder changes (issue 13, "a fuzz test generates paths ... against the deny rules and the
workspace guard and finds no escape").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from backend.domain.tools import full_tool_name
from backend.mcp.results import to_tool_result
from backend.rules.policy_engine import PolicyEngine, ToolCallView
from backend.rules.grammar import RuleSet
from backend.rules.search_results import search_redactor
from mcp_servers.file.server import create_server

KEY = "KEY-IN-THE-DENIED-FOLDER"
OUTSIDE = "TEXT-OUTSIDE-THE-WORKSPACE"
RULES = RuleSet.from_config({"deny": ["Read(./secrets/**)"]}, source="user")


class ToolCaller:
    """One in-process client to a file server, on a loop of its own, callable from sync code."""

    def __init__(self, workspace: Path) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._requests: asyncio.Queue[tuple[str, dict[str, Any], concurrent.futures.Future[Any]] | None]
        self._requests = asyncio.Queue()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._serving = asyncio.run_coroutine_threadsafe(self._serve(workspace, ready), self._loop)
        ready.result(timeout=30)

    async def _serve(self, workspace: Path, ready: concurrent.futures.Future[None]) -> None:
        # The client's task group must be entered and left in one task: this one.
        async with Client(create_server(workspace, trust_meta=False)) as client:
            ready.set_result(None)
            while (request := await self._requests.get()) is not None:
                name, arguments, answer = request
                try:
                    answer.set_result(await client.call_tool(name, arguments))
                except Exception as exc:
                    answer.set_exception(exc)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._requests.put_nowait, (name, arguments, answer))
        return answer.result(timeout=30)

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._requests.put_nowait, None)
        self._serving.result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, ToolCaller]]:
    base = tmp_path_factory.mktemp("fuzz").resolve()
    workspace, outside = base / "ws", base / "outside"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "secrets").mkdir()
    outside.mkdir()
    (workspace / "a.txt").write_text("hello\n")
    (workspace / "sub" / "b.txt").write_text("bee\n")
    (workspace / "secrets" / "key.txt").write_text(KEY + "\n")
    (outside / "secret.txt").write_text(OUTSIDE + "\n")
    (workspace / "link_out").symlink_to(outside, target_is_directory=True)
    (workspace / "link_secrets").symlink_to(workspace / "secrets", target_is_directory=True)
    (workspace / "link_key").symlink_to(workspace / "secrets" / "key.txt")
    (workspace / "sub" / "up").symlink_to("../..", target_is_directory=True)
    os.link(outside / "secret.txt", workspace / "hard_out")
    caller = ToolCaller(workspace)
    yield workspace, outside, caller
    caller.close()


# Names that exist (most paths should reach something), then the odd ones attacks use.
REAL_PIECES = st.sampled_from(
    ["..", ".", "secrets", "sub", "up", "a.txt", "key.txt", "link_out", "link_secrets", "link_key", "hard_out",
     "secret.txt", "outside", "ws"]
)
ODD_PIECES = st.sampled_from(
    [
        "", "SECRETS", "secrets.", "~", "~root", "~nobody", "*", "**", "sec*", "s?crets", "[s]ecrets",
        "key.txt\n", "secrets\nsub", " secrets", "%2e%2e", "secrets/", "./secrets", "…",
    ]
)
PIECES = st.one_of(REAL_PIECES, REAL_PIECES, REAL_PIECES, ODD_PIECES)


@st.composite
def paths(draw: st.DrawFn, workspace: str, outside: str) -> str:
    prefix = draw(st.sampled_from(["", "/", "//", "./", "~/", workspace + "/", outside + "/", workspace + "//"]))
    pieces = draw(st.lists(PIECES, min_size=1, max_size=4))
    joiner = draw(st.sampled_from(["/", "//", "/./"]))
    return prefix + joiner.join(pieces)


GLOBS = st.sampled_from(["*", "**", "**/*", "*/*", "secrets/*", "*/key*", "link_*/*", "**/key.txt", "sub/up/*"])


def calls(workspace: str, outside: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    path = paths(workspace, outside)
    return st.one_of(
        st.builds(lambda p: ("read_file", {"path": p}), path),
        st.builds(lambda p: ("list_dir", {"path": p}), path),
        st.builds(lambda p, g: ("glob", {"path": p, "pattern": g}), path, GLOBS),
        st.builds(lambda p: ("grep", {"path": p, "pattern": "KEY|TEXT"}), path),
        st.builds(lambda p, g: ("grep", {"path": p, "pattern": ".", "glob": g}), path, GLOBS),
        st.builds(lambda g: ("grep", {"pattern": "KEY|TEXT", "glob": g}), GLOBS),
        st.builds(lambda p: ("write_file", {"path": p, "content": "PWNED"}), path),
        st.builds(lambda p: ("edit_file", {"path": p, "old_text": "KEY", "new_text": "PWNED"}), path),
    )


def named_paths(tool: str, arguments: dict[str, Any], seen: str, workspace: Path) -> list[Path]:
    """Where each line of a listing or search result points, symlinks resolved."""
    lines = [line for line in seen.split("\n") if line and not line.startswith("[")]
    if tool == "grep":
        lines = [re.split(r":\d+:", line, maxsplit=1)[0] for line in lines]
    if tool == "list_dir":
        folder = Path(os.path.realpath(workspace / os.path.expanduser(arguments["path"])))
        return [Path(os.path.realpath(folder / line.rstrip("/"))) for line in lines]
    return [Path(os.path.realpath(workspace / line.rstrip("/"))) for line in lines]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_no_generated_path_reads_a_denied_file_or_reaches_outside(world: tuple[Path, Path, ToolCaller]) -> None:
    workspace, outside, caller = world
    engine = PolicyEngine(RULES, {"mcp__file__*": "always_allow"})
    hidden = partial(engine.hides, workspace=workspace)
    before_outside, before_secrets = snapshot(outside), snapshot(workspace / "secrets")

    @settings(max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(calls(str(workspace), str(outside)))
    def attempt(call: tuple[str, dict[str, Any]]) -> None:
        tool, arguments = call
        name = full_tool_name("file", tool)
        verdict = engine.evaluate(ToolCallView(name=name, arguments=arguments, workspace=workspace)).verdict
        if verdict == "deny":
            return
        result = to_tool_result(caller.call(tool, arguments))
        redact = search_redactor(name, arguments, hidden)
        seen = (redact(result) if redact else result).text
        assert KEY not in seen and OUTSIDE not in seen, f"{tool} {arguments!r} showed:\n{seen}"
        if tool in ("list_dir", "glob", "grep") and not result.is_error:
            named = named_paths(tool, arguments, seen, workspace)
            assert not [p for p in named if p.is_relative_to(workspace / "secrets")], f"{tool} {arguments!r}:\n{seen}"
        assert snapshot(outside) == before_outside, f"{tool} {arguments!r} changed a file outside"
        assert snapshot(workspace / "secrets") == before_secrets, f"{tool} {arguments!r} changed a denied file"

    attempt()
