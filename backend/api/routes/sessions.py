"""Sessions: create, list, read, message, stop, delete."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query, Response, status
from fastapi.responses import FileResponse

from backend.api.deps import MAX_STORED_INT, Approver, HostDep, Viewer
from backend.api.schemas import CreateSession, EditSession, SendMessage, SessionDetail
from backend.app.session_edits import SessionEdit
from backend.domain.media import AUDIO_TYPES, IMAGE_TYPES, media_type_of
from backend.domain.models import Event, Session, SessionStatus
from backend.app.chat import ChatResult
from backend.routing import route

router = APIRouter(prefix="/api/sessions", tags=["sessions"])


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_session(body: CreateSession, host: HostDep, principal: Approver) -> Session:
    """Create a session; with a prompt it starts working at once (commands and `/skill` work too)."""
    created = await host.sessions.create(
        first=body.chat_input(body.prompt) if body.prompt else None,
        title=body.title,
        mode=body.mode,
        model=body.model,
        engine=body.engine,
        workspace=body.workspace,
        agent=route(host.agents.routes, channel="rest", user=principal.name, named=body.agent),
        instructions=body.instructions,
        created_by=principal.decider("rest"),
    )
    return created.session


@router.get("")
async def list_sessions(
    host: HostDep,
    _: Viewer,
    status: SessionStatus | None = None,
    limit: int = Query(200, ge=1, le=1000),
    archived: bool | None = Query(None, description="true: only archived sessions; false: none of them; unset: all"),
    q: str | None = Query(
        None, max_length=200, pattern=r"^[^\x00]*$", description="text in the title or in what a person or the agent said"
    ),
) -> list[Session]:
    """Sessions, newest first; `q` searches titles and messages (case-insensitive, taken literally)."""
    return await host.store.list_sessions(
        statuses=[status] if status else None, limit=limit, archived=archived, text=(q or "").strip() or None
    )


@router.get("/{session_id}")
async def get_session(session_id: str, host: HostDep, _: Viewer) -> SessionDetail:
    session = await host.store.get_session(session_id)
    return SessionDetail(
        **session.model_dump(),
        messages=await host.store.list_messages(session_id),
        tool_calls=await host.store.list_tool_calls(session_id),
        last_seq=await host.store.last_seq(session_id),
    )


@router.patch("/{session_id}")
async def edit_session(session_id: str, body: EditSession, host: HostDep, principal: Viewer) -> Session:
    """Rename, archive or unarchive a session, or switch its auto-approve (its owner or an admin).

    An active session cannot be archived (409). Turning auto-approve on with `approve_pending`
    also allows the approvals already waiting in the session.
    """
    edit = SessionEdit(
        title=body.title, archived=body.archived, auto_approve=body.auto_approve, approve_pending=body.approve_pending
    )
    return await host.session_edits.edit(session_id, edit, by=principal, via="rest")


@router.get("/{session_id}/events")
async def session_events(
    session_id: str,
    host: HostDep,
    _: Viewer,
    since: int = Query(0, ge=0, le=MAX_STORED_INT),
    types: str | None = Query(None, max_length=2000, description="comma-separated event types to keep"),
) -> list[Event]:
    await host.store.get_session(session_id)
    events = await host.bus.replay(session_id, since)
    if types:
        wanted = {t.strip() for t in types.split(",") if t.strip()}
        events = [e for e in events if e.type in wanted]
    return events


@router.post("/{session_id}/messages", status_code=status.HTTP_202_ACCEPTED)
async def send_message(session_id: str, body: SendMessage, host: HostDep, _: Approver) -> ChatResult:
    """Send a message (with skills, context paths, images) or run a chat command (`/new`, `/help`, `/mode`)."""
    return await host.sessions.submit(session_id, body.chat_input(body.content))


@router.post("/{session_id}/stop")
async def stop_session(session_id: str, host: HostDep, _: Approver) -> Session:
    return await host.sessions.stop(session_id)


@router.delete("/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(session_id: str, host: HostDep, _: Approver) -> Response:
    """Withdraw the approvals asked in the session, stop it, delete it."""
    await host.sessions.delete(session_id)
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
async def session_media(session_id: str, name: str, host: HostDep, _: Viewer) -> FileResponse:
    """An image or audio clip of one of the session's tool results, by the name its message gives."""
    await host.store.get_session(session_id)
    path = await asyncio.to_thread(host.media.path, session_id, name)
    return FileResponse(path, media_type=media_type_of(name), headers=MEDIA_HEADERS)
