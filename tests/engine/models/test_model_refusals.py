"""A model that refuses (a wrong or missing key, a bad request, an unknown model) is asked once and
the session ends with one message naming the cause and the fix (issue 16), on both paths to a
model: the direct httpx path for `openai/*` and LiteLLM."""

from __future__ import annotations

import pytest

from backend.testing import Reply
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(params=["auto", "litellm"])
def transport(request: pytest.FixtureRequest) -> str:
    """How the host reaches the model: "auto" (the direct path for openai/*) or "litellm"."""
    return request.param


CAUSES = {
    401: "The model refused the API key (HTTP 401): set it in Settings → Model",
    403: "refused access to openai/scripted (HTTP 403)",
    400: "The model's server rejected the request (HTTP 400): check the model name and API base in Settings → Model",
    404: "The model openai/scripted was not found (HTTP 404): check the model name and API base in Settings → Model",
    422: "rejected the request (HTTP 422)",
}


@pytest.mark.parametrize("status", sorted(CAUSES))
async def test_a_refusal_is_not_retried_and_ends_in_one_message_with_cause_and_fix(tmp_path, transport, pool, status):
    refused = Reply(status=status, text="Incorrect API key provided")
    async with scripted_host(tmp_path, lambda r: refused, model_retries=3, pool=pool, model_transport=transport) as h:
        session = await h.run("hello")
        assert session.status == "error"
        # LiteLLM itself sends a 422'd request once more without the parameters it names.
        assert len(h.model.requests) == (2 if (transport, status) == ("litellm", 422) else 1)
        error = session.error or ""
        assert error.startswith("The model") and CAUSES[status] in error
        if status != 422:  # LiteLLM drops the body of a 422 (see model.py)
            assert "Incorrect API key provided" in error  # what the server said follows
        assert "litellm." not in error and "OpenAIException" not in error
        events = await h.host.store.list_events(session.id)
        assert not [e for e in events if e.type == "model.retry"]
        assert [e.data["message"] for e in events if e.type == "error"] == [error]


async def test_a_key_never_set_is_named_as_missing_and_not_retried(tmp_path, pool):
    # LiteLLM raises a missing OpenAI key as a "500" before any request: it was retried 4 times.
    async with scripted_host(tmp_path, [Reply(text="never")], api_key=None, model_retries=3, pool=pool, model_transport="litellm") as h:
        session = await h.run("hello")
        assert session.status == "error"
        assert (session.error or "").startswith("No API key is set for openai/scripted (HTTP 401): set it in Settings → Model")
        assert "HTTP 500" not in (session.error or "")
        events = await h.host.store.list_events(session.id)
        assert not [e for e in events if e.type == "model.retry"]


async def test_a_server_error_is_still_retried_and_keeps_its_general_message(tmp_path, transport, pool):
    async with scripted_host(tmp_path, lambda r: Reply(status=503), model_retries=1, pool=pool, model_transport=transport) as h:
        session = await h.run("hello")
        assert len(h.model.requests) == 2
        assert (session.error or "").startswith("The model could not answer.")


async def test_a_request_too_long_for_the_model_says_so_rather_than_blaming_the_settings(tmp_path, transport, pool):
    too_long = Reply(status=400, text="This model's maximum context length is 8192 tokens")
    async with scripted_host(tmp_path, lambda r: too_long, pool=pool, model_transport=transport) as h:
        session = await h.run("hello")
        assert (session.error or "").startswith("The conversation is too long for openai/scripted (HTTP 400): start a new session")
        assert len(h.model.requests) == 1
