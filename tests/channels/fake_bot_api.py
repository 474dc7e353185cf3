"""A local Telegram Bot API server for tests: the methods the channel calls, and a person's thumb.

It speaks the Bot API's HTTP shape (`/bot<token>/<method>`, `{"ok": true, "result": ...}`,
form or JSON parameters, files under `/file/bot<token>/<path>`) on 127.0.0.1. A test makes a
person write (`send_text`, `send_photo`, `send_document`) or press a button (`press`), and reads
what the bot did from `calls`, waiting with `wait_for` (bounded, never a sleep).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TOKEN = "123456:TEST-token-for-the-fake-bot-api-server"
BOT_ID = 123456


@dataclass(kw_only=True)
class Call:
    """One Bot API request the bot made."""

    method: str
    params: dict[str, Any]


@dataclass(kw_only=True)
class FakeBotApi:
    """The server; `async with FakeBotApi() as api:` runs it on a free port."""

    token: str = TOKEN
    calls: list[Call] = field(default_factory=list)
    messages: dict[int, dict[str, Any]] = field(default_factory=dict)
    """message id -> the bot's message as it stands (text and keyboard after edits)."""
    files: dict[str, bytes] = field(default_factory=dict)
    refused_tokens: int = 0
    drop: dict[str, int] = field(default_factory=dict)
    """method -> how many of its next requests lose their connection, unanswered (and unrecorded)."""
    dropped: list[Call] = field(default_factory=list)
    _updates: list[dict[str, Any]] = field(default_factory=list)
    _next_update: int = 1
    _next_message: int = 1000
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _runner: web.AppRunner | None = None
    _closing: bool = False
    port: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> FakeBotApi:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._method)
        app.router.add_get("/file/bot{token}/{path:.*}", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        # A long poll still open (its client is gone) ends now: the server's shutdown waits for it.
        async with self._changed:
            self._closing = True
            self._changed.notify_all()
        await self._runner.cleanup()

    # what a person does

    async def send_text(self, user_id: int, text: str) -> int:
        return await self._push({"message": self._user_message(user_id, text=text)})

    async def send_photo(self, user_id: int, data: bytes, caption: str = "") -> int:
        file_id = f"photo-{len(self.files)}"
        self.files[file_id] = data
        sizes = [{"file_id": file_id, "file_unique_id": f"u{file_id}", "width": 64, "height": 64, "file_size": len(data)}]
        return await self._push({"message": self._user_message(user_id, caption=caption, photo=sizes)})

    async def send_document(self, user_id: int, name: str, data: bytes, mime: str, caption: str = "") -> int:
        file_id = f"doc-{len(self.files)}"
        self.files[file_id] = data
        doc = {"file_id": file_id, "file_unique_id": f"u{file_id}", "file_name": name, "mime_type": mime,
               "file_size": len(data)}
        return await self._push({"message": self._user_message(user_id, caption=caption, document=doc)})

    async def press(self, user_id: int, message_id: int, data: str) -> str:
        """Press a button of one of the bot's messages; the callback query's id."""
        query_id = f"q{self._next_update}"
        message = self.messages[message_id]
        await self._push(
            {
                "callback_query": {
                    "id": query_id,
                    "from": _user(user_id),
                    "chat_instance": "ci",
                    "data": data,
                    "message": {
                        "message_id": message_id,
                        "date": int(time.time()),
                        "chat": {"id": message["chat_id"], "type": "private"},
                        "text": message["text"],
                    },
                }
            }
        )
        return query_id

    # what the bot did

    async def wait_for(self, method: str, where: Callable[[dict[str, Any]], bool] = lambda p: True,
                       *, timeout: float = 30, after: int = 0) -> Call:
        """The first call of `method` (or `a|b`) from index `after` whose params satisfy `where`."""
        async with asyncio.timeout(timeout):
            async with self._changed:
                while True:
                    for call in self.calls[after:]:
                        if call.method in method.split("|") and where(call.params):
                            return call
                    await self._changed.wait()

    async def wait_for_text(self, chat_id: int, fragment: str, *, timeout: float = 30) -> dict[str, Any]:
        """The bot's message in `chat_id` once its text (sent or edited into it) contains `fragment`."""
        call = await self.wait_for(
            "sendMessage|editMessageText",
            lambda p: fragment in p["text"] and int(p.get("chat_id", 0)) == chat_id,
            timeout=timeout,
        )
        return self.messages[int(call.params["message_id"])] if "message_id" in call.params else call.params

    def called(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def card_for(self, approval_id: str) -> dict[str, Any] | None:
        """The bot's message whose buttons answer `approval_id`."""
        for message in self.messages.values():
            for row in (message.get("reply_markup") or {}).get("inline_keyboard", []):
                if any(b.get("callback_data", "").endswith(approval_id) for b in row):
                    return message
        return None

    # the server

    async def _push(self, update: dict[str, Any]) -> int:
        async with self._changed:
            update["update_id"] = self._next_update
            self._next_update += 1
            self._updates.append(update)
            self._changed.notify_all()
        return update["update_id"]

    def _user_message(self, user_id: int, **fields: Any) -> dict[str, Any]:
        self._next_message += 1
        body = {"message_id": self._next_message, "date": int(time.time()),
                "chat": {"id": user_id, "type": "private"}, "from": _user(user_id)}
        return body | {k: v for k, v in fields.items() if v}

    async def _method(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            self.refused_tokens += 1
            return web.json_response({"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401)
        method = request.match_info["method"]
        params = await _params(request)
        if method == "getUpdates":
            return _ok(await self._get_updates(params))
        if self.drop.get(method):
            self.drop[method] -= 1
            self.dropped.append(Call(method=method, params=params))
            assert request.transport is not None
            request.transport.abort()  # the connection drops before any response
            return web.Response()  # never sent
        async with self._changed:
            self.calls.append(Call(method=method, params=params))
            result = self._result(method, params)
            self._changed.notify_all()
        return _ok(result)

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        async with self._changed:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]  # confirmed ones go
            self.calls.append(Call(method="getUpdates", params=params))
            self._changed.notify_all()
            try:
                async with asyncio.timeout(timeout):
                    await self._changed.wait_for(lambda: bool(self._updates) or self._closing)
            except TimeoutError:
                pass
            return list(self._updates)

    def _result(self, method: str, params: dict[str, Any]) -> Any:
        if method == "getMe":
            return {"id": BOT_ID, "is_bot": True, "first_name": "Overseer", "username": "overseer_test_bot"}
        if method == "sendMessage":
            self._next_message += 1
            message = {"message_id": self._next_message, "chat_id": int(params["chat_id"]), "text": params["text"],
                       "reply_markup": params.get("reply_markup")}
            self.messages[self._next_message] = message
            return _wire(message)
        if method == "editMessageText":
            message = self.messages[int(params["message_id"])]
            message.update(text=params["text"], reply_markup=params.get("reply_markup"))
            return _wire(message)
        if method == "getFile":
            data = self.files[params["file_id"]]
            return {"file_id": params["file_id"], "file_unique_id": "u" + params["file_id"],
                    "file_size": len(data), "file_path": f"files/{params['file_id']}"}
        return True  # answerCallbackQuery, sendChatAction, ...

    async def _file(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        file_id = request.match_info["path"].removeprefix("files/")
        return web.Response(body=self.files[file_id])


def _user(user_id: int) -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}


def _wire(message: dict[str, Any]) -> dict[str, Any]:
    wire = {"message_id": message["message_id"], "date": int(time.time()),
            "chat": {"id": message["chat_id"], "type": "private"}, "text": message["text"],
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "Overseer"}}
    if message.get("reply_markup"):
        wire["reply_markup"] = message["reply_markup"]
    return wire


def _ok(result: Any) -> web.Response:
    return web.json_response({"ok": True, "result": result})


async def _params(request: web.Request) -> dict[str, Any]:
    """Parameters as the Bot API reads them: JSON, form or multipart, with JSON-valued fields decoded."""
    if request.content_type == "application/json":
        raw = await request.json()
    else:
        raw = dict(await request.post()) | dict(request.query)
    params: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, str) and key in ("reply_markup", "allowed_updates"):
            value = json.loads(value)
        params[key] = value
    return params
