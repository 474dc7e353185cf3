"""Named agents in the dashboard (issue 19), in a real browser against the real server: the
new-session form's agent select, the agent shown in the sidebar, and the admin's Agents page."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import Reply


def test_a_session_started_with_a_chosen_agent_runs_as_it_and_an_admin_adds_an_agent(serve, new_page, tmp_path):
    (tmp_path / "reviews").mkdir()
    agents = [{"id": "reviewer", "name": "Code reviewer", "model": "openai/review-model", "workspace": str(tmp_path / "reviews"), "mode": "ask"}]
    h = serve([Reply(text="Reviewed.")], agents=agents)
    page = new_page(h)

    page.get_by_test_id("new-session-toggle").click()
    select = page.get_by_test_id("new-session-agent")
    expect(select.locator("option")).to_have_text(["default", "main", "Code reviewer (reviewer)"])
    select.select_option("reviewer")
    expect(page.get_by_test_id("new-session-mode")).to_have_value("ask")  # the agent's own mode
    page.get_by_test_id("new-session-prompt").fill("Review the change")
    page.get_by_test_id("new-session-submit").click()
    expect(page.get_by_test_id("session-title")).to_have_text("Review the change")
    # The first turn waits for the tool servers to start: bounded like the runner's own wait.
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("Reviewed.", timeout=60_000)
    row = page.get_by_test_id("session-row").filter(has_text="Review the change")
    expect(row.get_by_test_id("agent-badge")).to_have_text("Code reviewer")

    [session] = h.call(h.host.store.list_sessions())
    assert (session.agent_id, session.mode, session.workspace) == ("reviewer", "ask", str((tmp_path / "reviews").resolve()))
    assert h.model.requests[0].model == "review-model"

    page.get_by_test_id("nav-agents").click()
    expect(page.get_by_test_id("agent-row")).to_have_count(2)
    page.get_by_test_id("agent-add").click()
    page.get_by_test_id("agent-id").fill("ops")
    page.get_by_test_id("agent-servers").fill("nope")
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-error")).to_contain_text("'nope' is not a configured MCP server")
    page.get_by_test_id("agent-servers").fill("file")
    page.get_by_test_id("agent-name").fill("Operations")
    page.get_by_test_id("agent-save").click()
    expect(page.locator('[data-testid="agent-row"][data-agent="ops"]')).to_contain_text("Operations")
    assert [a.id for a in h.host.agents.list()] == ["main", "reviewer", "ops"]


def test_saving_an_agent_on_the_agents_page_keeps_the_config_file_as_written(serve, new_page, tmp_path):
    # The server's config file (its data dir's overseer.yaml), with what a person writes in one.
    config = tmp_path / "server1" / "data" / "overseer.yaml"
    config.parent.mkdir(parents=True)
    written = (
        "# The admin's notes: every save keeps them.\n"
        "budget:\n"
        "  warn_at: 0.50   # half, spelled so\n"
        "host: '127.0.0.1'  # quoted on purpose\n"
    )
    config.write_text(written)
    h = serve([])
    assert h.host.settings.config_file == config
    page = new_page(h)
    page.get_by_test_id("nav-agents").click()
    page.get_by_test_id("agent-add").click()
    page.get_by_test_id("agent-id").fill("ops")
    page.get_by_test_id("agent-name").fill("Operations")
    page.get_by_test_id("agent-save").click()
    expect(page.locator('[data-testid="agent-row"][data-agent="ops"]')).to_contain_text("Operations")
    text = config.read_text()
    assert text.startswith(written) and "- id: ops" in text and "name: Operations" in text
