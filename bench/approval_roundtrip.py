"""Approval latency through the real server: request -> WebSocket client, decision POST -> tool start.

One session asks N times (a scripted model writing N files under the default `ask` policy). A
WebSocket client receives each `approval.requested` and answers it over REST. Timestamps are
the server's own (`created_at` of the approval and of the `tool.started` event) against the
client's clock on the same machine. Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
from _common import percentiles  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

from backend.testing import ModelRequest, Reply, ScriptedToolCall  # noqa: E402
from backend.testing.web import serve_scripted  # noqa: E402


def writer(count: int):  # noqa: ANN201
    def next_turn(request: ModelRequest) -> Reply:
        done = len(request.tool_results())
        if done < count:
            return Reply(
                tool_calls=[
                    ScriptedToolCall(name="mcp__file__write_file", arguments={"path": f"f{done}.txt", "content": "x"})
                ]
            )
        return Reply(text="all written")

    return next_turn


def parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def ms_between(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds() * 1000


async def measure(url: str, token: str, count: int) -> tuple[list[float], list[float]]:
    to_client, to_tool = [], []
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(base_url=url, headers=headers) as http,
        connect(url.replace("http", "ws") + f"/ws?token={token}") as ws,
    ):
        await ws.send(json.dumps({"type": "subscribe", "session_id": None}))
        await http.post("/api/sessions", json={"prompt": "write the files"})
        posted_at: dict[str, datetime] = {}
        while len(to_tool) < count:
            event = json.loads(await asyncio.wait_for(ws.recv(), 30))
            kind = event.get("type")
            if kind == "approval.requested":
                received = datetime.now(timezone.utc)
                approval = event["data"]
                to_client.append(ms_between(parse(approval["created_at"]), received))
                posted_at[approval["tool_call_id"]] = datetime.now(timezone.utc)
                response = await http.post(f"/api/approvals/{approval['id']}", json={"decision": "allow_once"})
                response.raise_for_status()
            elif kind == "tool.started":
                started = parse(event["created_at"])
                to_tool.append(ms_between(posted_at.pop(event["data"]["id"]), started))
    return to_client, to_tool


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with serve_scripted(Path(tmp), writer(args.n), max_iterations=args.n + 5) as server:
            to_client, to_tool = asyncio.run(measure(server.url, server.token, args.n))
    print(
        json.dumps(
            {
                "benchmark": "approval_roundtrip",
                "approvals": args.n,
                "request_to_websocket_client": percentiles(to_client),
                "decision_post_to_tool_start": percentiles(to_tool),
                "target_p50_ms": 5.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
