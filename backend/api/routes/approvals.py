"""Approvals across sessions: list and answer."""

from __future__ import annotations

from fastapi import APIRouter

from backend.api.deps import Approver, Services, Viewer
from backend.api.schemas import AnswerApproval
from backend.domain.models import Approval, ApprovalStatus

router = APIRouter(prefix="/api/approvals", tags=["approvals"])


@router.get("")
async def list_approvals(
    services: Services, _: Viewer, status: ApprovalStatus | None = None, session_id: str | None = None
) -> list[Approval]:
    return await services.approvals.find(status=status, session_id=session_id)


@router.get("/{approval_id}")
async def get_approval(approval_id: str, services: Services, _: Viewer) -> Approval:
    return await services.approvals.get(approval_id)


@router.post("/{approval_id}")
async def answer_approval(approval_id: str, body: AnswerApproval, services: Services, principal: Approver) -> Approval:
    """Answer once; the same answer sent again by the same caller (a retry after a lost response)
    gets 200 and the approval as decided. 409 when it was answered otherwise or has expired (the
    detail says who decided what), 403 for a rule broader than the call needs (unless the caller
    is an admin), 422 for a rule that does not parse."""
    return await services.approvals.answer(approval_id, body.to_decision(), by=principal, via="rest")
