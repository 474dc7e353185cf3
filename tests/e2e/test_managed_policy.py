"""The managed policy on screen (issue 34, item 2), at 1440×900.

With a managed file that denies `Bash(curl *)` and turns "always allow" off: a request's card
offers no "Always allow" (and A opens nothing); the "Runs without asking" strip names the locked rule; Settings lists the managed rule first, locked, with
the file it comes from and no Remove button, beside the admin's own rule, which keeps its button;
the admin's attempt to add an allow for the managed rule is refused, naming the setting.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from .dashboard import ARTIFACTS, approval, calls, decided, shell, start_session

WIDE = {"width": 1440, "height": 900}

def screenshot(page: Page, name: str) -> None:
    """What the person sees at 1440×900 (the viewport), under tests/artifacts/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


MANAGED = """\
permissions:
  deny: ["Bash(curl *)"]
disable_allow_always: true
"""


def test_the_managed_rule_is_shown_locked_and_the_card_offers_no_always(serve, new_page, tmp_path, monkeypatch):
    managed = tmp_path / "etc" / "managed.yaml"
    managed.parent.mkdir()
    managed.write_text(MANAGED)
    monkeypatch.setenv("OVERSEER_MANAGED_POLICY", str(managed))
    h = serve([calls(shell("ls -la")), calls(text="done")], permissions={"allow": ["Bash(git status)"]})
    page: Page = new_page(h, viewport=WIDE)

    session = start_session(h)
    page.goto(f"{h.url}/#/s/{session.id}")
    view = page.get_by_test_id("session-view")
    card = view.get_by_test_id("approval-card")
    expect(card).to_have_count(1)
    approval_id = card.get_attribute("data-approval-id")
    assert approval_id
    expect(view.get_by_test_id("approve-once")).to_be_visible()
    expect(view.get_by_test_id("approve-session")).to_be_visible()
    expect(view.get_by_test_id("approve-always")).to_have_count(0)
    expect(view.get_by_test_id("standing-managed")).to_have_text("deny Bash(curl *)")
    view.get_by_test_id("approve-once").focus()
    page.keyboard.press("a")
    expect(view.get_by_test_id("always-panel")).to_have_count(0)
    screenshot(page, "issue34-item2-card-without-always")
    view.get_by_test_id("approve-once").click()
    expect(decided(page, approval_id)).to_contain_text("allowed once")
    assert approval(h, approval_id).status == "allowed"

    page.goto(f"{h.url}/#/settings")
    rules = page.get_by_test_id("rules-section")
    locked = rules.get_by_test_id("managed-rule-row")
    expect(locked).to_have_count(1)
    expect(locked).to_contain_text("Bash(curl *)")
    expect(locked.get_by_test_id("managed-lock")).to_have_text("Locked")
    expect(locked.get_by_test_id("managed-rule-source")).to_have_text(f"managed policy: {managed}")
    expect(locked.get_by_role("button")).to_have_count(0)
    own = rules.get_by_test_id("rule-row")
    expect(own).to_have_count(1)
    expect(own.get_by_role("button", name="Remove allow rule Bash(git status)")).to_be_visible()
    expect(rules.get_by_test_id("managed-switches")).to_contain_text("“Always allow” is turned off")

    # The admin tries to allow what the managed policy denies: refused, the setting named.
    rules.get_by_test_id("rule-effect").select_option("allow")
    rules.get_by_test_id("rule-input").fill("Bash(curl *)")
    rules.get_by_test_id("rule-add").click()
    expect(rules.get_by_test_id("rules-error")).to_contain_text(
        f"locked by managed policy ({managed}: permissions.deny 'Bash(curl *)')"
    )
    expect(own).to_have_count(1)
    rules.get_by_test_id("managed-rule-row").scroll_into_view_if_needed()
    screenshot(page, "issue34-item2-settings-locked-rule")
