"""405 answers that name every method a path takes, and 405 (not 404) for an API path asked wrongly.

Starlette answers a method a path does not take with the `Allow` of the first route whose path
matched, though several routes may share a path (`GET /api/sessions` and `POST /api/sessions`
are two). And the dashboard's catch-all `GET /{path:path}` matches every path, so a GET on a
POST-only API route reached it and was told 404. Both ask the same question, answered here:
which methods do the app's routes take on this path?
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

API_PREFIXES = ("/api/", "/ws")
"""Paths the dashboard never serves: its catch-all does not count as a route for them."""


METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def allowed_methods(routes: Iterable[BaseRoute], scope: Scope, *, skip: BaseRoute | None = None) -> list[str]:
    """Every method some route takes on the scope's path (sorted); `skip` is left out.

    Each method is tried on a fresh scope of the same path: FastAPI nests included routers in
    routes of its own, so asking each route "would you take this method?" is what works at
    every depth.
    """
    allowed = []
    for method in METHODS:
        probe: Scope = {
            "type": "http",
            "method": method,
            "path": scope["path"],
            "root_path": scope.get("root_path", ""),
            "headers": [],
            "query_string": b"",
        }
        if any(route is not skip and route.matches(dict(probe))[0] is Match.FULL for route in routes):
            allowed.append(method)
    return allowed


def method_not_allowed(method: str, path: str, methods: list[str]) -> JSONResponse:
    """A 405 whose `Allow` lists `methods` and whose detail says what the path takes."""
    allow = ", ".join(methods)
    return JSONResponse(
        {"detail": f"{method} is not allowed on {path}; it takes {allow}"},
        status_code=405,
        headers={"Allow": allow},
    )


def dashboard_route(request: Request) -> BaseRoute | None:
    """The catch-all route serving the dashboard, if the app has one."""
    return getattr(request.app.state, "dashboard_route", None)


async def http_error(request: Request, exc: Exception) -> Response:
    """FastAPI's own answer to an HTTPException, except a 405's `Allow` covers every route of the path."""
    assert isinstance(exc, HTTPException)
    if exc.status_code != 405:
        return await http_exception_handler(request, exc)
    skip = dashboard_route(request) if request.url.path.startswith(API_PREFIXES) else None
    methods = allowed_methods(request.app.router.routes, request.scope, skip=skip)
    return method_not_allowed(request.method, request.url.path, methods)
