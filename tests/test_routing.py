"""The router (backend/routing.py): a named agent, else the first matching route, else main."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.routing import Route, route

ROUTES = [
    Route(channel="telegram", chat=-100123, agent="reviewer"),
    Route(user="alice", agent="research"),
    Route(channel="cron", agent="ops"),
    Route(channel="telegram", agent="chat"),
]


def test_a_message_that_names_its_agent_goes_there_whatever_the_routes_say():
    assert route(ROUTES, channel="cron", named="reviewer") == "reviewer"


def test_the_first_matching_route_wins():
    # The chat route comes before the channel-wide telegram route.
    assert route(ROUTES, channel="telegram", chat=-100123, user="bob") == "reviewer"
    assert route(ROUTES, channel="telegram", chat=555, user="bob") == "chat"


def test_a_route_matches_on_every_field_it_gives_and_on_nothing_else():
    assert route(ROUTES, channel="rest", user="alice") == "research"
    assert route(ROUTES, channel="cron") == "ops"
    assert route(ROUTES, channel="heartbeat", user="bob") == "main"


def test_a_message_matching_no_route_goes_to_main():
    assert route([], channel="gateway", user="alice") == "main"


def test_numbers_from_yaml_and_from_telegram_compare_as_text():
    assert route([Route(chat="42", agent="a")], channel="telegram", chat=42) == "a"
    assert route([Route(user=7, agent="a")], channel="telegram", user="7") == "a"


def test_a_sender_known_by_several_names_matches_a_route_written_with_any():
    routes = [Route(user="alice", agent="research")]
    assert route(routes, channel="telegram", user=(1234, "alice")) == "research"
    assert route(routes, channel="telegram", user=(1234, "bob")) == "main"


def test_an_unknown_channel_or_field_is_refused():
    with pytest.raises(ValidationError):
        Route.model_validate({"channel": "email", "agent": "a"})
    with pytest.raises(ValidationError):
        Route.model_validate({"room": "x", "agent": "a"})
