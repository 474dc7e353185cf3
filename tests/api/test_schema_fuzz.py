"""Schemathesis fuzzes every operation of the REST API in-process: no 5xx, and every response is
one the OpenAPI document describes (status code, content type, headers, body schema).

The app runs through schemathesis' ASGI client, which drives its lifespan (the host starts with
the schema's loading and stops with the test) on schemathesis' own event-loop thread. So the app
is built here from the same parts as conftest's `api` fixture (scripted settings, `create_app`,
the app's token), not taken from that fixture, whose host lives on the test module's loop. And
one test walks the operations: the pytest plugin's per-operation tests would stop and restart
the host between operations, and its lazy `from_fixture` schema does not run under pytest 9.2.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import APIOperation, BaseSchema, Case, GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.errors import FailureGroup
from schemathesis.python.asgi import shutdown_lifespans

from backend.api.app import create_app
from backend.testing import ScriptedModelServer
from backend.testing.harness import only_servers, scripted_settings

MAX_EXAMPLES = 60 if os.environ.get("OVERSEER_SOAK_EXAMPLES") else 25
"""Per operation and generation mode: about half a minute for the whole API on an idle machine;
`make soak` takes 60."""

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
"""Not `positive_data_acceptance`: a body the schema allows may still be refused with a 400 naming
a rule no JSON schema states (a cron expression, a mode's tool pattern)."""

FUZZ_SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,  # the same examples on every run: reproducible, never flaky
    database=None,  # nothing written into the checkout
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[FastAPI]:
    with ScriptedModelServer() as model:
        # Only the file server: /api/servers lists a real server and its tools, and starting is quick.
        app = create_app(
            scripted_settings(tmp_path, model, mcp_servers=only_servers("file")), web_dist=tmp_path / "no-dashboard"
        )
        try:
            yield app
        finally:
            shutdown_lifespans()  # the host stops before the model server it talks to


@pytest.fixture
def api_schema(app: FastAPI) -> BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def _steer(case: Case) -> None:
    """Sessions run on the LiteLLM engine: a claude-sdk one spawns the Claude Code CLI (seconds per
    run, and /api/agents/invoke waits for the run's end: 10 s timeouts); that engine has its own tests."""
    if isinstance(case.body, dict) and case.body.get("engine") == "claude-sdk":
        case.body["engine"] = "litellm"


def _fuzz(operation: APIOperation, mode: GenerationMode, token: str) -> None:
    @FUZZ_SETTINGS
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Case) -> None:
        _steer(case)
        case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)

    run()


@pytest.mark.timeout(600)  # one test for every operation (~80): the suite's 120 s is for one behaviour
def test_every_operation_answers_as_documented_and_never_with_a_server_error(
    app: FastAPI, api_schema: BaseSchema
) -> None:
    failures: list[str] = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) > 40
    for operation in operations:
        for mode in GenerationMode:
            try:
                _fuzz(operation, mode, app.state.auth.token)
            except Unsatisfiable:
                # No input can be invalid: every parameter is a free string, or there are none.
                assert mode is GenerationMode.NEGATIVE, operation.label
            # A check's failure is an AssertionError, several at once a FailureGroup; anything else
            # is a fault of this test and propagates. Every operation's failures are reported.
            except (AssertionError, FailureGroup) as exc:
                failures.append(f"{operation.label} ({mode}): {exc}")
    assert not failures, "\n\n".join(failures)
