"""Login throttling (backend/api/throttle.py): a few failures a minute, then 429 until the window passes."""

from __future__ import annotations

import pytest

from backend.api.throttle import LoginThrottle, LoginThrottled


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_limit_is_reached_after_the_allowed_failures_and_lifts_when_the_window_passes() -> None:
    clock = Clock()
    throttle = LoginThrottle(max_failures=3, window=60, clock=clock)
    for _ in range(3):
        throttle.check("10.0.0.1", "alice")
        throttle.failed("10.0.0.1", "alice")
        clock.now += 1
    with pytest.raises(LoginThrottled) as refused:
        throttle.check("10.0.0.1", "alice")
    assert refused.value.retry_after == 57  # the first failure leaves the window at 1060
    clock.now = 1060.0
    throttle.check("10.0.0.1", "alice")


def test_a_guesser_is_stopped_by_address_across_names_and_by_name_across_addresses() -> None:
    throttle = LoginThrottle(max_failures=2, window=60, clock=Clock())
    throttle.failed("10.0.0.1", "alice")
    throttle.failed("10.0.0.1", "bob")
    with pytest.raises(LoginThrottled):
        throttle.check("10.0.0.1", "carol")
    throttle.failed("10.0.0.2", "dave")
    throttle.failed("10.0.0.3", "dave")
    with pytest.raises(LoginThrottled):
        throttle.check("10.0.0.4", "dave")
    throttle.check("10.0.0.5", "erin")


def test_a_success_clears_the_address_s_failures() -> None:
    throttle = LoginThrottle(max_failures=2, window=60, clock=Clock())
    throttle.failed("10.0.0.1", "alice")
    throttle.succeeded("10.0.0.1")
    throttle.failed("10.0.0.1", "bob")
    throttle.check("10.0.0.1", "carol")


@pytest.mark.asyncio(loop_scope="module")  # the shared pool's loop (conftest.py)
async def test_the_login_route_answers_429_with_retry_after_once_the_limit_is_reached(api) -> None:
    token = api.app.state.auth.token
    for _ in range(5):
        wrong = await api.anonymous.post("/api/auth/login", json={"password": "wrong"})
        assert wrong.status_code == 401
    blocked = await api.anonymous.post("/api/auth/login", json={"password": token})
    assert blocked.status_code == 429
    assert 1 <= int(blocked.headers["Retry-After"]) <= 60
    assert "too many failed logins" in blocked.json()["detail"]
