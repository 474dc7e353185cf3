"""Settings → Push notifications (issue 33, item 14): the dashboard's button that turns on Web Push
for this browser (`enablePush`, which nothing called before), with where the browser stands shown."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from .dashboard import screenshot

# Headless Chromium has no push service: `PushManager.subscribe` fails even with notifications
# allowed ("Registration failed"). This stands in for the browser's push service only, after the
# real denied path has run; it records the application server key it was given.
PUSH_SERVICE = """
PushManager.prototype.subscribe = async function (options) {
  window.__pushKeyBytes = new Uint8Array(options.applicationServerKey).length;
  return { toJSON: () => ({ endpoint: "https://push.example.com/send/abc", keys: { p256dh: "BPk", auth: "c2VjcmV0" } }) };
};
"""


def test_a_person_turns_on_push_in_settings_and_is_told_when_the_browser_blocks_it(serve, new_page):
    h = serve([], notify={"webpush": True})
    page = new_page(h, path="#/settings")
    section = page.get_by_test_id("push-section")
    status, button = section.get_by_test_id("push-status"), section.get_by_test_id("push-enable")
    expect(status).to_have_attribute("data-state", "off")
    expect(status).to_have_text("Off in this browser.")

    # The browser refuses notifications (headless Chromium answers the prompt "denied").
    button.click()
    expect(section.get_by_test_id("push-error")).to_have_text(
        "Push is not on: notifications are not allowed for this site (allow them in the browser's site settings)."
    )
    expect(status).to_have_attribute("data-state", "blocked")
    screenshot(page, "push-blocked")

    # Allowed, and with a push service: the button subscribes and the host keeps it as the person's.
    page.context.grant_permissions(["notifications"])
    page.add_init_script(PUSH_SERVICE)
    page.reload()
    expect(status).to_have_attribute("data-state", "off")
    with page.expect_response(lambda r: r.url.endswith("/api/push/subscriptions") and r.request.method == "POST") as saved:
        button.click()
    assert saved.value.status == 204
    assert json.loads(saved.value.request.post_data or "{}")["endpoint"] == "https://push.example.com/send/abc"
    assert page.evaluate("window.__pushKeyBytes") == 65  # the host's VAPID public key, decoded
    expect(status).to_have_attribute("data-state", "on")
    expect(button).to_have_count(0)
    expect(section.get_by_test_id("push-error")).to_have_count(0)
    screenshot(page, "push-on")
