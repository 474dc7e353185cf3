"""Run the MCP conformance suite's server side against a real `overseer serve` (`make conformance`).

Usage: conformance_server.py NODE CONFORMANCE_JS RESULTS_DIR [extra `conformance server` arguments]

Starts `overseer serve` on a free loopback port with a throwaway data dir and token, and the suite
against its `/mcp` gateway. The suite's server mode sends no credentials and `/mcp` refuses a request
without one (401), so the suite talks to a loopback proxy here that adds the host's bearer token
and passes everything else through unchanged (Host and Origin too, so the DNS-rebinding check still
reaches Overseer's own transport security). Exit code: the suite's.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import uvicorn
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 180.0  # a loaded 2-core machine can take a minute to import and start the host
# Hop-by-hop headers a proxy must not forward (RFC 9110 §7.6.1), plus the length httpx recomputes.
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TokenProxy:
    """An ASGI app forwarding every request to `upstream`, with `Authorization: Bearer <token>` added."""

    def __init__(self, upstream: str, token: str) -> None:
        self.upstream = upstream
        self.token = token
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=10.0))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_HEADERS]
        headers = [(k, v) for k, v in headers if k.lower() != "authorization"]
        headers.append(("authorization", f"Bearer {self.token}"))
        body = await request.body()
        url = self.upstream + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        upstream = await self.client.send(
            self.client.build_request(request.method, url, headers=headers, content=body), stream=True
        )
        out_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_HEADERS}

        async def stream():
            try:
                async for chunk in upstream.aiter_raw():
                    yield chunk
            finally:
                await upstream.aclose()

        response = StreamingResponse(stream(), status_code=upstream.status_code, headers=out_headers)
        await response(scope, receive, send)


async def wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    """Poll `/api/health` until the host answers, bounded; fail if the host exits first."""
    async with httpx.AsyncClient() as client:
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT_S
        while asyncio.get_running_loop().time() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"overseer serve exited with {process.returncode} before it was up")
            try:
                if (await client.get(f"{url}/api/health")).status_code < 500:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.25)
    raise SystemExit(f"overseer serve was not up within {START_TIMEOUT_S:.0f} s")


async def main(node: str, conformance_js: str, results: str, extra: list[str]) -> int:
    token = secrets.token_urlsafe(24)
    host_port, proxy_port = free_port(), free_port()
    with tempfile.TemporaryDirectory(prefix="overseer-conformance-") as home:
        config = Path(home) / "overseer.yaml"
        config.write_text("mcpServers: {}\n")
        env = {
            **os.environ,
            "OVERSEER_DATA_DIR": home,
            "OVERSEER_CONFIG": str(config),
            "OVERSEER_TOKEN": token,
            "OVERSEER_HOST": "127.0.0.1",
            "OVERSEER_PORT": str(host_port),
        }
        log = open(Path(home) / "serve.log", "wb")
        host = subprocess.Popen(
            [str(ROOT / ".venv/bin/overseer"), "serve"], cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        proxy = TokenProxy(f"http://127.0.0.1:{host_port}", token)
        server = uvicorn.Server(uvicorn.Config(proxy, host="127.0.0.1", port=proxy_port, log_level="warning"))
        serving = asyncio.create_task(server.serve())
        try:
            await wait_until_up(f"http://127.0.0.1:{host_port}", host)
            suite = await asyncio.create_subprocess_exec(
                node, conformance_js, "server", "--url", f"http://127.0.0.1:{proxy_port}/mcp",
                "--output-dir", results, *extra,
            )
            return await suite.wait()
        finally:
            server.should_exit = True
            await serving
            await proxy.client.aclose()
            host.send_signal(signal.SIGINT)
            try:
                host.wait(timeout=20)
            except subprocess.TimeoutExpired:
                host.kill()
                host.wait()
            log.close()
            if os.environ.get("CONFORMANCE_SHOW_HOST_LOG"):
                sys.stderr.write((Path(home) / "serve.log").read_text(errors="replace"))


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])))
