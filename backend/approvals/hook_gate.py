"""The gate's use of the configured hooks: PreToolUse and PermissionRequest around the rules.

    PreToolUse -> (updatedInput rewrites the call) -> the rules on the call as it now is
      -> the hook's verdict (`review`) -> still an ask? PermissionRequest -> `review` again

A rewrite is judged by the rules like any call, so it cannot slip past a deny; a hook's allow
answers only the default question (see configured_hooks.review).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.approvals.confinement import Confinement
from backend.approvals.configured_hooks import ConfiguredHooks, HookPlace, review
from backend.approvals.gate_types import GateSession
from backend.approvals.hook_answers import Verdict
from backend.approvals.hook_tools import tool_arguments
from backend.domain.models import Decider
from backend.rules.policy_engine import Evaluation, PolicyEngine, ToolCallView


@dataclass(kw_only=True)
class HookedEvaluation:
    """The rules' evaluation after the hooks, and which hook rewrote the call's arguments."""

    evaluation: Evaluation
    rewritten_by: str | None = None


def place_of(session: GateSession) -> HookPlace:
    return HookPlace(session_id=session.session_id, workspace=session.workspace, mode=session.mode, fence=session.fence)


def hook_decider(principal: str) -> Decider:
    """A hook as the principal of a decision (`hook:<command or url>`)."""
    return Decider(name=principal, kind="system", via="core")


def sandbox_prefix(confinement: Confinement, policy: Callable[[], PolicyEngine]) -> Callable[[Path, Any], Sequence[str]]:
    """Hook commands get the sandbox a shell command of their session gets (no network);
    `sandbox: off` runs them unconfined, like the commands. Raises when no sandbox can be made."""

    def prefix(workspace: Path, fence: Any) -> Sequence[str]:
        launch = confinement.plan(workspace=workspace, policy=policy(), fence=fence).launch
        return () if launch.get("unconfined") else list(launch["argv"])

    return prefix


async def evaluate_with_hooks(
    hooks: ConfiguredHooks,
    session: GateSession,
    call_id: str,
    view: ToolCallView,
    evaluate: Callable[[ToolCallView], Evaluation],
) -> HookedEvaluation:
    """The call's evaluation with PreToolUse and PermissionRequest hooks; `view.arguments` is the
    call as it will run (a hook's `updatedInput` included)."""
    if not (hooks.configured("PreToolUse") or hooks.configured("PermissionRequest")):
        return HookedEvaluation(evaluation=evaluate(view))
    place = place_of(session)
    rewritten_by: str | None = None
    pre = await hooks.pre_tool_use(place, call_id=call_id, name=view.name, arguments=view.arguments)
    if pre.blocked:
        return HookedEvaluation(evaluation=review(Evaluation(verdict="ask", reason=""), pre))
    if pre.updated_input is not None:
        view.arguments = tool_arguments(view.name, pre.updated_input, session.workspace)
        rewritten_by = _rewriter(pre)
    evaluation = review(evaluate(view), pre)
    if evaluation.verdict != "ask" or not hooks.configured("PermissionRequest"):
        return HookedEvaluation(evaluation=evaluation, rewritten_by=rewritten_by)
    asked = await hooks.permission_request(
        place, call_id=call_id, name=view.name, arguments=view.arguments, reason=evaluation.reason
    )
    if asked.permission == "allow" and asked.updated_input is not None:
        view.arguments = tool_arguments(view.name, asked.updated_input, session.workspace)
        rewritten_by = _rewriter(asked)
        evaluation = evaluate(view)  # the rewritten call, judged afresh
    return HookedEvaluation(evaluation=review(evaluation, asked), rewritten_by=rewritten_by)


def _rewriter(verdict: Verdict) -> str:
    return next(a.principal for a in verdict.answers if a.updated_input is not None)
