"""The shell tool server: run a bash command in the workspace."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from mcp_servers._shared.workspace import workspace_root
from mcp_servers.shell.guard import check_command
from mcp_servers.shell.runner import CommandOutcome, run_command
from mcp_servers.shell.sandbox import command_sandbox, hints

MAX_TIMEOUT_SECONDS = 3_600.0

RUNS_COMMANDS = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=True
)

INSTRUCTIONS = (
    "Runs bash commands with the workspace as the working directory. Output is stdout and "
    "stderr merged; only its last 200 KB are returned."
)


def create_server(root: Path, *, trust_meta: bool, environ: Mapping[str, str] | None = None) -> MCPServer:
    """Build the shell server for the workspace `root`.

    With `trust_meta` (the host launched us) a call's `_meta["overseer/workspace"]`
    replaces `root` for that call, and `_meta["overseer/sandbox"]` is the sandbox the command
    runs in (sandbox.py); without one the call is refused. Standalone, commands run as the
    client's approvals allow, unconfined: only the working directory is set. Commands get
    `environ` (default: this process's environment) without the managed flag.
    """
    server = MCPServer("shell", instructions=INSTRUCTIONS)

    @server.tool(name="exec", title="Run a command", annotations=RUNS_COMMANDS)
    async def exec_command(
        command: str,
        ctx: Context,
        timeout: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_SECONDS, description="seconds")] = 60,
        outside_sandbox: Annotated[
            bool,
            Field(
                description="Run this one command outside the sandbox, with the user's full access. "
                "Always asks a person. Only when the sandbox blocks something the task truly needs."
            ),
        ] = False,
    ) -> CallToolResult:
        """Run `bash -c command` in the workspace and return its output and exit code.

        A non-zero exit code is an error result. On timeout the command and every
        process it started are killed and the output so far is returned.
        """
        # `outside_sandbox` is for the host: it asks a person, and sends no sandbox if they allow.
        if not command.strip():
            raise ToolError("command is empty")
        refusal = check_command(command)
        if refusal is not None:
            raise ToolError(
                f"refused: {refusal.reason} (rule {refusal.rule}). Ask the user to run it themselves."
            )
        meta = ctx.request_context.meta
        cwd = workspace_root(root, meta, trust_meta=trust_meta)
        sandbox = command_sandbox(meta, trust_meta=trust_meta)
        outcome = await run_command(command, cwd, timeout, wrap=sandbox.wrap, environ=environ)
        text = render(outcome, timeout)
        if outcome.exit_code != 0:
            text = "\n".join([text, *hints(sandbox, outcome.output)])
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            is_error=outcome.timed_out or outcome.exit_code != 0,
        )

    return server


def render(outcome: CommandOutcome, timeout: float) -> str:
    """The text the model reads: a note on dropped output, the output tail, then the status."""
    parts: list[str] = []
    if outcome.dropped:
        parts.append(
            f"[{outcome.dropped} bytes of earlier output dropped; showing the last {len(outcome.output)}]\n"
        )
    text = outcome.output.decode("utf-8", errors="replace")
    parts.append(text)
    if text and not text.endswith("\n"):
        parts.append("\n")
    if outcome.output_left_open:
        parts.append("[background processes still hold the output open; their later output is not shown]\n")
    if outcome.timed_out:
        parts.append(f"[timed out after {timeout:g} s; the command and its process group were killed]")
    elif outcome.exit_code is not None and outcome.exit_code < 0:
        parts.append(f"[killed by signal {-outcome.exit_code}]")
    else:
        parts.append(f"[exit code {outcome.exit_code}]")
    return "".join(parts)
