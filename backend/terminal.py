"""`overseer run` in a terminal: stream a session's events and answer its approvals."""

from __future__ import annotations

import asyncio
import difflib
import json
import sys
from typing import Any, Literal, TextIO

from backend.auth import local_principal
from backend.domain.errors import ApprovalError, DomainError
from backend.domain.models import Approval, Decision, Event
from backend.domain.session_options import SessionOptions
from backend.app.chat import ChatInput
from backend.app.host import Host
from backend.rules.bootstrap_guard import is_instruction_change
from backend.rules.managed import MANAGED_PREFIX
from backend.approvals.sampling_desk import prompt_text as sampling_prompt_text

ApproveMode = Literal["ask", "all", "none"]

DEMO_TASK = "Look around the workspace, write a short notes.txt about it, and count its lines."


class TerminalUI:
    """Renders events as text (or JSON lines) and asks the person about approvals."""

    def __init__(
        self,
        host: Host,
        *,
        approve: ApproveMode = "ask",
        as_json: bool = False,
        out: TextIO | None = None,
        read_line: Any = None,
    ) -> None:
        self.host = host
        self.person = local_principal()
        self.approve = approve
        self.as_json = as_json
        self.out = out or sys.stdout
        self.read_line = read_line or (lambda prompt: input(prompt))
        self._mid_line = False

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def line(self, text: str) -> None:
        if self._mid_line:
            self.write("\n")
            self._mid_line = False
        self.write(text + "\n")

    async def run(self, prompt: str, options: SessionOptions | None = None) -> int:
        """Create a session with the prompt, follow it to the end; exit status 0 iff completed."""
        sub = self.host.bus.subscribe(None)
        session = await self.host.runner.create(options=options, prompt=prompt)
        return await self._follow(sub, session.id)

    async def run_chat(self, chat: ChatInput, options: SessionOptions | None = None) -> int:
        """Like `run`, with the prompt read as chat input: `/skill` names, attachments, commands.

        A refused input (unknown mode, skill or path) raises before any session is left behind.
        """
        sub = self.host.bus.subscribe(None)
        try:
            created = await self.host.sessions.create(options=options, first=chat)
        except Exception:
            self.host.bus.unsubscribe(sub)
            raise
        if created.first is not None and created.first.command is not None:
            self.host.bus.unsubscribe(sub)
            self.line(created.first.detail)
            return 0
        return await self._follow(sub, created.session.id)

    async def resume(self, session_id: str | None = None) -> int:
        """Recover what a previous process left running and follow one session to its end."""
        sub = self.host.bus.subscribe(None)
        recovered = await self.host.runner.recover()
        if session_id is None:
            if not recovered:
                self.host.bus.unsubscribe(sub)
                self.line("Nothing to resume: no session was left running or waiting for approval.")
                return 0
            session_id = recovered[0]
        for approval in await self.host.broker.pending(session_id=session_id):
            await self.render(Event(session_id=session_id, seq=0, type="approval.requested", data=approval.model_dump(mode="json")))
        return await self._follow(sub, session_id)

    async def _follow(self, sub: Any, session_id: str) -> int:
        # Sub-agents work for this session: their events and approvals are shown here too.
        family = {session_id}
        try:
            session = await self.host.store.get_session(session_id)
            while session.status in ("running", "waiting_approval"):
                event = await sub.get()
                if event.type == "session.created" and event.data.get("parent_id") in family:
                    family.add(event.session_id)
                    if not self.as_json:
                        self.line(f"↳ sub-agent {event.session_id[:8]}: {event.data.get('title', '')}")
                if event.session_id not in family:
                    continue
                if event.session_id != session_id:
                    await self.render(event, prefix="  │ ")
                    continue
                await self.render(event)
                if event.type == "session.status" and event.data["status"] not in ("running", "waiting_approval"):
                    break
        finally:
            self.host.bus.unsubscribe(sub)
        final = await self.host.runner.wait(session_id, timeout=30)
        if not self.as_json:
            usage = final.usage
            self.line(
                f"── {final.status} · {usage.input_tokens} in / {usage.output_tokens} out tokens · ${usage.cost_usd:.4f}"
            )
        return 0 if final.status == "completed" else 1

    async def render(self, event: Event, *, prefix: str = "") -> None:
        if self.as_json:
            self.write(event.model_dump_json() + "\n")
        else:
            self._render_text(event, prefix=prefix)
        if event.type == "approval.requested":
            await self.answer(Approval.model_validate(event.data))

    def _render_text(self, event: Event, *, prefix: str = "") -> None:
        """One event as text; a sub-agent's (with `prefix`) shows its answer whole, not token by token."""
        data = event.data

        def line(text: str) -> None:
            self.line(prefix + text)

        if event.type == "token":
            if not prefix:
                self.write(data["text"])
                self._mid_line = True
        elif event.type == "message" and data.get("role") == "assistant":
            if prefix and data.get("content"):
                line(_first_lines(data["content"]))
            elif self._mid_line:
                self.line("")
        elif event.type == "tool.started":
            line(f"→ {data['name']} {_short(data['arguments'])}  [{data.get('decision') or ''}]")
        elif event.type == "tool.result":
            mark = "✗" if data["is_error"] else "✓"
            line(f"  {mark} {_first_lines(data['text'])}")
        elif event.type == "approval.resolved":
            line(f"  approval {data['status']} ({data['decided_by']})")
        elif event.type in ("error", "model.retry"):
            line(f"! {data['message']}")

    async def answer(self, approval: Approval) -> None:
        if self.approve == "all" and is_instruction_change(approval):
            self.line("  --approve all does not cover the agent changing its own instructions: you decide")
            decision = await self.ask(approval)  # a closed stdin denies
        elif self.approve == "all" and approval.reason.startswith(MANAGED_PREFIX):
            self.line("  --approve all does not cover a call the managed policy puts to a person: you decide")
            decision = await self.ask(approval)
        elif self.approve == "all" and approval.kind == "unconfined":
            self.line("  --approve all does not cover a command outside the sandbox: you decide")
            decision = await self.ask(approval)
        elif self.approve == "all" and approval.tool_change is not None:
            fields = ", ".join(approval.tool_change.fields) or "its definition"
            self.line(f"  --approve all does not cover a tool that changed since it was pinned ({fields}): you decide")
            decision = await self.ask(approval)
        elif self.approve == "all":
            decision = Decision(kind="allow_once", message="--approve all")
        elif self.approve == "none":
            decision = Decision(kind="deny", message="Denied by --approve none.")
        else:
            decision = await self.ask(approval)
        try:
            await self.host.approvals.answer(approval.id, decision, by=self.person, via="terminal")
        except (ApprovalError, DomainError) as exc:
            self.line(f"  (not applied: {exc})")

    async def ask(self, approval: Approval) -> Decision:
        if approval.kind == "sampling":
            return await self.ask_sampling(approval)
        if approval.kind != "tool":
            return await self.ask_gate(approval)
        self.line(f"? {approval.tool_name} wants to run with:")
        self.line("  " + json.dumps(approval.arguments, indent=2).replace("\n", "\n  "))
        if approval.reason:
            self.line(f"  why it asks: {approval.reason}")
        for flag in approval.carried_results:  # issue 34: a result's text going out
            self.line(f"  ! {flag.argument}: {flag.text}")
        if approval.tool_change is not None:  # issue 34: what the tool says now, against what was trusted
            change = approval.tool_change
            for row in difflib.unified_diff(
                change.before.splitlines(), change.after.splitlines(), "pinned", "now", n=1, lineterm=""
            ):
                self.line(f"    {row}")
        options = "[y] once  [s] this session  [a] always  [n] deny  [e] edit arguments"
        while True:
            choice = (await self._input(f"  {options} > ")).strip().lower()
            if choice in ("y", "yes", ""):
                return Decision(kind="allow_once")
            if choice == "s":
                return Decision(kind="allow_session")
            managed = getattr(self.host, "managed", None)  # tests drive the prompts without a host
            if choice == "a" and managed is not None and managed.disable_allow_always:
                self.line(f"  \"always allow\" is turned off: {managed.where('disable_allow_always')}")
                continue
            if choice == "a":
                rules = approval.suggested_rules
                if not rules:
                    self.line("  No narrow rule fits this call; allow it once or for the session instead.")
                    continue
                self.line(f"  will add allow rule(s): {', '.join(rules)}")
                return Decision(kind="allow_always", rules=rules)
            if choice in ("n", "no"):
                reason = (await self._input("  reason for the agent (optional) > ", on_eof="")).strip()
                return Decision(kind="deny", message=reason or None)
            if choice == "e":
                edited = await self._input("  arguments as JSON > ")
                try:
                    value = json.loads(edited)
                except json.JSONDecodeError as exc:
                    self.line(f"  not JSON: {exc}")
                    continue
                if not isinstance(value, dict):
                    self.line("  the arguments must be a JSON object")
                    continue
                return Decision(kind="allow_once", updated_arguments=value)
            self.line("  please answer y, s, a, n or e")

    async def ask_sampling(self, approval: Approval) -> Decision:
        """A server asking to run the model: its prompt as the model would read it; run it once or deny."""
        self.line(f"? {approval.reason} ({approval.arguments.get('model')}):")
        self.line("  " + sampling_prompt_text(approval.arguments).replace("\n", "\n  "))
        while True:
            choice = (await self._input("  [y] run it once  [n] deny > ")).strip().lower()
            if choice in ("y", "yes", ""):
                return Decision(kind="allow_once")
            if choice in ("n", "no"):
                reason = (await self._input("  reason for the server (optional) > ", on_eof="")).strip()
                return Decision(kind="deny", message=reason or None)
            self.line("  please answer y or n")

    async def ask_gate(self, approval: Approval) -> Decision:
        """A gate between modes or steps: the question in words, the text the person may rewrite."""
        field = "plan" if approval.kind == "mode_switch" else "prompt"
        self.line(f"? {approval.reason}")
        self.line("  " + str(approval.arguments.get(field, "")).replace("\n", "\n  "))
        while True:
            choice = (await self._input("  [y] yes  [n] no  [e] edit the text first > ")).strip().lower()
            if choice in ("y", "yes", ""):
                return Decision(kind="allow_once")
            if choice in ("n", "no"):
                reason = (await self._input("  feedback for the agent (optional) > ", on_eof="")).strip()
                return Decision(kind="deny", message=reason or None)
            if choice == "e":
                text = (await self._input(f"  new {field} (one line) > ", on_eof="")).strip()
                if text:
                    return Decision(kind="allow_once", updated_arguments={**approval.arguments, field: text})
                self.line(f"  an empty {field} is not a {field}")
                continue
            self.line("  please answer y, n or e")

    async def _input(self, prompt: str, *, on_eof: str = "n") -> str:
        """One line from the person; a closed stdin answers `on_eof` (deny, by default)."""
        try:
            return await asyncio.to_thread(self.read_line, prompt)
        except EOFError:
            return on_eof


def _short(arguments: dict[str, Any], limit: int = 120) -> str:
    text = json.dumps(arguments, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_lines(text: str, lines: int = 3) -> str:
    parts = text.strip().splitlines()
    shown = "\n    ".join(parts[:lines])
    return shown + (f"\n    … ({len(parts) - lines} more lines)" if len(parts) > lines else "")
