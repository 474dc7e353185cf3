"""A prompt, tool or resource the gateway does not have is the caller's mistake (issue 35, item 10).

The spec makes each an invalid-params error (-32602) naming what was asked for; it is not an
internal error (-32603), and the server logs it without a traceback or an ERROR record. Run
with the SDK's real `Client`, in both protocol eras.
"""

from __future__ import annotations

import logging

import anyio
import mcp_types as wire
import pytest
from gateway_testkit import BOUND
from mcp import Client
from mcp.shared.exceptions import MCPError

from backend.gateway import Gateway, build_server
from backend.testing.harness import scripted_host

ERAS = ["legacy", "auto"]

pytestmark = pytest.mark.asyncio(loop_scope="module")


def no_error_records(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What was logged at ERROR or with a traceback: nothing, for a caller's mistake."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("mode", ERAS)
async def test_an_unknown_prompt_is_invalid_params_logged_without_a_traceback(tmp_path, mode, pool, caplog):
    caplog.set_level(logging.DEBUG)
    async with scripted_host(tmp_path, [], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode=mode) as client:
            with anyio.fail_after(BOUND), pytest.raises(MCPError) as raised:
                await client.get_prompt("no-such-prompt")
    assert raised.value.error.code == wire.INVALID_PARAMS
    assert "no-such-prompt" in raised.value.error.message
    assert no_error_records(caplog) == []


@pytest.mark.parametrize("mode", ERAS)
async def test_an_unknown_tool_is_invalid_params_logged_without_a_traceback(tmp_path, mode, pool, caplog):
    caplog.set_level(logging.DEBUG)
    async with scripted_host(tmp_path, [], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode=mode) as client:
            with anyio.fail_after(BOUND), pytest.raises(MCPError) as raised:
                await client.call_tool("no_such_tool", {})
            known = await client.call_tool("list_sessions", {})
    assert raised.value.error.code == wire.INVALID_PARAMS
    assert "no_such_tool" in raised.value.error.message
    assert known.is_error is False  # a known tool still answers
    assert no_error_records(caplog) == []


@pytest.mark.parametrize("mode", ERAS)
async def test_an_unknown_resource_is_invalid_params_logged_without_a_traceback(tmp_path, mode, pool, caplog):
    caplog.set_level(logging.DEBUG)
    async with scripted_host(tmp_path, [], pool=pool) as h:
        async with Client(build_server(Gateway(h.host.app_services)), mode=mode) as client:
            with anyio.fail_after(BOUND), pytest.raises(MCPError) as raised:
                await client.read_resource("overseer://no-such-thing")
    assert raised.value.error.code == wire.INVALID_PARAMS
    assert no_error_records(caplog) == []
