"""The session runner's use of the configured hooks: a prompt as it is submitted, a run that stops.

UserPromptSubmit may refuse a prompt (it is never stored, the sender reads why) or add context,
which is appended to the stored prompt in a tagged block, so the person sees what the model was
told. A SessionStart hook's context joins the session's first prompt the same way. A Stop hook
that blocks the stop sends its reason to the model as the next user message, at most
STOP_CONTINUES times in a row, so a hook that always blocks cannot keep a run going forever.
"""

from __future__ import annotations

from backend.approvals.configured_hooks import STOP_CONTINUES, ConfiguredHooks, HookPlace
from backend.domain.errors import BadRequest

__all__ = ["STOP_CONTINUES", "PromptBlocked", "stop_feedback", "submitted_prompt"]


class PromptBlocked(BadRequest):
    """A UserPromptSubmit hook refused the prompt; the message says which and why."""


async def submitted_prompt(hooks: ConfiguredHooks, place: HookPlace, prompt: str, *, context: str = "") -> str:
    """The prompt as it is stored: with the hooks' context (and `context`, a SessionStart
    hook's) appended; PromptBlocked when a hook refuses it."""
    if hooks.configured("UserPromptSubmit"):
        verdict = await hooks.user_prompt_submit(place, prompt=prompt)
        if verdict.blocked:
            raise PromptBlocked(f"A UserPromptSubmit hook blocked the prompt: {verdict.reason}")
        context = "\n".join(c for c in (context, verdict.context) if c)
    if not context:
        return prompt
    return f"{prompt}\n\n<hook-context>\n{context}\n</hook-context>"


async def stop_feedback(hooks: ConfiguredHooks, place: HookPlace, *, continued: int, last_message: str) -> str | None:
    """The user message that sends the model back to work, when a Stop hook blocks the stop and
    the run has not been sent back STOP_CONTINUES times already; else None."""
    if continued >= STOP_CONTINUES:
        return None
    reason = await hooks.stop(place, active=continued > 0, last_message=last_message)
    return f"Stop hook feedback:\n{reason}" if reason else None
