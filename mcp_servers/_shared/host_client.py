"""A small HTTP client of the Overseer host's API, for servers that call the host back.

The host gives the servers it launches its URL and token (OVERSEER_HOST_URL, OVERSEER_TOKEN);
standalone, they come from `--host-url` and the environment. Every failure becomes a ToolError
whose text tells the model (or the person reading it) what to do next.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers._shared.cli import TOKEN_ENV


class HostClient:
    """Calls `{url}/api/...` with the bearer token; one pooled connection set per server."""

    def __init__(self, url: str | None, token: str | None = None, *, server: str) -> None:
        self.url = url.rstrip("/") if url else None
        self.token = token if token is not None else os.environ.get(TOKEN_ENV)
        self.server = server
        self._client: httpx.AsyncClient | None = None

    async def request(
        self, method: str, path: str, *, json: dict[str, Any] | None = None, timeout: float | None = 30.0
    ) -> Any:
        """Send one request; return the decoded JSON body (None for 204)."""
        if not self.url:
            raise ToolError(
                f"the {self.server} server is not connected to an Overseer host: run it inside "
                "`overseer serve`, or pass --host-url and set OVERSEER_TOKEN"
            )
        if self._client is None:
            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            self._client = httpx.AsyncClient(base_url=self.url, headers=headers)
        try:
            response = await self._client.request(method, path, json=json, timeout=timeout)
        except httpx.TimeoutException as exc:
            raise ToolError(f"the Overseer host at {self.url} did not answer {method} {path} in time") from exc
        except httpx.HTTPError as exc:
            raise ToolError(
                f"cannot reach the Overseer host at {self.url} ({type(exc).__name__}: {exc}); "
                "is `overseer serve` running?"
            ) from exc
        if response.status_code == 401:
            raise ToolError(
                f"the Overseer host at {self.url} refused the credentials (401): "
                "set OVERSEER_TOKEN to the host's token or an API key"
            )
        if response.status_code >= 400:
            raise ToolError(f"the Overseer host refused {method} {path} ({response.status_code}): {_detail(response)}")
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:500] or response.reason_phrase
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])
    return str(body)[:500]
