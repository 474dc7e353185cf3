"""The FastAPI application: REST routers, the WebSocket, the dashboard, and the engine in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend.auth import Authenticator, UserConfig
from backend.api.auth_first import AuthFirst
from backend.api.body_limit import BodyLimit
from backend.api.methods import allowed_methods, http_error, method_not_allowed
from backend.api.origin_check import OriginCheck
from backend.api.replay_limits import ReplayRate
from backend.api.throttle import LoginThrottle
from backend.api import oauth as oauth_api
from backend.api.routes import agents, answer_links, approvals, login, modes, schedules, servers, sessions, skills
from backend.api.routes import settings as settings_api
from backend.api.routes import model_settings as model_settings_api
from backend.api.routes import approval_files as approval_files_api
from backend.api.routes import webpush as webpush_api
from backend.api.routes import workflows as workflows_api
from backend.api.routes import checkpoints as checkpoints_api
from backend.api.routes import session_steps, spend, standing
from backend.api.routes import workspace_trust as workspace_trust_api
from backend.api.routes import workspaces as workspaces_api
from backend.api.routes import managed_policy as managed_policy_api
from backend.api.ws import router as ws_router
from backend.config import Settings
from backend.domain.errors import BadRequest, Conflict, DomainError, Forbidden, Invalid, NotFound, StorageUnavailable
from backend.app.host import Host
from backend.channels import attach as attach_channels
from backend.gateway.http import GatewayHttp, mcp_route
from backend.mcp.config import HostApi

WEB_DIST = Path(__file__).resolve().parents[2] / "web" / "dist"


def build_authenticator(settings: Settings) -> Authenticator:
    return Authenticator(
        data_dir=settings.data_dir.expanduser(),
        token=settings.token.get_secret_value() if settings.token else None,
        users=[UserConfig.model_validate(u) for u in settings.users],
    )


def create_app(
    settings: Settings,
    *,
    host: Host | None = None,
    web_dist: Path = WEB_DIST,
    url: str | None = None,
    expose_tools: bool | None = None,
) -> FastAPI:
    """The app; the host starts with it (the MCP pool warms up in the background).

    `url` is where the app will listen; built-in servers that call the host back (cron,
    invoke_agent) are told it, with the token. `expose_tools`: the MCP gateway at `/mcp` also
    re-exports the host's tools (through the gate); None: `expose_tools` in the settings.
    """
    auth = build_authenticator(settings)
    host = host or Host(settings, host_api=HostApi(url=url, token=auth.token) if url else None)
    services = host.app_services  # from here on, the app knows the services, not the Host
    attach_channels(services)  # the configured channels: the host starts and stops them
    exposed = settings.expose_tools if expose_tools is None else expose_tools
    gateway = GatewayHttp(services, auth, bind_host=settings.host, expose_tools=exposed)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await services.lifecycle.start()
        try:
            async with gateway.run():
                yield
        finally:
            await services.lifecycle.aclose()

    app = FastAPI(title="Overseer", version="0.1.0", lifespan=lifespan)
    app.state.host = host  # for tests and the CLI's banner; no route reads it
    app.state.services = services
    app.state.auth = auth
    app.state.login_throttle = LoginThrottle()
    app.state.replay_rate = ReplayRate()  # WebSocket replays per client (ws.py)
    app.add_middleware(OriginCheck, allowed_origins=settings.cors_origins)  # cookie writes: this site's only
    app.add_middleware(AuthFirst, auth=auth)  # the credential, before any body is read (inside CORS)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_credentials=True,
            allow_methods=["*"],
            allow_headers=["*"],
        )
    app.add_middleware(BodyLimit)  # added last, so outermost: before authentication reads anything
    routers = (login, sessions, approvals, answer_links, settings_api, servers, oauth_api, agents, schedules, modes, skills, workflows_api, webpush_api)
    for module in routers:
        app.include_router(module.router)
    app.include_router(model_settings_api.router)
    app.include_router(approval_files_api.router)
    app.include_router(session_steps.router)
    app.include_router(checkpoints_api.router)
    app.include_router(standing.router)
    app.include_router(spend.router)
    app.include_router(workspace_trust_api.router)
    app.include_router(workspaces_api.router)
    app.include_router(managed_policy_api.router)
    app.include_router(ws_router)
    app.router.routes.append(mcp_route(gateway))
    app.state.gateway = gateway
    _add_error_handlers(app)
    _serve_dashboard(app, web_dist)
    _document_errors_as_sent(app)
    return app


def _document_errors_as_sent(app: FastAPI) -> None:
    """The OpenAPI document describes errors as they are sent: `{"detail": "<what went wrong>"}`.

    FastAPI declares its own 422 shape (an array of error objects), which our handler replaces with
    one readable string, like every other error here; the document must not promise otherwise. And
    FastAPI documents no other error at all, while every route may refuse (401 without a valid
    credential, 403, 404, 409, 400, 413, 429): each operation declares the 4XX range, same body.
    """
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            schemas = schema.setdefault("components", {}).setdefault("schemas", {})
            if "HTTPValidationError" in schemas:
                schemas["HTTPValidationError"] = ERROR_BODY_SCHEMA | {"title": "HTTPValidationError"}
                schemas.pop("ValidationError", None)
            schemas["ErrorBody"] = ERROR_BODY_SCHEMA | {"title": "ErrorBody"}
            refusal = {
                "description": "Refused; `detail` says why",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
            }
            for operations in schema.get("paths", {}).values():
                for operation in operations.values():
                    operation.setdefault("responses", {}).setdefault("4XX", refusal)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


ERROR_BODY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"detail": {"type": "string", "title": "Detail"}},
    "required": ["detail"],
}


def _error(code: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=code)


# Each kind of domain error and the status it means; the message is always the exception's own
# text. A subclass takes its kind's status (the most derived entry wins: Invalid before
# BadRequest). Nothing else is mapped: any other exception, a bare ValueError included, is a bug
# and a 500.
ERROR_STATUS: dict[type[DomainError], int] = {
    NotFound: status.HTTP_404_NOT_FOUND,
    Conflict: status.HTTP_409_CONFLICT,
    Forbidden: status.HTTP_403_FORBIDDEN,
    BadRequest: status.HTTP_400_BAD_REQUEST,
    Invalid: status.HTTP_422_UNPROCESSABLE_CONTENT,
    StorageUnavailable: status.HTTP_503_SERVICE_UNAVAILABLE,  # nothing can be saved now: says why
}


def _add_error_handlers(app: FastAPI) -> None:
    for exc_type, code in ERROR_STATUS.items():

        async def handler(_: Request, exc: Exception, code: int = code) -> JSONResponse:
            return _error(code, str(exc))

        app.add_exception_handler(exc_type, handler)

    app.add_exception_handler(StarletteHTTPException, http_error)  # 405: every method of the path

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        return _error(status.HTTP_422_UNPROCESSABLE_CONTENT, "; ".join(problems))


NEVER_THE_DASHBOARD = ("api/", "ws", ".well-known/", "mcp/")
"""Paths a program asks for (the API, OAuth discovery, MCP): a JSON 404 when nothing serves them,
never the dashboard's HTML, which a client parsing JSON fails on ("Unrecognized token '<'")."""


def _serve_dashboard(app: FastAPI, web_dist: Path) -> None:
    """The built dashboard at `/`, with client-side routes falling back to index.html."""

    @app.get("/{path:path}", include_in_schema=False, response_model=None)
    async def dashboard(path: str, request: Request) -> FileResponse | JSONResponse:
        if path in ("api", ".well-known") or path.startswith(NEVER_THE_DASHBOARD):
            # A path another route takes with other methods is a 405 naming them, not a 404.
            methods = allowed_methods(app.router.routes, request.scope, skip=app.state.dashboard_route)
            if methods:
                return method_not_allowed(request.method, request.url.path, methods)
            return _error(status.HTTP_404_NOT_FOUND, f"no route /{path}")
        index = web_dist / "index.html"
        if not index.is_file():
            return _error(
                status.HTTP_404_NOT_FOUND, "the dashboard is not built: run `make run` (or npm run build in web/)"
            )
        candidate = (web_dist / path).resolve()
        if path and candidate.is_file() and candidate.is_relative_to(web_dist.resolve()):
            return FileResponse(candidate)
        return FileResponse(index)

    app.state.dashboard_route = app.router.routes[-1]  # the catch-all just added
