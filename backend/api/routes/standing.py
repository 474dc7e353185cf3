"""What runs without asking in a session: its standing rules, for the strip above the composer."""

from __future__ import annotations

from fastapi import APIRouter

from backend.api.deps import Services, Viewer
from backend.app.standing import StandingRules

router = APIRouter(prefix="/api/sessions", tags=["sessions"])


@router.get("/{session_id}/standing-rules")
async def session_standing_rules(session_id: str, services: Services, _: Viewer) -> StandingRules:
    """The allow rules in force (with their source), and the tools this session's mode lets run
    unasked (their policy, or read-only auto-allow); deny and ask rules still win over both."""
    return await services.standing.of(session_id)
