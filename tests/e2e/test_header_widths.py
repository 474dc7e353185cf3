"""The top bar at laptop and desktop widths (issue 33, item 14): every control of its right side,
Sign out included, stays inside the viewport; links that do not fit scroll inside their strip."""

from __future__ import annotations

from playwright.sync_api import expect

from .dashboard import screenshot

WIDTHS = ({"width": 1024, "height": 768}, {"width": 1280, "height": 800}, {"width": 1440, "height": 900})


def test_at_1024_px_and_wider_sign_out_and_the_waiting_counter_stay_inside_the_viewport(serve, new_page):
    h = serve()
    page = new_page(h, viewport=WIDTHS[0])
    sign_out = page.get_by_test_id("sign-out")
    expect(sign_out).to_be_visible()
    for view in WIDTHS:
        page.set_viewport_size(view)
        for control in (sign_out, page.get_by_test_id("pending-counter"), page.get_by_test_id("nav-settings")):
            expect(control).to_be_in_viewport(ratio=1)
            box = control.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= view["width"], (view, box)
        assert sign_out.evaluate("b => b.scrollWidth <= b.clientWidth"), "the label is cut inside the button"
        assert page.evaluate("document.documentElement.scrollWidth") <= view["width"]
        screenshot(page, f"header-{view['width']}")
    sign_out.click()
    expect(page.get_by_test_id("login-form")).to_be_visible()
