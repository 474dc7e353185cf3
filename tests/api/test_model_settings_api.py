"""The model from the dashboard (issue 16): set without a restart, the key kept 0600 and never sent
back, a test call that says what happened, and writes for admins only."""

from __future__ import annotations

import stat

import pytest

from backend.app.model_settings import FILE_NAME, ModelSettings
from backend.testing import Reply
from backend.testing.harness import scripted_settings

pytestmark = pytest.mark.asyncio(loop_scope="module")

KEY = "sk-dashboard-0123456789abcdef"


async def test_the_configured_model_is_shown_with_whether_a_key_is_set_but_never_the_key(api):
    response = await api.client.get("/api/settings/model")
    assert response.status_code == 200
    assert response.json() == {
        "model": "openai/scripted",
        "api_base": api.model.openai_base,
        "api_key_set": True,
        "demo": False,
        "source": "config",
        "thinking": {"enabled": False, "budget_tokens": 4096},
    }
    assert "scripted-key" not in response.text


async def test_a_saved_model_is_used_by_the_next_session_and_its_key_stays_in_a_private_file(api):
    body = {"model": "openai/chosen", "api_base": api.model.openai_base, "api_key": KEY}
    saved = await api.client.put("/api/settings/model", json=body)
    assert saved.status_code == 200 and KEY not in saved.text
    assert saved.json()["model"] == "openai/chosen" and saved.json()["source"] == "dashboard"
    path = api.host.data_dir / FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and KEY in path.read_text()

    api.model.push(Reply(text="from the chosen model"))
    created = await api.client.post("/api/sessions", json={"prompt": "hello"})
    done = await api.host.runner.wait(created.json()["id"], timeout=30)
    assert done.status == "completed" and done.model == "openai/chosen"
    assert api.model.requests[-1].model == "chosen"
    assert KEY not in (await api.client.get("/api/settings/model")).text


async def test_leaving_the_key_empty_keeps_it_and_clearing_it_removes_it(api):
    await api.client.put("/api/settings/model", json={"model": "openai/a", "api_key": KEY})
    kept = await api.client.put("/api/settings/model", json={"model": "openai/b", "api_key": ""})
    assert kept.json()["api_key_set"] is True
    assert api.host.settings.api_key is not None and api.host.settings.api_key.get_secret_value() == KEY
    cleared = await api.client.put("/api/settings/model", json={"model": "openai/b", "clear_api_key": True})
    assert cleared.json()["api_key_set"] is False
    assert KEY not in (api.host.data_dir / FILE_NAME).read_text()


async def test_an_empty_model_chooses_the_offline_demo(api):
    response = await api.client.put("/api/settings/model", json={"model": ""})
    assert response.json()["demo"] is True and response.json()["source"] == "demo"
    created = await api.client.post("/api/sessions", json={"prompt": "show me around"})
    assert created.json()["model"] == "openai/overseer-demo"
    await api.client.post(f"/api/sessions/{created.json()['id']}/stop")


async def test_the_choice_survives_a_restart(tmp_path):
    class Runner:
        default_model = "demo"
        secrets: tuple[str, ...] = ()

    first = scripted_settings(tmp_path, type("Server", (), {"openai_base": "http://x/v1"})())
    ModelSettings(settings=first, runner=Runner(), data_dir=tmp_path, demo_model="demo").save(
        model="anthropic/claude-sonnet-4-5", api_base=None, api_key=KEY, clear_api_key=False
    )
    again = scripted_settings(tmp_path, type("Server", (), {"openai_base": "http://x/v1"})())
    runner = Runner()
    view = ModelSettings(settings=again, runner=runner, data_dir=tmp_path, demo_model="demo").view()
    assert (view.model, view.api_base, view.api_key_set) == ("anthropic/claude-sonnet-4-5", None, True)
    assert runner.default_model == "anthropic/claude-sonnet-4-5" and KEY in runner.secrets


async def test_thinking_turned_on_in_the_dashboard_is_asked_of_the_next_sessions_model(api):
    thinking = {"enabled": True, "budget_tokens": 3000}
    chosen = {"model": "openai/scripted", "api_base": api.model.openai_base}
    saved = await api.client.put("/api/settings/model", json={**chosen, "thinking": thinking})
    assert saved.status_code == 200 and saved.json()["thinking"] == thinking
    kept = await api.client.put("/api/settings/model", json=chosen)
    assert kept.json()["thinking"] == thinking  # omitted: kept

    api.model.push(Reply(thinking="Let me see.", text="done"))
    created = await api.client.post("/api/sessions", json={"prompt": "hello"})
    done = await api.host.runner.wait(created.json()["id"], timeout=30)
    assert done.status == "completed"
    assert api.model.requests[-1].raw["reasoning_effort"] == "medium"
    detail = (await api.client.get(f"/api/sessions/{done.id}")).json()
    assert [m["thinking"] for m in detail["messages"] if m["role"] == "assistant"] == ["Let me see."]
    assert '"enabled": true' in (api.host.data_dir / FILE_NAME).read_text()


async def test_a_thinking_budget_under_anthropics_minimum_is_refused_and_nothing_changes(api):
    response = await api.client.put(
        "/api/settings/model", json={"model": "openai/x", "thinking": {"enabled": True, "budget_tokens": 100}}
    )
    assert response.status_code == 422 and "budget_tokens" in response.text
    assert (await api.client.get("/api/settings/model")).json()["model"] == "openai/scripted"


async def test_test_connection_makes_one_small_call_and_reports_the_answer(api):
    api.model.push(Reply(text="OK"))
    before = len(api.model.requests)
    response = await api.client.post(
        "/api/settings/model/test", json={"model": "openai/probe", "api_base": api.model.openai_base}
    )
    assert response.status_code == 200
    assert response.json()["ok"] is True and "'OK'" in response.json()["message"]
    assert len(api.model.requests) == before + 1 and api.model.requests[-1].model == "probe"


async def test_a_refused_key_is_reported_with_its_cause_and_never_echoed(api):
    api.model.push(Reply(status=401, text=f"Incorrect API key provided: {KEY}"))
    response = await api.client.post(
        "/api/settings/model/test", json={"model": "openai/probe", "api_base": api.model.openai_base, "api_key": KEY}
    )
    result = response.json()
    assert result["ok"] is False and result["message"].startswith("The model refused the API key (HTTP 401)")
    assert KEY not in response.text


@pytest.mark.parametrize("role", ["approver", "viewer"])
async def test_only_an_admin_may_change_or_test_the_model(api, role):
    key = api.app.state.auth.create_api_key(f"{role}-key", role=role)
    headers = {"X-API-Key": key}
    assert (await api.anonymous.get("/api/settings/model", headers=headers)).status_code == 200
    put = await api.anonymous.put("/api/settings/model", json={"model": "openai/x"}, headers=headers)
    test = await api.anonymous.post("/api/settings/model/test", json={}, headers=headers)
    assert (put.status_code, test.status_code) == (403, 403)
