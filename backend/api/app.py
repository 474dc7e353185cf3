"""The FastAPI application: REST routers, the WebSocket, the dashboard, and the engine in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse

from backend.auth import Authenticator, UserConfig
from backend.api.throttle import LoginThrottle
from backend.api.routes import agents, approvals, login, modes, schedules, sessions, skills
from backend.api.routes import settings as settings_api
from backend.api.routes import workflows as workflows_api
from backend.api.ws import router as ws_router
from backend.config import ConfigError, Settings
from backend.domain.errors import Conflict, Forbidden, Invalid
from backend.app.host import Host
from backend.engine.runner import SessionBusy
from backend.gateway.http import GatewayHttp, mcp_route
from backend.mcp.config import HostApi
from backend.permissions.approvals import ApprovalClosed, ApprovalNotFound
from backend.permissions.rules import RuleError
from backend.store.base import NotFound

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
    exposed = settings.expose_tools if expose_tools is None else expose_tools
    gateway = GatewayHttp(host, auth, bind_host=settings.host, expose_tools=exposed)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await host.start()
        try:
            async with gateway.run():
                yield
        finally:
            await host.aclose()

    app = FastAPI(title="Overseer", version="0.1.0", lifespan=lifespan)
    app.state.host = host
    app.state.auth = auth
    app.state.login_throttle = LoginThrottle()
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_credentials=True,
            allow_methods=["*"],
            allow_headers=["*"],
        )
    for module in (login, sessions, approvals, settings_api, agents, schedules, modes, skills, workflows_api):
        app.include_router(module.router)
    app.include_router(ws_router)
    app.router.routes.append(mcp_route(gateway))
    app.state.gateway = gateway
    _add_error_handlers(app)
    _serve_dashboard(app, web_dist)
    return app


def _error(code: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=code)


# Domain errors and the status they mean; the message is always the exception's own text.
ERROR_STATUS: dict[type[Exception], int] = {
    NotFound: status.HTTP_404_NOT_FOUND,
    Forbidden: status.HTTP_403_FORBIDDEN,
    Invalid: status.HTTP_422_UNPROCESSABLE_CONTENT,
    Conflict: status.HTTP_409_CONFLICT,
    ApprovalNotFound: status.HTTP_404_NOT_FOUND,
    ApprovalClosed: status.HTTP_409_CONFLICT,
    SessionBusy: status.HTTP_409_CONFLICT,
    RuleError: status.HTTP_422_UNPROCESSABLE_CONTENT,
    ConfigError: status.HTTP_422_UNPROCESSABLE_CONTENT,
    ValueError: status.HTTP_400_BAD_REQUEST,
}


def _add_error_handlers(app: FastAPI) -> None:
    for exc_type, code in ERROR_STATUS.items():

        async def handler(_: Request, exc: Exception, code: int = code) -> JSONResponse:
            # A KeyError's str() is its repr; every other exception's text is its message.
            message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
            return _error(code, message)

        app.add_exception_handler(exc_type, handler)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        return _error(status.HTTP_422_UNPROCESSABLE_CONTENT, "; ".join(problems))


def _serve_dashboard(app: FastAPI, web_dist: Path) -> None:
    """The built dashboard at `/`, with client-side routes falling back to index.html."""

    @app.get("/{path:path}", include_in_schema=False, response_model=None)
    async def dashboard(path: str) -> FileResponse | JSONResponse:
        if path.startswith(("api/", "ws")):
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
