"""Sessions: create, list, read, message, stop, delete."""

from __future__ import annotations

from fastapi import APIRouter, Query, Response, status
from fastapi.responses import FileResponse

from backend.api.deps import MAX_STORED_INT, Approver, Services, Viewer
from backend.api.schemas import CreateSession, EditSession, SendMessage, SessionDetail
from backend.app.session_edits import SessionEdit
from backend.domain.media import AUDIO_TYPES, IMAGE_TYPES, media_type_of
from backend.domain.models import Event, Session, SessionStatus
from backend.app.chat import ChatResult

router = APIRouter(prefix="/api/sessions", tags=["sessions"])


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_session(body: CreateSession, services: Services, principal: Approver) -> Session:
    """Create a session; with a prompt it starts working at once (commands and `/skill` work too)."""
    created = await services.sessions.create(
        options=body.options(
            agent=services.agent_routes.agent_for("rest", user=principal.name, named=body.agent),
            created_by=principal.decider("rest"),
            chooses_workspace=not principal.can("admin"),
        ),
        first=body.chat_input(body.prompt, author=principal.decider("rest")) if body.prompt else None,
    )
    return created.session


@router.get("")
async def list_sessions(
    services: Services,
    _: Viewer,
    status: SessionStatus | None = None,
    limit: int = Query(200, ge=1, le=1000),
    archived: bool | None = Query(None, description="true: only archived sessions; false: none of them; unset: all"),
    q: str | None = Query(
        None, max_length=200, pattern=r"^[^\x00]*$", description="text in the title or in what a person or the agent said"
    ),
) -> list[Session]:
    """Sessions, newest first; `q` searches titles and messages (case-insensitive, taken literally)."""
    return await services.sessions.find(
        statuses=[status] if status else None, limit=limit, archived=archived, text=(q or "").strip() or None
    )


@router.get("/{session_id}")
async def get_session(session_id: str, services: Services, _: Viewer) -> SessionDetail:
    found = await services.sessions.transcript(session_id)
    return SessionDetail(
        **found.session.model_dump(), messages=found.messages, tool_calls=found.tool_calls, last_seq=found.last_seq
    )


@router.patch("/{session_id}")
async def edit_session(session_id: str, body: EditSession, services: Services, principal: Viewer) -> Session:
    """Rename, archive or unarchive a session, or switch its auto-approve (its owner or an admin).

    An active session cannot be archived (409). Turning auto-approve on with `approve_pending`
    also allows the approvals already waiting in the session; `auto_approve_scope` says what it
    covers, and High-risk calls still ask unless `auto_approve_high_risk`.
    """
    edit = SessionEdit(
        title=body.title,
        archived=body.archived,
        auto_approve=body.auto_approve,
        approve_pending=body.approve_pending,
        scope=body.auto_approve_scope,
        high_risk=body.auto_approve_high_risk,
    )
    return await services.session_edits.edit(session_id, edit, by=principal, via="rest")


@router.get("/{session_id}/events")
async def session_events(
    session_id: str,
    services: Services,
    _: Viewer,
    since: int = Query(0, ge=0, le=MAX_STORED_INT),
    types: str | None = Query(None, max_length=2000, description="comma-separated event types to keep"),
) -> list[Event]:
    events = await services.sessions.events(session_id, since)
    if types:
        wanted = {t.strip() for t in types.split(",") if t.strip()}
        events = [e for e in events if e.type in wanted]
    return events


@router.post("/{session_id}/messages", status_code=status.HTTP_202_ACCEPTED)
async def send_message(session_id: str, body: SendMessage, services: Services, principal: Approver) -> ChatResult:
    """Send a message (with skills, context paths, images) or run a chat command (`/new`, `/help`, `/mode`).

    The message names its author: auto-approve covers only its owner's turns, so a turn another
    person's message starts asks, its approvals in the inbox as usual."""
    return await services.sessions.submit(session_id, body.chat_input(body.content, author=principal.decider("rest")))


@router.post("/{session_id}/stop")
async def stop_session(session_id: str, services: Services, principal: Approver) -> Session:
    return await services.sessions.stop(session_id, by=principal.decider("rest"))


@router.delete("/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(session_id: str, services: Services, principal: Approver) -> Response:
    """Withdraw the approvals asked in the session, stop it, delete it (its owner or an admin)."""
    await services.sessions.delete(session_id, by=principal, via="rest")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


MEDIA_HEADERS = {
    # A tool's bytes are served as the type their name says and are never run as a page.
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "private, max-age=31536000, immutable",  # named by content: never changes
}


@router.get(
    "/{session_id}/media/{name}",
    response_class=FileResponse,
    responses={
        200: {
            "description": "The image or audio clip a tool returned",
            "content": {t: {"schema": {"type": "string", "format": "binary"}} for t in {**IMAGE_TYPES, **AUDIO_TYPES}},
        }
    },
)
async def session_media(session_id: str, name: str, services: Services, _: Viewer) -> FileResponse:
    """An image or audio clip of one of the session's tool results, by the name its message gives."""
    path = await services.sessions.media_path(session_id, name)
    return FileResponse(path, media_type=media_type_of(name), headers=MEDIA_HEADERS)
