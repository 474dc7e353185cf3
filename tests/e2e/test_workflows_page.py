"""The Workflows page in a real browser against the real server: definitions with their gates,
a run started from the page, its gate answered with an edited prompt, each step linked to its
session; and a run stopped while it waits at its gate."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.testing import Reply

from .dashboard import card, page_screenshot

EDITED = "Carry out the plan: write README.md with a usage section."


def run_row(page):
    return page.get_by_test_id("run-row").first


def start_run(page, workflow: str, text: str) -> None:
    definition = page.locator(f'[data-testid="workflow-card"][data-workflow="{workflow}"]')
    definition.get_by_test_id("workflow-run").click()
    definition.get_by_test_id("workflow-input").fill(text)
    definition.get_by_test_id("workflow-start").click()


def test_a_run_waits_at_its_gate_takes_an_edited_prompt_and_links_each_step_to_its_session(serve, new_page):
    h = serve([Reply(text="## Plan\n1. Write README.md"), Reply(text="README written.")])
    page = new_page(h)
    page.get_by_test_id("nav-workflows").click()

    definition = page.locator('[data-testid="workflow-card"][data-workflow="plan-then-build"]')
    steps = definition.get_by_test_id("workflow-steps")
    expect(steps).to_contain_text("plan")
    expect(steps).to_contain_text("agent")
    expect(steps.get_by_test_id("step-gate")).to_have_count(1)
    expect(page.get_by_test_id("runs-empty")).to_be_visible()

    start_run(page, "plan-then-build", "Add a README")
    row = run_row(page)
    expect(row).to_contain_text("Add a README")
    # The page refreshes on its own while the run is active: the first step ends, the gate opens.
    expect(row).to_have_attribute("data-status", "waiting_approval")
    expect(row.get_by_test_id("run-gate")).to_contain_text("Waiting for your approval to start step 2 (agent)")
    [run] = h.call(h.host.store.list_workflow_runs())
    first = run.steps[0].session_id
    expect(row.get_by_test_id("run-step-link").first).to_have_attribute("href", f"#/s/{first}")
    page_screenshot(page, "workflows-page")

    page.get_by_test_id("nav-inbox").click()
    gate = card(page)
    expect(gate).to_have_attribute("data-kind", "workflow_step")
    expect(gate.get_by_test_id("approval-title")).to_have_text("Start step 2 of 2 (agent)?")
    expect(gate.get_by_test_id("gate-text")).to_contain_text("Carry out this plan")
    expect(gate.get_by_test_id("gate-text")).to_contain_text("Write README.md")
    expect(gate.get_by_test_id("approve-always")).to_have_count(0)
    gate.get_by_test_id("gate-edit").click()
    gate.get_by_test_id("gate-edit-text").fill(EDITED)
    gate.get_by_test_id("gate-edit-allow").click()
    expect(card(page)).to_have_count(0)

    page.get_by_test_id("nav-workflows").click()
    row = run_row(page)
    expect(row).to_have_attribute("data-status", "completed")
    expect(row.get_by_test_id("run-step")).to_have_count(2)
    expect(row.get_by_test_id("run-step").nth(1)).to_contain_text("prompt edited")
    run = h.call(h.host.store.get_workflow_run(run.id))
    assert run.status == "completed" and run.steps[1].prompt == EDITED
    assert h.model.requests[-1].last_prompt() == EDITED

    row.get_by_test_id("run-step-link").first.click()
    expect(page.get_by_test_id("session-mode")).to_have_attribute("data-mode", "plan")
    notes = page.locator('[data-testid="timeline-note"][data-kind="workflow"]')
    expect(notes.filter(has_text="step 1 of 2 (plan) is done")).to_have_count(1)
    expect(notes.filter(has_text="step 2 of 2 (agent) approved with an edited prompt")).to_have_count(1)


def test_a_run_waiting_at_its_gate_is_stopped_from_the_page_and_its_gate_leaves_the_inbox(serve, new_page):
    h = serve([Reply(text="## Findings\n- one source")])
    page = new_page(h, path="#/workflows")
    start_run(page, "research-then-write", "Tea in Japan")
    row = run_row(page)
    expect(row).to_have_attribute("data-status", "waiting_approval")
    expect(page.get_by_test_id("pending-counter")).to_have_attribute("data-count", "1")

    row.get_by_test_id("run-stop").click()
    expect(row).to_have_attribute("data-status", "stopped")
    expect(row.get_by_test_id("run-stop")).to_have_count(0)
    expect(page.get_by_test_id("pending-counter")).to_have_attribute("data-count", "0")
    [run] = h.call(h.host.store.list_workflow_runs())
    assert run.status == "stopped" and run.steps[1].session_id is None
