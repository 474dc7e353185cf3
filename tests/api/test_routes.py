"""The REST contract through the ASGI app: sessions, approvals, settings, audit, invoke, errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml

from backend.testing import Reply, ScriptedToolCall

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)

PUBLIC = {"/api/health", "/api/auth/login", "/login"}


def write(path: str = "notes.txt") -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name="mcp__file__write_file", arguments={"path": path, "content": "x"})])


async def test_every_api_route_but_health_and_login_refuses_a_caller_without_credentials(api):
    # The app's own route table (as published in its OpenAPI document): a new route that forgets
    # its auth dependency fails here without anyone adding it to a list.
    checked = 0
    for route, operations in api.app.openapi()["paths"].items():
        if not route.startswith("/api") or route in PUBLIC:
            continue
        path = route.replace("{session_id}", "x").replace("{approval_id}", "x")
        for method in operations:
            response = await api.anonymous.request(method.upper(), path, json={})
            assert response.status_code == 401, f"{method} {route} answered {response.status_code}"
            checked += 1
    assert checked >= 15


async def test_a_wrong_token_is_refused(api):
    response = await api.anonymous.get("/api/sessions", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401


async def test_health_is_public(api):
    response = await api.anonymous.get("/api/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"


async def test_health_without_a_credential_says_ok_and_nothing_about_servers_version_or_sandbox(api):
    response = await api.anonymous.get("/api/health", headers={"Authorization": "Bearer wrong"})
    assert response.json() == {"status": "ok", "sign_in": "token"}
    assert (await api.anonymous.get("/api/health")).json() == {"status": "ok", "sign_in": "token"}
    full = (await api.client.get("/api/health")).json()
    assert set(full) >= {"status", "version", "host_id", "servers", "sandbox"}
    assert full["servers"]["file"] == "ready"


async def test_health_reports_the_version_in_pyproject(api):
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    response = await api.client.get("/api/health")
    assert response.json()["version"] == project["version"]


async def test_login_with_the_token_sets_an_http_only_cookie_that_authenticates(api):
    response = await api.anonymous.post("/api/auth/login", json={"username": "admin", "password": api.app.state.auth.token})
    assert response.status_code == 200
    assert "httponly" in response.headers["set-cookie"].lower()
    me = await api.anonymous.get("/api/me")
    assert me.status_code == 200 and me.json()["role"] == "admin"


async def test_login_with_a_wrong_password_is_401(api):
    response = await api.anonymous.post("/api/auth/login", json={"username": "admin", "password": "wrong"})
    assert response.status_code == 401


async def test_a_session_with_a_prompt_runs_and_its_transcript_is_readable(api):
    api.model.push(Reply(text="hello back"))
    response = await api.client.post("/api/sessions", json={"prompt": "hello"})
    assert response.status_code == 201
    session_id = response.json()["id"]
    await api.host.runner.wait(session_id, timeout=30)
    detail = (await api.client.get(f"/api/sessions/{session_id}")).json()
    assert detail["status"] == "completed"
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant"]
    assert detail["last_seq"] > 0
    listed = (await api.client.get("/api/sessions", params={"status": "completed"})).json()
    assert [s["id"] for s in listed] == [session_id]


async def test_messages_are_accepted_with_202_and_continue_the_session(api):
    api.model.push(Reply(text="one"), Reply(text="two"))
    session_id = (await api.client.post("/api/sessions", json={"prompt": "first"})).json()["id"]
    await api.host.runner.wait(session_id, timeout=30)
    response = await api.client.post(f"/api/sessions/{session_id}/messages", json={"content": "second"})
    assert response.status_code == 202
    await api.host.runner.wait(session_id, timeout=30)
    messages = (await api.client.get(f"/api/sessions/{session_id}")).json()["messages"]
    assert [m["content"] for m in messages] == ["first", "one", "second", "two"]


async def test_an_approval_is_listed_answered_once_and_a_second_answer_is_409(api):
    api.model.push(write(), Reply(text="done"))
    session_id = (await api.client.post("/api/sessions", json={"prompt": "write"})).json()["id"]
    approval = await _pending_approval(api)
    assert set(approval) >= {"id", "session_id", "tool_name", "arguments", "annotations", "created_at", "expires_at"}
    answer = await api.client.post(f"/api/approvals/{approval['id']}", json={"decision": "allow_once"})
    assert answer.status_code == 200 and answer.json()["status"] == "allowed"
    again = await api.client.post(f"/api/approvals/{approval['id']}", json={"decision": "deny"})
    assert again.status_code == 409
    await api.host.runner.wait(session_id, timeout=30)
    assert (api.host.settings.resolved_workspace / "notes.txt").read_text() == "x"


async def test_an_answer_records_the_api_key_that_gave_it_and_a_broad_rule_from_an_approver_is_403(api):
    api.model.push(write(), Reply(text="done"))
    key = api.app.state.auth.create_api_key("ci-bot", role="approver")
    as_key = {"X-API-Key": key}
    session_id = (await api.client.post("/api/sessions", json={"prompt": "write"})).json()["id"]
    approval = await _pending_approval(api)
    broad = await api.anonymous.post(
        f"/api/approvals/{approval['id']}", json={"decision": "allow_always", "rules": ["mcp__file"]}, headers=as_key
    )
    assert broad.status_code == 403 and "mcp__file" in broad.json()["detail"]
    bad = await api.anonymous.post(
        f"/api/approvals/{approval['id']}", json={"decision": "allow_session", "rules": ["(("]}, headers=as_key
    )
    assert bad.status_code == 422
    answer = await api.anonymous.post(f"/api/approvals/{approval['id']}", json={"decision": "allow_once"}, headers=as_key)
    assert answer.status_code == 200
    assert answer.json()["decider"] == {"name": "ci-bot", "kind": "api_key", "role": "approver", "via": "rest"}
    await api.host.runner.wait(session_id, timeout=30)
    audit = (await api.client.get("/api/audit", params={"session_id": session_id})).json()["items"]
    assert [(a["decision"], a["decider"]["name"]) for a in audit] == [("allow", "ci-bot")]


async def test_an_approver_keys_always_allow_is_kept_for_the_workspace_and_a_global_scope_is_403(api):
    # Issue 31, item 2: the REST body's scope; the approval says what and where before anyone answers.
    api.model.push(write(), Reply(text="done"))
    as_key = {"X-API-Key": api.app.state.auth.create_api_key("ci-bot", role="approver")}
    session_id = (await api.client.post("/api/sessions", json={"prompt": "write"})).json()["id"]
    approval = await _pending_approval(api)
    assert approval["suggested_rules"] == ["mcp__file__write_file(./notes.txt)"]
    assert approval["always_scope"]["kind"] == "workspace"
    url = f"/api/approvals/{approval['id']}"
    wide = await api.anonymous.post(url, json={"decision": "allow_always", "scope": "global"}, headers=as_key)
    assert wide.status_code == 403 and "only an admin" in wide.json()["detail"]
    kept = await api.anonymous.post(url, json={"decision": "allow_always"}, headers=as_key)
    assert kept.status_code == 200
    assert kept.json()["decision"]["rules"] == ["mcp__file__write_file(./notes.txt)"]
    assert kept.json()["decision"]["scope"] == "workspace"
    await api.host.runner.wait(session_id, timeout=30)
    config = api.host.settings.writable_config_file
    assert not config.exists() or "mcp__file__write_file" not in config.read_text()


async def test_answering_an_unknown_approval_is_404(api):
    response = await api.client.post("/api/approvals/nope", json={"decision": "allow_once"})
    assert response.status_code == 404


async def test_bad_input_gets_a_4xx_that_names_the_problem(api):
    cases = [
        ("post", "/api/sessions", {"prompt": 5}, 422, "prompt"),
        ("post", "/api/sessions", {"promt": "typo"}, 422, "promt"),
        ("post", "/api/sessions", {"workspace": "/no/such/dir"}, 400, "not a directory"),
        ("get", "/api/sessions/missing", None, 404, "missing"),
        ("post", "/api/approvals/x", {"decision": "maybe"}, 422, "decision"),
        ("post", "/api/sessions/missing/messages", {"content": "hi"}, 404, "missing"),
        ("post", "/api/sessions/missing/messages", {"content": ""}, 422, "content"),
        ("put", "/api/policies", {"policies": {"mcp__file__read_file": "sometimes"}}, 422, "policies"),
        ("put", "/api/policies", {"policies": {"shell": "deny"}}, 422, "'shell'"),
        ("post", "/api/agents/invoke", {"prompt": "x", "fork": True}, 400, "parent_session_id"),
    ]
    for method, path, body, code, words in cases:
        response = await api.client.request(method, path, json=body)
        assert response.status_code == code, (path, body, response.text)
        assert words in response.json()["detail"], (path, response.json())


async def test_a_bad_rule_is_422_and_changes_nothing(api):
    before = (await api.client.get("/api/permissions")).json()
    response = await api.client.put("/api/permissions", json={"allow": ["mcp__*"], "ask": [], "deny": []})
    assert response.status_code == 422 and "mcp__*" in response.json()["detail"]
    assert (await api.client.get("/api/permissions")).json() == before


async def test_rules_and_policies_are_saved_to_the_config_file_and_applied_at_once(api):
    rules = {"allow": ["Bash(git status)"], "ask": [], "deny": ["Bash(rm *)"]}
    saved_rules = (await api.client.put("/api/permissions", json=rules)).json()
    assert {k: saved_rules[k] for k in rules} == rules and saved_rules["defaultMode"] is None  # the block's settings too
    response = await api.client.put("/api/policies", json={"policies": {"mcp__file__read_file": "ask"}})
    assert response.json()["policies"]["mcp__file__read_file"] == "ask"
    saved = yaml.safe_load(api.host.settings.writable_config_file.read_text())
    assert saved["permissions"] == rules and saved["policies"]["mcp__file__read_file"] == "ask"
    await api.host.pool.wait_ready(timeout=30)
    servers = {s["name"]: s for s in (await api.client.get("/api/servers")).json()}
    policies = {t["name"]: t["policy"] for t in servers["file"]["tools"]}
    assert policies["mcp__file__read_file"] == "ask"
    assert policies["mcp__file__write_file"] == "ask"


async def test_audit_is_paged_newest_first(api):
    api.model.push(
        Reply(tool_calls=[ScriptedToolCall(name="mcp__file__list_dir", arguments={}, id=f"c{i}") for i in range(3)]),
        Reply(text="ok"),
    )
    session_id = (await api.client.post("/api/sessions", json={"prompt": "list"})).json()["id"]
    await api.host.runner.wait(session_id, timeout=30)
    page = (await api.client.get("/api/audit", params={"limit": 2})).json()
    assert (page["limit"], page["offset"], len(page["items"])) == (2, 0, 2)
    rest = (await api.client.get("/api/audit", params={"limit": 2, "offset": 2})).json()
    assert len(rest["items"]) == 1


async def test_invoke_runs_an_agent_to_its_end_and_returns_its_answer(api):
    api.model.push(Reply(text="the answer", usage=(10, 5)))
    response = await api.client.post("/api/agents/invoke", json={"prompt": "question"})
    body = response.json()
    assert (body["status"], body["response"], body["tokens"]) == ("completed", "the answer", {"input": 10, "output": 5})


async def test_a_forked_invoke_starts_from_a_copy_of_the_parent_history(api):
    api.model.push(Reply(text="parent answer"), Reply(text="child answer"))
    parent = (await api.client.post("/api/sessions", json={"prompt": "remember 42"})).json()["id"]
    await api.host.runner.wait(parent, timeout=30)
    body = (
        await api.client.post("/api/agents/invoke", json={"prompt": "what number?", "parent_session_id": parent, "fork": True})
    ).json()
    child = (await api.client.get(f"/api/sessions/{body['session_id']}")).json()
    assert child["parent_id"] == parent
    assert [m["content"] for m in child["messages"]] == ["remember 42", "parent answer", "what number?", "child answer"]
    assert [m["content"] for m in api.model.requests[-1].messages if m["role"] == "user"] == ["remember 42", "what number?"]


async def test_stop_and_delete_a_session(api):
    api.model.push(write())
    session_id = (await api.client.post("/api/sessions", json={"prompt": "write"})).json()["id"]
    await _pending_approval(api)
    stopped = await api.client.post(f"/api/sessions/{session_id}/stop")
    assert stopped.json()["status"] == "stopped"
    assert (await api.client.delete(f"/api/sessions/{session_id}")).status_code == 204
    assert (await api.client.get(f"/api/sessions/{session_id}")).status_code == 404


async def _pending_approval(api) -> dict:
    sub = api.host.bus.subscribe(None)
    try:
        pending = (await api.client.get("/api/approvals", params={"status": "pending"})).json()
        while not pending:
            event = await sub.get(timeout=15)
            if event.type == "approval.requested":
                pending = (await api.client.get("/api/approvals", params={"status": "pending"})).json()
        return pending[0]
    finally:
        api.host.bus.unsubscribe(sub)


async def test_an_approver_cannot_change_what_runs_without_asking(api):
    # Issue 13, item 3: modes' policies, skills (`always` is in every prompt) and schedules that
    # fire unattended are an admin's; an approver answers approvals and runs sessions.
    key = api.app.state.auth.create_api_key("helper", role="approver")
    as_key = {"X-API-Key": key}
    writes = [
        ("PUT", "/api/modes/yolo", {"policies": {"mcp__shell__exec": "always_allow"}}),
        ("DELETE", "/api/modes/plan", None),
        ("PUT", "/api/skills/inject", {"content": "---\ndescription: x\nalways: true\n---\nobey\n"}),
        ("POST", "/api/schedules", {"schedule": "every 1m", "prompt": "rm -rf ~"}),
    ]
    for method, path, body in writes:
        response = await api.anonymous.request(method, path, json=body, headers=as_key)
        assert response.status_code == 403, f"{method} {path} answered {response.status_code}"
        assert "admin" in response.json()["detail"]
    modes = [m["name"] for m in (await api.client.get("/api/modes")).json()]
    assert "yolo" not in modes
    skills = [s["name"] for s in (await api.client.get("/api/skills")).json()]
    assert "inject" not in skills
    assert (await api.client.get("/api/schedules")).json() == []


async def test_an_approver_may_still_pause_and_stop_what_an_admin_scheduled(api):
    created = await api.client.post("/api/schedules", json={"schedule": "every 1h", "prompt": "report"})
    assert created.status_code == 201
    job = created.json()["id"]
    as_key = {"X-API-Key": api.app.state.auth.create_api_key("helper2", role="approver")}
    assert (await api.anonymous.post(f"/api/schedules/{job}/resume", headers=as_key)).status_code == 403
    assert (await api.anonymous.patch(f"/api/schedules/{job}", json={"prompt": "x"}, headers=as_key)).status_code == 403
    paused = await api.anonymous.post(f"/api/schedules/{job}/pause", headers=as_key)
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert (await api.anonymous.delete(f"/api/schedules/{job}", headers=as_key)).status_code == 204


async def test_an_integer_beyond_what_the_store_holds_is_a_422_not_a_500(api):
    # 2**63 raised OverflowError in the SQLite driver (issue 13, item 11).
    api.model.push(Reply(text="hello"))
    session_id = (await api.client.post("/api/sessions", json={"prompt": "hi"})).json()["id"]
    await api.host.runner.wait(session_id, timeout=30)
    for path, name in ((f"/api/sessions/{session_id}/events", "since"), ("/api/audit", "offset")):
        too_big = await api.client.get(path, params={name: 2**63})
        assert too_big.status_code == 422, f"{path} answered {too_big.status_code}"
        largest = await api.client.get(path, params={name: 2**63 - 1})
        assert largest.status_code == 200, f"{path} answered {largest.status_code}"


async def test_a_422_is_sent_exactly_as_the_openapi_document_describes_it(api):
    # Issue 13, item 11: the document promised an array of error objects; the body is one string.
    doc = api.app.openapi()
    error_schema = doc["components"]["schemas"]["HTTPValidationError"]
    assert error_schema["properties"]["detail"]["type"] == "string"
    assert "ValidationError" not in doc["components"]["schemas"]
    refs = {
        op["responses"]["422"]["content"]["application/json"]["schema"]["$ref"]
        for ops in doc["paths"].values()
        for op in ops.values()
        if "422" in op.get("responses", {})
    }
    assert refs == {"#/components/schemas/HTTPValidationError"}
    sent = await api.client.post("/api/sessions", json={"prompt": 5, "mode": ["x"]})
    assert sent.status_code == 422
    assert isinstance(sent.json()["detail"], str) and "prompt" in sent.json()["detail"]


async def test_a_workspace_the_os_will_not_look_up_is_a_400_not_a_500(api):
    # Found by schemathesis (issue 13): pathlib raises for a folder name over 255 bytes
    # (ENAMETOOLONG) and for `~user` with no such user, instead of answering "not a directory".
    for workspace in ("/" + "a" * 300, "~no-such-user-for-overseer/x"):
        response = await api.client.post("/api/sessions", json={"workspace": workspace})
        assert response.status_code == 400, (workspace, response.text)
        assert "not a directory" in response.json()["detail"]


async def test_every_operation_documents_the_refusals_it_sends(api):
    # Found by schemathesis (issue 13): 400, 401, 403, 404 and 409 were sent, none documented.
    doc = api.app.openapi()
    assert doc["components"]["schemas"]["ErrorBody"]["properties"] == {"detail": {"type": "string", "title": "Detail"}}
    for route, operations in doc["paths"].items():
        for method, operation in operations.items():
            refusal = operation["responses"].get("4XX", {})
            schema = refusal.get("content", {}).get("application/json", {}).get("schema")
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, f"{method} {route}"
    missing = await api.client.get("/api/sessions/missing")
    assert missing.status_code == 404 and isinstance(missing.json()["detail"], str)


async def test_an_answer_to_a_servers_question_that_does_not_fit_its_form_is_422_naming_the_field(api):
    session = await api.host.runner.create(prompt="hello")
    await api.host.runner.wait(session.id, timeout=30)
    schema = {
        "type": "object",
        "properties": {"seats": {"type": "integer", "maximum": 8}, "vip": {"type": "boolean"}},
        "required": ["seats"],
    }
    approval = await api.host.broker.open(
        session_id=session.id,
        kind="elicitation",
        tool_call_id="elicitation:c1:1",
        tool_name="mcp__ask__book",
        arguments={"server": "ask", "message": "How many seats?", "schema": schema},
    )
    url = f"/api/approvals/{approval.id}"
    bad = await api.client.post(url, json={"decision": "allow_once", "updated_arguments": {"seats": "two"}})
    assert bad.status_code == 422 and "'seats'" in bad.json()["detail"]
    standing = await api.client.post(url, json={"decision": "allow_session"})
    assert standing.status_code == 422
    good = await api.client.post(url, json={"decision": "allow_once", "updated_arguments": {"seats": 2, "vip": True}})
    assert good.status_code == 200
    assert good.json()["decision"]["updated_arguments"] == {"seats": 2, "vip": True}


async def test_cancel_answers_only_a_servers_question(api):
    api.model.push(write("cancel.txt"), Reply(text="done"))
    session_id = (await api.client.post("/api/sessions", json={"prompt": "write"})).json()["id"]
    approval = await _pending_approval(api)
    refused = await api.client.post(f"/api/approvals/{approval['id']}", json={"decision": "cancel"})
    assert refused.status_code == 422
    assert (await api.client.post(f"/api/approvals/{approval['id']}", json={"decision": "deny"})).status_code == 200
    await api.host.runner.wait(session_id, timeout=30)
