"""The configured hooks (Claude Code's `hooks` block) at each point they run.

The gate calls `pre_tool_use`, `permission_request`, `post_tool_use` and `notification`; the
session runner calls `session_start`, `user_prompt_submit` and `stop`. Each finds the groups
whose matcher selects the tool (or source, or notification type), runs their handlers side by
side with the event's JSON (backend/approvals/hook_runner.py) and reads the answers as Claude
Code does (backend/approvals/hook_answers.py). A handler that fails is reported in the session's
events; for PreToolUse it denies the call.

What a tool hook's verdict may change is `review`'s business: a deny or an `ask` always counts, an
allow answers only the default question, never a deny, an ask rule, the sandbox, an instruction
file or another agent's folder.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.approvals.hook_answers import HookAnswer, Verdict, read_answer
from backend.approvals.hook_runner import close_clients, run_handler
from backend.approvals.hook_tools import hook_names, hook_tool_input, hook_tool_name
from backend.domain.hook_config import CommandHook, HookEvent, HooksConfig
from backend.domain.tools import ToolResult
from backend.rules.policy_engine import Evaluation

log = logging.getLogger(__name__)

STOP_CONTINUES = 3
"""How many times in a row Stop hooks may send the model back to work before the run ends anyway."""

SandboxPrefix = Callable[[Path, Any], Sequence[str]]
"""(workspace, agent fence) -> the command prefix that confines a hook command; raises when no
sandbox can be made (the hook then fails, and a PreToolUse call is denied)."""
Report = Callable[[str, str], Awaitable[None]]
"""(session id, text): tell the session's watchers about a hook that failed or blocked."""


@dataclass(kw_only=True)
class HookPlace:
    """Where a hook runs: its session, workspace, mode and agent fence."""

    session_id: str
    workspace: Path
    mode: str = "agent"
    fence: Any = None


class ConfiguredHooks:
    """Runs the configured hooks; with an empty configuration every method is a no-op."""

    def __init__(self, config: HooksConfig | None = None, *, sandbox: SandboxPrefix | None = None,
                 report: Report | None = None) -> None:
        """`sandbox`: confines command handlers (None: they run unconfined, as a host without a
        sandbox runs no shell commands at all; the host always gives one)."""
        self.config = config or HooksConfig({})
        self.sandbox = sandbox
        self.report = report
        self._background: set[asyncio.Task[None]] = set()

    def use(self, config: HooksConfig) -> None:
        """Replace the hooks in force (a merged list: backend.domain.hook_config.merge_hooks)."""
        self.config = config

    def configured(self, event: HookEvent) -> bool:
        return bool(self.config.groups(event))

    # tool events (the gate)

    async def pre_tool_use(self, place: HookPlace, *, call_id: str, name: str, arguments: dict[str, Any]) -> Verdict:
        """PreToolUse: may deny (exit 2, `deny`, or failing), ask, allow, rewrite (`updatedInput`)."""
        payload = self._tool_payload("PreToolUse", place, name, arguments, call_id=call_id)
        return await self._fire("PreToolUse", place, payload, hook_names(name), fail_closed=True)

    async def permission_request(
        self, place: HookPlace, *, call_id: str, name: str, arguments: dict[str, Any], reason: str
    ) -> Verdict:
        """PermissionRequest: the call is about to ask a person; a hook may answer in their place.
        A failing hook answers nothing: the person is asked."""
        payload = self._tool_payload("PermissionRequest", place, name, arguments, call_id=call_id)
        payload["permission_suggestions"] = []
        payload["reason"] = reason
        return await self._fire("PermissionRequest", place, payload, hook_names(name))

    async def post_tool_use(
        self, place: HookPlace, *, call_id: str, name: str, arguments: dict[str, Any], result: ToolResult
    ) -> ToolResult:
        """PostToolUse: the result the model sees, with each hook's feedback (`decision: block`'s
        reason, exit 2's stderr) and `additionalContext` appended."""
        if not self.configured("PostToolUse"):
            return result
        payload = self._tool_payload("PostToolUse", place, name, arguments, call_id=call_id)
        payload["tool_response"] = _tool_response(name, result)
        verdict = await self._fire("PostToolUse", place, payload, hook_names(name))
        notes = [f"[PostToolUse hook {a.principal}: {a.reason}]" for a in verdict.answers if a.blocked]
        notes += [f"[PostToolUse hook context: {a.context}]" for a in verdict.answers if a.context]
        if not notes:
            return result
        return result.model_copy(update={"text": result.text + "\n\n" + "\n".join(notes)})

    def notification(self, place: HookPlace, *, message: str, kind: str = "permission_prompt") -> None:
        """Notification, in the background: nothing waits for it and it decides nothing."""
        if not self.configured("Notification"):
            return
        payload = {**self._common(place, "Notification"), "message": message, "notification_type": kind}
        task = asyncio.create_task(self._notify(place, payload, kind))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _notify(self, place: HookPlace, payload: dict[str, Any], kind: str) -> None:
        await self._fire("Notification", place, payload, (kind,))

    # session events (the runner)

    async def session_start(self, place: HookPlace, *, source: str = "startup") -> str:
        """SessionStart: context for the session's first prompt (plain stdout or `additionalContext`)."""
        if not self.configured("SessionStart"):
            return ""
        payload = {**self._common(place, "SessionStart"), "source": source}
        return (await self._fire("SessionStart", place, payload, (source,))).context

    async def user_prompt_submit(self, place: HookPlace, *, prompt: str) -> Verdict:
        """UserPromptSubmit: may block the prompt (exit 2, `decision: block`) or add context."""
        payload = {**self._common(place, "UserPromptSubmit"), "prompt": prompt}
        return await self._fire("UserPromptSubmit", place, payload, ())

    async def stop(self, place: HookPlace, *, active: bool, last_message: str) -> str | None:
        """Stop: the reason to keep working, when a hook blocks the stop; else None.

        `active`: Stop hooks sent the model back already in this run (`stop_hook_active`)."""
        if not self.configured("Stop"):
            return None
        payload = {**self._common(place, "Stop"), "stop_hook_active": active, "last_assistant_message": last_message}
        verdict = await self._fire("Stop", place, payload, ())
        if not verdict.blocked or any(a.halted for a in verdict.answers):
            return None  # `continue: false` ends the run, whatever else was said
        return verdict.reason or "A Stop hook asks you to go on."

    async def settled(self) -> None:
        """Wait for the background notifications under way (each bounded by its hook's timeout)."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    async def aclose(self) -> None:
        """Wait (bounded by each hook's timeout) for background notifications to finish; close
        the URL hooks' client."""
        await self.settled()
        await close_clients()

    # running

    def _common(self, place: HookPlace, event: HookEvent) -> dict[str, Any]:
        return {
            "session_id": place.session_id,
            "transcript_path": "",
            "cwd": str(place.workspace),
            "permission_mode": "plan" if place.mode == "plan" else "default",
            "hook_event_name": event,
        }

    def _tool_payload(
        self, event: HookEvent, place: HookPlace, name: str, arguments: dict[str, Any], *, call_id: str
    ) -> dict[str, Any]:
        return {
            **self._common(place, event),
            "tool_name": hook_tool_name(name),
            "tool_input": hook_tool_input(name, arguments, place.workspace),
            "tool_use_id": call_id,
        }

    async def _fire(
        self,
        event: HookEvent,
        place: HookPlace,
        payload: dict[str, Any],
        names: Sequence[str],
        *,
        fail_closed: bool = False,
    ) -> Verdict:
        handlers = self.config.handlers(event, *names)
        if not handlers:
            return Verdict(fail_closed=fail_closed)
        prefix: Sequence[str] = ()
        sandbox_error: str | None = None
        if self.sandbox is not None and any(isinstance(h, CommandHook) for h in handlers):
            try:
                prefix = self.sandbox(place.workspace, place.fence)
            except Exception as exc:  # no sandbox, no command: it fails (closed for PreToolUse)
                sandbox_error = f"its sandbox could not be made: {exc}"
        env = {"CLAUDE_PROJECT_DIR": str(place.workspace), "OVERSEER_SESSION_ID": place.session_id}

        async def one(handler: Any) -> HookAnswer:
            if sandbox_error is not None and isinstance(handler, CommandHook):
                return HookAnswer(principal=handler.principal, failure=sandbox_error)
            run = await run_handler(handler, payload, cwd=place.workspace, sandbox=prefix, env=env)
            return read_answer(run)

        answers = await asyncio.gather(*(one(h) for h in handlers))
        verdict = Verdict(answers=answers, fail_closed=fail_closed)
        for failed in verdict.failures:
            consequence = "the call is denied" if fail_closed else "ignored"
            text = f"{event} hook {failed.principal} failed: {failed.failure} ({consequence})"
            log.warning("session %s: %s", place.session_id, text)
            if self.report is not None:
                await self.report(place.session_id, text)
        return verdict


def review(evaluation: Evaluation, verdict: Verdict) -> Evaluation:
    """The rules' evaluation of a call, after its PreToolUse (or PermissionRequest) verdict.

    A hook's deny denies and its `ask` makes an allowed call ask; its allow answers only the
    default question (no rule, no ask policy of the admin's). A deny, an ask rule, the sandbox's,
    an instruction file's or the agent fence's question stay what they are.
    """
    said = verdict.permission
    if said is None or evaluation.verdict == "deny":
        return evaluation
    who = ", ".join(verdict.deciders) or "a hook"
    if said == "deny":
        return Evaluation(verdict="deny", reason=f"blocked by {who}: {verdict.reason}", source="hook")
    if said == "ask":
        if evaluation.verdict == "ask":
            return evaluation
        return Evaluation(verdict="ask", reason=f"{who} asks: {verdict.reason or 'confirm this call'}", source="hook")
    if answerable(evaluation):
        return HookAllow(verdict="allow", reason=f"allowed by {who}", source="hook", principal=verdict.deciders[0])
    return evaluation


def answerable(evaluation: Evaluation) -> bool:
    """Whether a hook's allow may answer this ask: the default question, nothing stronger."""
    return (
        evaluation.verdict == "ask"
        and type(evaluation) is Evaluation
        and evaluation.rule is None
        and evaluation.source in (None, "default")
    )


@dataclass(kw_only=True)
class HookAllow(Evaluation):
    """An ask a hook answered: the hook is the decision's principal."""

    principal: str


def _tool_response(name: str, result: ToolResult) -> dict[str, Any]:
    response: dict[str, Any] = {"output": result.text, "is_error": result.is_error}
    if hook_tool_name(name) == "Bash":
        response.update(stdout=result.text, stderr="", interrupted=False, isImage=False)
    return response
