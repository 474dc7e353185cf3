"""The invoke-agent API: run an agent to its end, for programs."""

from __future__ import annotations

from fastapi import APIRouter

from backend.api.deps import Approver, HostDep
from backend.api.schemas import InvokeRequest, InvokeResponse

router = APIRouter(prefix="/api/agents", tags=["agents"])


@router.post("/invoke")
async def invoke(body: InvokeRequest, host: HostDep, _: Approver) -> InvokeResponse:
    """Runs until the session ends (approvals inside it wait for a person as usual)."""
    result = await host.sessions.invoke(
        prompt=body.prompt,
        mode=body.mode,
        model=body.model,
        engine=body.engine,
        parent_session_id=body.parent_session_id,
        fork=body.fork,
    )
    return InvokeResponse(
        session_id=result.session_id,
        response=result.response,
        status=result.status,
        cost_usd=result.cost_usd,
        tokens={"input": result.input_tokens, "output": result.output_tokens},
    )
