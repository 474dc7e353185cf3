"""Cron jobs: list, create, read, edit, delete, pause, resume, and run now.

Every change goes through the host's Scheduler, which validates it (a bad schedule is a 400
naming the problem) and wakes its loop, since the next due time may have moved.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Response, status
from pydantic import BaseModel

from backend.api.deps import Admin, Approver, Services, Viewer
from backend.domain.schedules import Schedule, ScheduleCreate, ScheduleUpdate

router = APIRouter(prefix="/api/schedules", tags=["schedules"])


class RunNowResult(BaseModel):
    """What `POST /api/schedules/{id}/run` did, and the job afterwards."""

    outcome: Literal["started", "sent", "skipped", "error"]
    session_id: str | None
    detail: str
    schedule: Schedule


@router.get("")
async def list_schedules(services: Services, _: Viewer) -> list[Schedule]:
    return await services.schedules.jobs()


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_schedule(body: ScheduleCreate, services: Services, _: Admin) -> Schedule:
    """Create a job; its first run is the schedule's first time after now."""
    return await services.schedules.create(body)


@router.get("/{schedule_id}")
async def get_schedule(schedule_id: str, services: Services, _: Viewer) -> Schedule:
    return await services.schedules.job(schedule_id)


@router.patch("/{schedule_id}")
async def update_schedule(schedule_id: str, body: ScheduleUpdate, services: Services, _: Admin) -> Schedule:
    return await services.schedules.update(schedule_id, body)


@router.delete("/{schedule_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_schedule(schedule_id: str, services: Services, _: Approver) -> Response:
    """Delete a job; a run in progress goes on as an ordinary session."""
    await services.schedules.delete(schedule_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{schedule_id}/pause")
async def pause_schedule(schedule_id: str, services: Services, _: Approver) -> Schedule:
    return await services.schedules.pause(schedule_id)


@router.post("/{schedule_id}/resume")
async def resume_schedule(schedule_id: str, services: Services, _: Admin) -> Schedule:
    return await services.schedules.resume(schedule_id)


@router.post("/{schedule_id}/run")
async def run_schedule_now(schedule_id: str, services: Services, _: Approver) -> RunNowResult:
    """Fire the job once now, paused or not; its next scheduled run stays where it was."""
    fired = await services.schedules.run_now(schedule_id)
    return RunNowResult(
        outcome=fired.outcome,
        session_id=fired.session_id,
        detail=fired.detail,
        schedule=await services.schedules.job(schedule_id),
    )
