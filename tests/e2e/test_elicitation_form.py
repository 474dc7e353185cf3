"""A server's question (MCP elicitation) as a form on the approval card, in real Chromium (issue 14, item 5).

A real SDK server process asks for a booking form from inside its tool (handshake era,
`ctx.elicit`); the person fills in the form the card built from the schema and accepts; the
tool's result shows what the server received.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import expect

from backend.mcp.config import McpServerConfig
from backend.testing import Reply, ScriptedToolCall
from tests.e2e.dashboard import ARTIFACTS, calls, start_session, wait_session

ELICITATION_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "elicitation_server.py"
MULTISELECT_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "fixtures" / "multiselect_server.py"


def test_a_servers_question_is_a_form_whose_answer_reaches_the_tool(serve, new_page):
    h = serve(
        [calls(ScriptedToolCall(name="mcp__ask__book", arguments={})), Reply(text="Booked.")],
        servers=(),
        mcp_servers={"ask": McpServerConfig(command=sys.executable, args=[str(ELICITATION_SERVER), "--legacy"])},
        permissions={"allow": ["mcp__ask"]},
    )
    page = new_page(h)
    session = start_session(h, "Book a table")
    page.goto(f"{h.url}/#/s/{session.id}")

    card = page.get_by_test_id("approval-card")
    expect(card).to_have_attribute("data-kind", "elicitation")
    expect(card.get_by_test_id("elicitation-message")).to_have_text("Booking a table: who is it for, and how many seats?")
    # Labels come from the schema's titles (else the field's name); an enum is a select, a boolean a checkbox.
    card.get_by_label("Your name").fill("Ada")
    card.get_by_label("seats").fill("12")
    expect(card.get_by_text("Who the table is for")).to_be_visible()
    card.get_by_label("Meal").select_option("fish")
    card.get_by_label("VIP lounge").check()

    # Too many seats for the server's schema (at most 8): the host refuses it, naming the field, and still waits.
    card.get_by_test_id("elicit-accept").click()
    expect(card.get_by_test_id("approval-error")).to_contain_text("'seats'")

    card.get_by_label("seats").fill("2")
    card.get_by_test_id("elicit-accept").click()
    expect(page.get_by_test_id("approval-decided")).to_contain_text("question from ask — answered")
    done = wait_session(h, session.id)
    assert done.status == "completed", done.error
    [tool] = [m for m in h.call(h.host.store.list_messages(session.id)) if m.role == "tool"]
    assert json.loads(tool.content) == {
        "action": "accept",
        "content": {"name": "Ada", "seats": 2, "vip": True, "meal": "fish"},
    }


def test_a_multi_select_is_a_group_of_checkboxes_with_the_servers_defaults_ticked(serve, new_page):
    """Issue 35, item 4: `type: array` choices (plain `items.enum` and titled `items.anyOf`) are
    checkboxes, ticked as the schema's default says; a titled `oneOf` is a select of its titles;
    the answer reaches the real SDK server as lists, in the schema's order."""
    h = serve(
        [calls(ScriptedToolCall(name="mcp__pizza__order", arguments={})), Reply(text="Ordered.")],
        servers=(),
        mcp_servers={"pizza": McpServerConfig(command=sys.executable, args=[str(MULTISELECT_SERVER), "--legacy"])},
        permissions={"allow": ["mcp__pizza"]},
    )
    page = new_page(h, viewport={"width": 1440, "height": 900})
    session = start_session(h, "Order a pizza")
    page.goto(f"{h.url}/#/s/{session.id}")

    card = page.get_by_test_id("approval-card")
    expect(card).to_have_attribute("data-kind", "elicitation")
    toppings = card.get_by_role("group", name="Toppings")
    expect(toppings.get_by_role("checkbox")).to_have_count(4)
    expect(toppings.get_by_role("checkbox", name="cheese")).to_be_checked()  # the server's default
    expect(toppings).to_contain_text("choose 1 to 3")
    sides = card.get_by_role("group", name="Sides")
    expect(sides.get_by_role("checkbox", name="Green salad")).not_to_be_checked()  # titles, not values
    expect(card.get_by_label("Size")).to_have_value("m")
    expect(card.get_by_label("Size").locator("option", has_text="Large")).to_have_count(1)

    toppings.get_by_role("checkbox", name="basil").check()
    toppings.get_by_role("checkbox", name="ham").check()
    sides.get_by_role("checkbox", name="Green salad").check()
    card.get_by_label("Size").select_option("l")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "issue35-item4-1440-multi-select-form.png"))

    card.get_by_test_id("elicit-accept").click()
    expect(page.get_by_test_id("approval-decided")).to_contain_text("question from pizza — answered")
    done = wait_session(h, session.id)
    assert done.status == "completed", done.error
    [tool] = [m for m in h.call(h.host.store.list_messages(session.id)) if m.role == "tool"]
    assert json.loads(tool.content.splitlines()[-1]) == {
        "action": "accept",
        "content": {"toppings": ["cheese", "ham", "basil"], "sides": ["salad"], "size": "l"},
    }
