"""Settings → Model in real Chromium (issue 16): from the demo's empty inbox to a real model,
tested and saved without a restart, with the key never shown again."""

from __future__ import annotations

from playwright.sync_api import Response, expect

from backend.testing import Reply

from .dashboard import start_session, wait_session

KEY = "sk-e2e-0123456789abcdef"


def test_a_person_leaves_the_demo_by_choosing_a_model_testing_it_and_saving_it(serve, new_page):
    h = serve([Reply(text="OK"), Reply(text="hello from the real model")], model=None, api_key=None)
    page = new_page(h)
    bodies: list[str] = []

    def keep(response: Response) -> None:
        if "/api/settings/model" in response.url:
            bodies.append(response.text())

    page.on("response", keep)

    notice = page.get_by_test_id("demo-notice")
    expect(notice).to_contain_text("offline demo")
    expect(notice).to_contain_text("notes.txt")
    notice.get_by_test_id("demo-settings-link").click()

    section = page.get_by_test_id("model-section")
    expect(section.get_by_test_id("model-in-use")).to_contain_text("the offline demo")
    expect(section.get_by_test_id("model-key-state")).to_have_text("not set")
    section.get_by_test_id("model-provider").select_option("openai")
    section.get_by_test_id("model-name").fill("scripted")
    section.get_by_test_id("model-api-base").fill(h.model.openai_base)
    section.get_by_test_id("model-api-key").fill(KEY)

    section.get_by_test_id("model-test").click()
    result = section.get_by_test_id("model-test-result")
    expect(result).to_have_attribute("data-ok", "true")
    expect(result).to_contain_text("openai/scripted answered: 'OK'")

    section.get_by_test_id("model-save").click()
    expect(section.get_by_test_id("model-saved")).to_have_text("Saved: new sessions use openai/scripted.")
    expect(section.get_by_test_id("model-in-use")).to_contain_text("openai/scripted")
    expect(section.get_by_test_id("model-key-state")).to_have_text("set; type to replace it")
    expect(section.get_by_test_id("model-api-key")).to_have_value("")

    session = start_session(h, "hello")  # no restart: the next session uses the saved model
    done = wait_session(h, session.id)
    assert (done.status, done.model) == ("completed", "openai/scripted")
    assert h.model.requests[-1].model == "scripted"

    page.reload()
    expect(page.get_by_test_id("model-section").get_by_test_id("model-in-use")).to_contain_text("openai/scripted")
    page.get_by_test_id("nav-inbox").click()
    expect(page.get_by_test_id("inbox")).to_be_visible()
    expect(page.get_by_test_id("demo-notice")).to_have_count(0)
    assert bodies and not [b for b in bodies if KEY in b]
    assert KEY not in page.content()


WRONG_KEY = "sk-e2e-wrong-0000000000"
REFUSED = "The model refused the API key (HTTP 401)"


def test_save_tests_a_wrong_key_first_and_a_failed_turn_says_its_401_once_and_keeps_it_after_a_good_turn(
    serve, new_page
):
    # Issue 33, item 11: Save took a wrong key untested, the 401 showed twice, and a later good
    # turn wiped the failed turn's error from the history.
    refusal = Reply(status=401, text="Incorrect API key provided")
    h = serve([refusal, refusal, Reply(text="OK"), Reply(text="back on track")], model=None, api_key=None, model_retries=0)
    page = new_page(h)
    page.goto(f"{h.url}/#/settings")
    section = page.get_by_test_id("model-section")
    expect(section.get_by_test_id("model-in-use")).to_contain_text("the offline demo")
    section.get_by_test_id("model-provider").select_option("openai")
    section.get_by_test_id("model-name").fill("scripted")
    section.get_by_test_id("model-api-base").fill(h.model.openai_base)
    section.get_by_test_id("model-api-key").fill(WRONG_KEY)

    section.get_by_test_id("model-save").click()  # tests first: the 401, once, and nothing saved
    result = section.get_by_test_id("model-test-result")
    expect(result).to_have_attribute("data-ok", "false")
    expect(result).to_contain_text(REFUSED)
    expect(section.get_by_text("HTTP 401")).to_have_count(1)
    expect(section.get_by_test_id("model-saved")).to_have_count(0)
    expect(section.get_by_test_id("model-in-use")).to_contain_text("the offline demo")
    assert len(h.model.requests) == 1

    section.get_by_test_id("model-save-anyway").click()  # the person insists: saved, untested again
    expect(section.get_by_test_id("model-saved")).to_have_text("Saved: new sessions use openai/scripted.")
    assert len(h.model.requests) == 1

    session = start_session(h, "hello")
    assert wait_session(h, session.id).status == "error"
    page.get_by_test_id("session-row").filter(has_text=session.title).first.click()
    view = page.get_by_test_id("session-view")
    failure = view.locator('[data-testid="timeline-note"][data-kind="error"]')
    expect(failure).to_contain_text("401")
    expect(view.get_by_text("Incorrect API key provided")).to_have_count(1)  # not also below as the status

    page.goto(f"{h.url}/#/settings")  # the right key: the test passes and Save saves
    section.get_by_test_id("model-api-key").fill(KEY)
    section.get_by_test_id("model-save").click()
    expect(section.get_by_test_id("model-saved")).to_have_text("Saved: new sessions use openai/scripted.")
    expect(section.get_by_test_id("model-test-result")).to_have_attribute("data-ok", "true")

    page.get_by_test_id("session-row").filter(has_text=session.title).first.click()
    page.get_by_test_id("composer").fill("try again")
    page.get_by_test_id("composer-send").click()
    expect(view.get_by_test_id("message-assistant").last).to_contain_text("back on track")
    expect(failure).to_contain_text("401")  # the failed turn stays in the history
    page.reload()
    expect(page.get_by_test_id("message-assistant").last).to_contain_text("back on track")
    expect(page.locator('[data-testid="timeline-note"][data-kind="error"]')).to_contain_text("401")
    expect(page.get_by_text("Incorrect API key provided")).to_have_count(1)
