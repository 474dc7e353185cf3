"""Modes: list, read, save a person's own, delete (or reset an override), and read a built-in.

Every call goes to the host's ModeRegistry, which reads the files afresh, so a hand-edited
mode shows here at once. A fault in a mode (a bad name, pattern, policy or next mode) is a 400
naming the field. The handlers are plain functions: file I/O runs in the thread pool.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from backend.api.deps import Admin, Services, Viewer
from backend.domain.errors import NotFound
from backend.modes.model import Mode, ModeWrite

router = APIRouter(prefix="/api/modes", tags=["modes"])


class ModeRemoved(BaseModel):
    """What `DELETE /api/modes/{name}` removed, and the built-in now in effect after a reset."""

    removed: Literal["user", "override"]
    mode: Mode | None


@router.get("")
def list_modes(services: Services, _: Viewer) -> list[Mode]:
    """Built-ins first (agent, ask, plan, research, review), then a person's own by name."""
    return services.modes.list()


@router.get("/{name}")
def get_mode(name: str, services: Services, _: Viewer) -> Mode:
    return services.modes.get(name)


@router.put("/{name}")
def save_mode(name: str, body: ModeWrite, services: Services, _: Admin) -> Mode:
    """Create or replace the person's mode file; with a built-in's name it overrides the built-in.

    An admin's: a mode's policies and tools decide what runs without asking.
    """
    return services.modes.save(name, body)


@router.delete("/{name}")
def delete_mode(name: str, services: Services, _: Admin) -> ModeRemoved:
    """Delete a person's mode, or reset an overridden built-in; a bare built-in is a 400."""
    builtin = services.modes.delete(name)
    return ModeRemoved(removed="user" if builtin is None else "override", mode=builtin)


@router.get("/{name}/builtin")
def get_builtin_mode(name: str, services: Services, _: Viewer) -> Mode:
    """The shipped version of a built-in mode, whether or not a person's file overrides it."""
    mode = services.modes.builtin(name)
    if mode is None:
        raise NotFound(f"{name!r} is not a built-in mode")
    return mode
