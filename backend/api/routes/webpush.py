"""Web Push for the installed dashboard: the VAPID public key, and a person's subscriptions.

On only with `notify.webpush: true` (else 404). A subscription is kept as the caller's: the
notifications it gets carry answer links made for them. The private key never leaves the data dir.
"""

from __future__ import annotations

from fastapi import APIRouter, Query, Response, status
from pydantic import BaseModel

from backend.api.deps import Approver, Services, Viewer
from backend.channels.push import PushNotifier
from backend.channels.webpush import WebPush, WebPushSubscription
from backend.domain.errors import NotFound

router = APIRouter(prefix="/api/push", tags=["push"])


class VapidKey(BaseModel):
    public_key: str
    """The application server key for `PushManager.subscribe` (base64url)."""


def _webpush(services: Services) -> WebPush:
    for service in services.lifecycle.attached:
        if isinstance(service, PushNotifier) and service.webpush is not None:
            return service.webpush
    raise NotFound("Web Push is off: set notify.webpush: true in overseer.yaml")


@router.get("/vapid-key")
async def vapid_key(services: Services, _: Viewer) -> VapidKey:
    return VapidKey(public_key=_webpush(services).public_key)


@router.post("/subscriptions", status_code=status.HTTP_204_NO_CONTENT)
async def subscribe(body: WebPushSubscription, services: Services, principal: Approver) -> Response:
    """Keep this browser's subscription as the caller's (approvers answer, so approvers subscribe)."""
    _webpush(services).subscribe(body, principal.name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.delete("/subscriptions", status_code=status.HTTP_204_NO_CONTENT)
async def unsubscribe(services: Services, principal: Approver, endpoint: str = Query(max_length=2000)) -> Response:
    """Forget one of the caller's own subscriptions."""
    if not _webpush(services).unsubscribe(endpoint, principal.name):
        raise NotFound("no subscription of yours has that endpoint")
    return Response(status_code=status.HTTP_204_NO_CONTENT)
