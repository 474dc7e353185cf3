"""A session's steps a person refused (denied, or let time out), and trying one again."""

from __future__ import annotations

from fastapi import APIRouter, status

from backend.api.deps import Approver, Services, Viewer
from backend.domain.models import Session, StopReason

router = APIRouter(prefix="/api/sessions", tags=["sessions"])


@router.post("/{session_id}/tool-calls/{call_id}/retry", status_code=status.HTTP_202_ACCEPTED)
async def retry_tool_call(session_id: str, call_id: str, services: Services, _: Approver) -> Session:
    """Propose a denied or timed-out call again: it asks again (409 while the session runs, or for
    a call no person refused)."""
    return await services.sessions.retry_call(session_id, call_id)


@router.get("/{session_id}/refused-calls")
async def list_refused_calls(session_id: str, services: Services, _: Viewer) -> dict[str, StopReason]:
    """The session's tool calls a person denied or let time out (call id: "denied" | "timed_out"):
    the ones its Retry can ask again."""
    return await services.sessions.refused_calls(session_id)
