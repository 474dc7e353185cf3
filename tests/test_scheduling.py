"""Schedule strings (backend/scheduling.py): the three forms, next runs, time zones, DST, errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backend.domain.errors import Conflict
from backend.domain.schedules import ScheduleCreate, ScheduleUpdate
from backend.scheduling import (
    default_timezone,
    new_schedule,
    parse_schedule,
    resolve_timezone,
    resumed_schedule,
    updated_schedule,
)

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_a_cron_expression_fires_at_its_next_matching_minute_in_its_zone():
    weekdays_at_nine = parse_schedule("0 9 * * 1-5", "Europe/Berlin")
    assert weekdays_at_nine.kind == "cron"
    # 09:00 in Berlin in March (CET) is 08:00 UTC; "after" is exclusive.
    assert weekdays_at_nine.next_after(utc(2026, 3, 2, 7, 0)) == utc(2026, 3, 2, 8, 0)
    assert weekdays_at_nine.next_after(utc(2026, 3, 2, 8, 0)) == utc(2026, 3, 3, 8, 0)
    assert weekdays_at_nine.next_after(utc(2026, 3, 6, 9, 0)) == utc(2026, 3, 9, 8, 0)  # Friday -> Monday


def test_cron_macros_are_accepted_and_normalised():
    assert parse_schedule("@Daily", "UTC").text == "@daily"
    assert parse_schedule("@hourly", "UTC").next_after(utc(2026, 1, 1, 10, 30)) == utc(2026, 1, 1, 11, 0)


def test_a_cron_time_skipped_by_spring_forward_runs_once_just_after_the_jump():
    nightly = parse_schedule("30 2 * * *", "Europe/Berlin")
    # 2026-03-29: clocks go 02:00 CET -> 03:00 CEST, so 02:30 does not exist that night.
    first = nightly.next_after(utc(2026, 3, 28, 12, 0))
    assert first == utc(2026, 3, 29, 1, 30)  # 03:30 CEST, the moment after the jump
    assert nightly.next_after(first) == utc(2026, 3, 30, 0, 30)  # back to 02:30 CEST


def test_a_cron_time_repeated_by_fall_back_runs_once_on_its_first_occurrence():
    nightly = parse_schedule("30 2 * * *", "Europe/Berlin")
    # 2026-10-25: clocks go 03:00 CEST -> 02:00 CET, so 02:30 happens twice.
    first = nightly.next_after(utc(2026, 10, 24, 12, 0))
    assert first == utc(2026, 10, 25, 0, 30)  # 02:30 CEST
    assert nightly.next_after(first) == utc(2026, 10, 26, 1, 30)  # the next night, 02:30 CET


def test_hourly_runs_never_repeat_an_instant_across_spring_forward():
    hourly = parse_schedule("0 * * * *", "Europe/Berlin")
    runs, after = [], utc(2026, 3, 28, 23, 30)
    for _ in range(4):
        after = hourly.next_after(after)
        runs.append(after)
    assert runs == sorted(set(runs))
    assert runs[0] == utc(2026, 3, 29, 0, 0)


def test_every_keeps_its_phase_from_the_anchor():
    every = parse_schedule("every 10m", "UTC")
    anchor = utc(2026, 1, 1, 12, 0)
    assert every.interval == timedelta(minutes=10)
    assert every.next_after(anchor, anchor=anchor) == utc(2026, 1, 1, 12, 10)
    # Late by 25 minutes: the next point of the lattice, not 10 minutes after now.
    assert every.next_after(utc(2026, 1, 1, 12, 35), anchor=anchor) == utc(2026, 1, 1, 12, 40)


def test_every_accepts_units_words_and_combinations():
    assert parse_schedule("every 1h30m", "UTC").interval == timedelta(minutes=90)
    assert parse_schedule("every 2 hours", "UTC").text == "every 2h"
    assert parse_schedule("every day", "UTC").interval == timedelta(days=1)
    assert parse_schedule("EVERY 90s", "UTC").interval == timedelta(seconds=90)


def test_a_naive_iso_time_is_read_in_the_given_zone():
    once = parse_schedule("2026-07-01T09:00", "America/New_York", now=NOW)
    assert once.kind == "once"
    assert once.at == utc(2026, 7, 1, 13, 0)  # EDT is UTC-4
    assert once.next_after(NOW) == once.at
    assert once.next_after(once.at) is None


def test_an_iso_time_with_an_offset_keeps_its_offset():
    once = parse_schedule("at 2026-07-01T09:00+02:00", "America/New_York", now=NOW)
    assert once.at == utc(2026, 7, 1, 7, 0)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("every 30s", "minimum of 1 minute"),
        ("every", "needs an interval"),
        ("every 5x", "unknown unit 'x'"),
        ("every ten minutes", "unknown unit 'ten'"),
        ("every 10m 5", "cannot read the interval"),
        ("* * *", "5 fields"),
        ("0 9 * * * 30", "5 fields"),
        ("61 * * * *", "out of range"),
        ("0 0 30 2 *", "never fires"),
        ("@reboot", "unknown cron macro"),
        ("2026-13-01T00:00", "not a valid ISO 8601 time"),
        ("2026-01-01T00:00", "in the past"),
        ("tomorrow at nine", "not a schedule"),
    ],
)
def test_a_bad_schedule_is_a_value_error_naming_the_problem(text, words):
    with pytest.raises(ValueError, match=words):
        parse_schedule(text, "UTC", now=NOW)


def test_an_unknown_time_zone_is_a_value_error():
    with pytest.raises(ValueError, match="unknown time zone 'Mars/Olympus'"):
        resolve_timezone("Mars/Olympus")


def test_without_a_zone_the_hosts_local_zone_is_used(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert default_timezone() == "Asia/Tokyo"
    assert parse_schedule("@daily").timezone == "Asia/Tokyo"


def test_a_new_job_is_active_with_its_first_run_and_a_name_from_the_prompt():
    job = new_schedule(ScheduleCreate(schedule="every 1h", prompt="Check the build\nand report", timezone="UTC"), now=NOW)
    assert (job.status, job.kind, job.name) == ("active", "every", "Check the build")
    assert job.next_run_at == NOW + timedelta(hours=1)


def test_editing_the_schedule_restarts_its_timing_and_reactivates_a_finished_one_shot():
    job = new_schedule(ScheduleCreate(schedule="2026-03-02T09:00", prompt="p", timezone="UTC"), now=NOW)
    done = job.model_copy(update={"status": "done", "next_run_at": None})
    later = NOW + timedelta(hours=5)
    edited = updated_schedule(done, ScheduleUpdate(schedule="every 2h"), now=later)
    assert (edited.status, edited.kind, edited.next_run_at) == ("active", "every", later + timedelta(hours=2))
    renamed = updated_schedule(job, ScheduleUpdate(name="Renamed"), now=later)
    assert renamed.next_run_at == job.next_run_at and renamed.name == "Renamed"


def test_a_one_shot_whose_time_passed_while_paused_cannot_resume():
    job = new_schedule(ScheduleCreate(schedule="2026-03-02T09:00", prompt="p", timezone="UTC"), now=NOW)
    paused = job.model_copy(update={"status": "paused", "next_run_at": None})
    assert resumed_schedule(paused, now=NOW).next_run_at == utc(2026, 3, 2, 9, 0)
    with pytest.raises(Conflict, match="has passed"):
        resumed_schedule(paused, now=utc(2026, 3, 2, 10, 0))


def test_an_explicit_null_clears_the_target_session_but_never_a_required_field():
    job = new_schedule(ScheduleCreate(schedule="@daily", prompt="p", timezone="UTC", session_id="s1"), now=NOW)
    edited = updated_schedule(job, ScheduleUpdate.model_validate({"session_id": None, "mode": None, "prompt": None}), now=NOW)
    assert (edited.session_id, edited.mode, edited.prompt) == (None, "agent", "p")
