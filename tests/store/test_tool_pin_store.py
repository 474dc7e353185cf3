"""Tool pins in the store (issue 34), on SQLite and Postgres: the first pin of a tool wins, a
server's pins list by name, and an accept replaces a pin only while it is the one it replaces."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.domain.tool_pins import ToolPin

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def pin(tool: str, fingerprint: str, *, server: str = "crm", **extra: object) -> ToolPin:
    return ToolPin(
        server=server,
        tool=tool,
        identity="python -m crm",
        fingerprint=fingerprint,
        definition={"name": tool, "description": f"version {fingerprint}"},
        first_seen=T0,
        **extra,  # type: ignore[arg-type]
    )


async def test_the_first_pin_of_a_tool_stays_when_another_listing_pins_it_again(store):
    first = await store.pin_tool(pin("lookup", "aaa"))
    again = await store.pin_tool(pin("lookup", "bbb"))
    assert first.fingerprint == again.fingerprint == "aaa"
    assert [p.fingerprint for p in await store.tool_pins("crm")] == ["aaa"]


async def test_a_servers_pins_are_listed_by_tool_name_and_kept_apart_from_other_servers(store):
    await store.pin_tool(pin("write", "w1"))
    await store.pin_tool(pin("lookup", "l1"))
    await store.pin_tool(pin("lookup", "x1", server="other"))
    assert [(p.tool, p.fingerprint) for p in await store.tool_pins("crm")] == [("lookup", "l1"), ("write", "w1")]
    assert await store.tool_pins("nobody") == []


async def test_an_accept_replaces_the_pin_it_was_shown_and_not_a_newer_one(store):
    await store.pin_tool(pin("lookup", "aaa"))
    accepted = pin("lookup", "bbb", accepted_by="ann", accepted_at=T0)
    assert await store.repin_tool(accepted, replacing="aaa") is True
    late = pin("lookup", "ccc", accepted_by="bob", accepted_at=T0)
    assert await store.repin_tool(late, replacing="aaa") is False
    [kept] = await store.tool_pins("crm")
    assert (kept.fingerprint, kept.accepted_by, kept.definition["description"]) == ("bbb", "ann", "version bbb")
