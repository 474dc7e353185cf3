"""The Schedules page in a real browser against the real server: list, pause/resume, delete,
create (with the server's refusal shown), and a run's result."""

from __future__ import annotations

from playwright.sync_api import expect

from backend.domain.schedules import Schedule, ScheduleCreate
from backend.testing import Reply
from backend.testing.web import WebHarness

from .dashboard import screenshot, wait_session


def add_job(h: WebHarness, schedule: str = "0 9 * * 1-5", **fields: str) -> Schedule:
    body = ScheduleCreate(schedule=schedule, prompt="Summarise the build failures", timezone="UTC", **fields)  # type: ignore[arg-type]
    return h.call(h.host.scheduler.create(body))


def test_a_job_is_listed_paused_resumed_and_deleted_from_the_schedules_page(serve, new_page):
    h = serve([])
    job = add_job(h, name="Weekday build report")
    page = new_page(h)
    page.get_by_test_id("nav-schedules").click()

    row = page.locator(f'[data-testid="schedule-row"][data-schedule-id="{job.id}"]')
    expect(row).to_contain_text("Weekday build report")
    expect(row).to_contain_text("0 9 * * 1-5")
    expect(row.get_by_test_id("schedule-status")).to_have_text("active")
    expect(row.get_by_test_id("schedule-last")).to_contain_text("not run yet")

    row.get_by_test_id("schedule-pause").click()
    expect(row.get_by_test_id("schedule-status")).to_have_text("paused")
    expect(row).to_have_attribute("data-status", "paused")
    assert h.call(h.host.store.get_schedule(job.id)).status == "paused"

    row.get_by_test_id("schedule-resume").click()
    expect(row.get_by_test_id("schedule-status")).to_have_text("active")
    assert h.call(h.host.store.get_schedule(job.id)).status == "active"

    row.get_by_test_id("schedule-delete").click()
    row.get_by_test_id("schedule-delete-confirm").click()
    expect(page.get_by_test_id("schedule-row")).to_have_count(0)
    expect(page.get_by_test_id("schedules-empty")).to_be_visible()
    assert h.call(h.host.store.list_schedules()) == []


def test_the_form_shows_the_servers_refusal_and_then_adds_a_job(serve, new_page):
    h = serve([])
    page = new_page(h, path="#/schedules")
    expect(page.get_by_test_id("schedules-empty")).to_be_visible()

    page.get_by_test_id("schedule-text").fill("every 30s")
    page.get_by_test_id("schedule-prompt").fill("Check the queue")
    page.get_by_test_id("schedule-timezone").fill("Europe/Berlin")
    page.get_by_test_id("schedule-create").click()
    expect(page.get_by_test_id("schedule-error")).to_contain_text("minimum of 1 minute")
    assert h.call(h.host.store.list_schedules()) == []

    page.get_by_test_id("schedule-text").fill("every 2h")
    page.get_by_test_id("schedule-create").click()
    row = page.get_by_test_id("schedule-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Check the queue")
    expect(row).to_contain_text("Europe/Berlin")
    expect(row.get_by_test_id("schedule-next")).to_contain_text("in 2h")
    [stored] = h.call(h.host.store.list_schedules())
    assert (stored.schedule, stored.timezone, stored.prompt) == ("every 2h", "Europe/Berlin", "Check the queue")


def test_a_runs_result_and_its_session_link_appear_on_the_page(serve, new_page):
    h = serve([Reply(text="Two failures, both flaky network tests.")])
    job = add_job(h, name="Failure digest")
    fired = h.call(h.host.scheduler.run_now(job.id))
    assert fired.session_id is not None
    wait_session(h, fired.session_id)
    h.call(h.host.scheduler.drain())

    page = new_page(h, path="#/schedules")
    row = page.locator(f'[data-testid="schedule-row"][data-schedule-id="{job.id}"]')
    expect(row.get_by_test_id("schedule-last-status")).to_have_text("completed")
    expect(row.get_by_test_id("schedule-last")).to_contain_text("Two failures, both flaky network tests.")
    screenshot(page, "schedules-page")
    row.get_by_role("link", name="session").click()
    expect(page.get_by_test_id("session-title")).to_have_text("Failure digest")
