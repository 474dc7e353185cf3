"""Answer links from notifications: GET shows a confirmation page, POST decides once.

No login: the link's signature is the credential, and it answers one approval one way as the
person it was made for (see backend/channels/answer_links.py). A GET never decides anything,
since mail and chat apps open links to preview them. Pages are plain HTML, never cached, with
no referrer, so the token does not travel on.
"""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse

from backend.api.deps import Services
from backend.channels.answer_links import AnswerLink, AnswerLinks, LinkExpired, LinkInvalid
from backend.channels.approval_text import DECISION_WORDS, approval_text, outcome_text
from backend.channels.principals import principal_named
from backend.domain.errors import ApprovalClosed, Forbidden, Invalid, NotFound
from backend.domain.models import Decision

router = APIRouter(tags=["answer links"], include_in_schema=False)

HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
    # No script, no framing (a framed page could be clicked through unseen), forms only to itself.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
}
ACTION_WORDS = {"allow_once": "Allow once", "allow_session": "Allow for this session", "deny": "Deny"}


@cache
def links_for(data_dir: Path) -> AnswerLinks:
    return AnswerLinks(data_dir)


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    document = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title></head>"
        "<body style='font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem'>"
        f"<h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers=HEADERS)


def _pre(text: str) -> str:
    return f"<pre style='white-space: pre-wrap'>{html.escape(text)}</pre>"


def _checked(token: str, services: Services) -> AnswerLink | HTMLResponse:
    try:
        return links_for(services.data_dir).check(token)
    except LinkInvalid as exc:
        return _page("Link not valid", f"<p>{html.escape(str(exc))}</p>", 403)
    except LinkExpired as exc:
        return _page("Link expired", f"<p>{html.escape(str(exc))}</p>", 410)


@router.get("/answer/{token}", response_class=HTMLResponse)
async def confirm_answer(token: str, services: Services) -> HTMLResponse:
    """The confirmation page: what waits and what the button will do. Decides nothing."""
    link = _checked(token, services)
    if isinstance(link, HTMLResponse):
        return link
    try:
        approval = await services.approvals.get(link.approval_id)
    except NotFound:
        return _page("No such approval", "<p>This approval no longer exists.</p>", 404)
    if approval.status != "pending":
        return _page("Already answered", _pre(approval_text(approval)) + f"<p>{html.escape(outcome_text(approval))}</p>")
    action = ACTION_WORDS[link.decision]
    form = (
        f"<form method='post'><p>As <b>{html.escape(link.user)}</b>:</p>"
        f"<button type='submit' style='font-size: 1.2rem; padding: .5rem 1.5rem'>{html.escape(action)}</button></form>"
    )
    return _page(f"{action}?", _pre(approval_text(approval)) + form)


@router.post("/answer/{token}", response_model=None)
async def answer_by_link(token: str, services: Services, request: Request) -> HTMLResponse | JSONResponse:
    """Decide, once, as the person the link was made for (ntfy's buttons POST here directly).

    The same link sent again (a retry after a dropped connection) answers as the first time and
    changes nothing; another link to a closed approval gets 409 with who answered what."""
    link = _checked(token, services)
    if isinstance(link, HTMLResponse):
        return link
    wants_json = "application/json" in request.headers.get("accept", "")
    status, title, detail = await _decide(services, link)
    if wants_json:
        return JSONResponse({"detail": detail}, status_code=status, headers=HEADERS)
    return _page(title, f"<p>{html.escape(detail)}</p>", status)


async def _decide(services: Services, link: AnswerLink) -> tuple[int, str, str]:
    try:
        principal = principal_named(services.settings, link.user)
    except LookupError:
        return 403, "Not allowed", f"{link.user} is no longer one of this Overseer's users"
    try:
        closed = await services.approvals.answer(link.approval_id, Decision(kind=link.decision), by=principal, via="channel")
    except ApprovalClosed:
        try:
            approval = await services.approvals.get(link.approval_id)
        except NotFound:
            return 404, "No such approval", "This approval no longer exists."
        return 409, "Already answered", f"Nothing changed. {outcome_text(approval)}"
    except NotFound:
        return 404, "No such approval", "This approval no longer exists."
    except (Forbidden, Invalid) as exc:
        return 403, "Not allowed", str(exc)
    return 200, DECISION_WORDS[link.decision], outcome_text(closed)
