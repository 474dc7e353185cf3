"""The one table from domain errors to HTTP statuses (`backend.api.app.ERROR_STATUS`)."""

from __future__ import annotations

import importlib
import pkgutil

import httpx
import pytest
from fastapi import FastAPI

import backend
from backend.api.app import ERROR_STATUS, _add_error_handlers
from backend.config import ConfigError
from backend.domain.errors import (
    ApprovalClosed,
    ApprovalNotFound,
    BadRequest,
    Conflict,
    DomainError,
    Forbidden,
    Invalid,
    NotFound,
    StorageUnavailable,
)
from backend.engine.runner import SessionBusy
from backend.rules.grammar import RuleError

KINDS = (NotFound, Conflict, Forbidden, BadRequest, Invalid, StorageUnavailable)


async def _status_of(exc: Exception) -> tuple[int, dict]:
    app = FastAPI()
    _add_error_handlers(app)

    @app.get("/boom")
    async def boom() -> None:
        raise exc

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/boom")
    return response.status_code, (response.json() if response.status_code < 500 or response.status_code == 503 else {})


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (NotFound("no session 'x'"), 404),
        (ApprovalNotFound("no approval 'x'"), 404),
        (Conflict("already answered"), 409),
        (ApprovalClosed("approval x was answered meanwhile"), 409),
        (SessionBusy("session x is still running"), 409),
        (Forbidden("approvers may not widen rules"), 403),
        (BadRequest("workspace /nope is not a directory"), 400),
        (Invalid("'((' is not a rule"), 422),
        (RuleError("'mcp__*' would allow every tool"), 422),
        (ConfigError("overseer.yaml: not valid YAML"), 422),
        (StorageUnavailable("the disk is full"), 503),
    ],
)
async def test_each_kind_of_domain_error_is_its_status_with_its_own_message(exc, code):
    status, body = await _status_of(exc)
    assert status == code
    assert body == {"detail": str(exc.args[0])}


async def test_a_value_error_that_is_no_domain_error_is_a_bug_and_a_500():
    status, _ = await _status_of(ValueError("a bug, not a refusal"))
    assert status == 500


def test_the_table_is_keyed_by_the_kinds_alone():
    assert set(ERROR_STATUS) == set(KINDS)


def _every_subclass(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_every_subclass(sub)]
    return found


def test_every_domain_error_in_the_backend_is_of_one_kind():
    for module in pkgutil.walk_packages(backend.__path__, "backend."):
        importlib.import_module(module.name)
    for error in _every_subclass(DomainError):
        kinds = [kind for kind in KINDS if issubclass(error, kind)]
        assert kinds, f"{error.__module__}.{error.__name__} is a DomainError of no kind: give it one"
        # Invalid is itself a BadRequest; any other pair of kinds would make the status ambiguous.
        assert len(kinds) == 1 or set(kinds) == {BadRequest, Invalid}, (error, kinds)
