"""The model from the dashboard: what new sessions use, a key that is never sent back, and a test call."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter
from pydantic import BaseModel, Field

from backend.api.deps import Admin, Services, Viewer
from backend.app.model_settings import ModelSource
from backend.config import ThinkingConfig

router = APIRouter(prefix="/api/settings/model", tags=["settings"])


class ModelSettingsOut(BaseModel):
    """What is in use; `api_key_set` says whether a key is set, never what it is."""

    model: str | None
    api_base: str | None
    api_key_set: bool
    demo: bool
    source: ModelSource
    thinking: ThinkingConfig
    """Extended thinking for models that support it: on or off, and its token budget."""


class ModelSettingsIn(BaseModel):
    """A model choice. `model` empty: the offline demo. `api_key` omitted or empty: keep the key set."""

    model: str | None = Field(None, max_length=200)
    api_base: str | None = Field(None, max_length=2000)
    api_key: str | None = Field(None, max_length=4000)
    clear_api_key: bool = False
    thinking: ThinkingConfig | None = None
    """Omitted: keep the thinking setting in use."""


class ConnectionTestOut(BaseModel):
    ok: bool
    message: str
    latency_ms: int


def _clean(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


@router.get("")
async def get_model(services: Services, _: Viewer) -> ModelSettingsOut:
    return ModelSettingsOut(**asdict(services.model_settings.view()))


@router.put("")
async def put_model(body: ModelSettingsIn, services: Services, _: Admin) -> ModelSettingsOut:
    """Saved to the data dir (0600) and applied at once: sessions created from now on use it."""
    view = services.model_settings.save(
        model=_clean(body.model),
        api_base=_clean(body.api_base),
        api_key=_clean(body.api_key),
        clear_api_key=body.clear_api_key,
        thinking=body.thinking,
    )
    return ModelSettingsOut(**asdict(view))


@router.post("/test")
async def test_model(body: ModelSettingsIn, services: Services, _: Admin) -> ConnectionTestOut:
    """One small call with the values given (the saved ones where a field is empty); it costs a
    few tokens, so only an admin may make it."""
    result = await services.model_settings.test(
        model=_clean(body.model), api_base=_clean(body.api_base), api_key=_clean(body.api_key)
    )
    return ConnectionTestOut(**asdict(result))
