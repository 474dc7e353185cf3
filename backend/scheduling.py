"""Schedule strings: parse and validate them, and compute a job's next run.

Three forms are accepted:

- a cron expression of 5 fields (`*/15 9-17 * * 1-5`) or a macro (`@hourly`, `@daily`,
  `@weekly`, `@monthly`, `@yearly`), read in the job's time zone;
- `every <n><unit>` with units s, m, h, d, combinable (`every 10m`, `every 1h30m`,
  `every day`); at least `MIN_INTERVAL`, since each run is a whole agent run;
- one ISO 8601 time for a one-shot run (`2026-05-01T09:00`); without an offset it is read in
  the job's time zone, and it must be in the future.

Cron times are wall-clock times. Around a DST change they stay sane: a time the clocks skip
runs at the moment after the jump, and a time that happens twice runs once, the first time.
Bad input raises ScheduleError (a BadRequest) with a message meant for the person (or model) who
wrote it.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, CroniterError, croniter

from backend.domain.errors import BadRequest, Conflict
from backend.domain.schedules import Schedule, ScheduleCreate, ScheduleKind, ScheduleUpdate

MIN_INTERVAL = timedelta(minutes=1)
CRON_MACROS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_UNITS: dict[str, int] = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), 86400),
}
_PART = re.compile(r"(\d*)\s*([a-z]+)")
_ISO_START = re.compile(r"^\d{4}-\d{2}-\d{2}|^\d{8}T")
FORMS = "a 5-field cron expression ('0 9 * * 1-5'), 'every 10m' (s/m/h/d), or an ISO time ('2026-05-01T09:00')"


class ScheduleError(BadRequest):
    """A schedule string, time zone or one-shot time that cannot be used; the message says why."""


@dataclass(frozen=True, kw_only=True)
class ParsedSchedule:
    """A validated schedule: what kind, its normalised text, and what it needs to find runs."""

    kind: ScheduleKind
    text: str
    timezone: str
    interval: timedelta | None = None
    at: datetime | None = None
    """The one-shot time, in UTC."""

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def next_after(self, after: datetime, *, anchor: datetime | None = None) -> datetime | None:
        """The first run strictly after `after` (UTC), or None when there is none (a past one-shot).

        `anchor` fixes the phase of an `every` job (runs at anchor + k * interval); without it
        the interval counts from `after`.
        """
        after = after.astimezone(UTC)
        if self.kind == "once":
            assert self.at is not None
            return self.at if self.at > after else None
        if self.kind == "every":
            assert self.interval is not None
            if anchor is None:
                return after + self.interval
            # The first point of the lattice anchor + k * interval (any integer k) after `after`.
            anchor = anchor.astimezone(UTC)
            return anchor + ((after - anchor) // self.interval + 1) * self.interval
        return _next_cron(self.text, self.zone, after)


def resolve_timezone(name: str | None) -> str:
    """The IANA name to use: `name` checked, or the host's local zone when None."""
    if name is None or not name.strip():
        return default_timezone()
    name = name.strip()
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"unknown time zone {name!r}: use an IANA name such as 'Europe/Berlin' or 'UTC'") from None
    return name


def default_timezone() -> str:
    """The host's local zone as an IANA name ($TZ, /etc/timezone, /etc/localtime), else UTC."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except OSError:
        pass
    try:
        target = str(Path("/etc/localtime").resolve())
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    for name in candidates:
        if name and not name.startswith("/"):
            try:
                ZoneInfo(name)
                return name
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return "UTC"


def parse_schedule(text: str, timezone: str | None = None, *, now: datetime | None = None) -> ParsedSchedule:
    """Parse and validate a schedule string; ScheduleError says exactly what is wrong.

    `now` (UTC) is needed to refuse a one-shot time that has already passed.
    """
    zone_name = resolve_timezone(timezone)
    raw = " ".join(text.split())
    lowered = raw.lower()
    if not raw:
        raise ScheduleError(f"the schedule is empty; use {FORMS}")
    if lowered.startswith("every ") or lowered == "every":
        return ParsedSchedule(kind="every", **_parse_every(lowered), timezone=zone_name)
    if lowered.startswith("at "):
        raw = raw[3:].strip()
    if _ISO_START.match(raw):
        at = _parse_iso(raw, ZoneInfo(zone_name))
        if now is not None and at <= now:
            raise ScheduleError(f"the one-shot time {raw} ({zone_name}) is in the past")
        return ParsedSchedule(kind="once", text=raw, timezone=zone_name, at=at)
    return ParsedSchedule(kind="cron", text=_check_cron(raw, ZoneInfo(zone_name)), timezone=zone_name)


def _parse_every(text: str) -> dict[str, object]:
    spec = text[len("every") :].strip()
    if not spec:
        raise ScheduleError("'every' needs an interval, e.g. 'every 10m', 'every 2h', 'every 1d'")
    total, pos, parts = 0, 0, []
    for match in _PART.finditer(spec):
        if spec[pos : match.start()].strip():
            break
        count, unit = match.group(1), match.group(2)
        if unit not in _UNITS:
            raise ScheduleError(f"unknown unit {unit!r} in {text!r}; use s, m, h or d")
        amount = int(count) if count else 1
        total += amount * _UNITS[unit]
        parts.append(f"{amount}{unit[0]}")
        pos = match.end()
    if not parts or spec[pos:].strip():
        raise ScheduleError(f"cannot read the interval in {text!r}; write it like 'every 10m' or 'every 1h30m'")
    interval = timedelta(seconds=total)
    if interval < MIN_INTERVAL:
        raise ScheduleError(f"the interval in {text!r} is under the minimum of 1 minute")
    return {"text": "every " + "".join(parts), "interval": interval}


def _parse_iso(text: str, zone: ZoneInfo) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ScheduleError(f"{text!r} is not a valid ISO 8601 time ({exc}); write it like 2026-05-01T09:00") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    return when.astimezone(UTC)


def _check_cron(text: str, zone: ZoneInfo) -> str:
    if text.startswith("@"):
        if text.lower() not in CRON_MACROS:
            raise ScheduleError(f"unknown cron macro {text!r}; use one of {', '.join(sorted(CRON_MACROS))}")
        text = text.lower()
    else:
        fields = text.split(" ")
        if len(fields) != 5:
            raise ScheduleError(
                f"{text!r} is not a schedule: a cron expression has 5 fields "
                f"(minute hour day-of-month month day-of-week), this has {len(fields)}; or use {FORMS}"
            )
    try:
        croniter(text, datetime(2000, 1, 1))
    except CroniterError as exc:
        raise ScheduleError(f"invalid cron expression {text!r}: {exc}") from None
    try:
        _next_cron(text, zone, datetime.now(UTC))
    except CroniterBadDateError:
        raise ScheduleError(f"the cron expression {text!r} never fires (no such date)") from None
    return text


def _next_cron(expression: str, zone: ZoneInfo, after: datetime) -> datetime:
    # Iterate on naive wall-clock time and place each candidate in the zone (fold=0): a skipped
    # time lands just after the jump, a repeated one on its first occurrence. A candidate that
    # lands at or before `after` (e.g. two skipped times mapping to one instant) is passed over.
    start = after.astimezone(zone).replace(tzinfo=None)
    times = croniter(expression, start)
    for _ in range(16):
        local: datetime = times.get_next(datetime)
        candidate = local.replace(tzinfo=zone).astimezone(UTC)
        if candidate > after:
            return candidate
    raise CroniterBadDateError(f"no run of {expression!r} after {after.isoformat()}")


# jobs: built from requests, edited, resumed


def parsed_schedule_of(job: Schedule) -> ParsedSchedule:
    """The stored job's schedule, parsed again (it was validated when saved)."""
    return parse_schedule(job.schedule, job.timezone)


def new_schedule(body: ScheduleCreate, *, now: datetime) -> Schedule:
    """A new active job from a request; its first run is the schedule's first time after `now`."""
    parsed = parse_schedule(body.schedule, body.timezone, now=now)
    name = body.name.strip() if body.name and body.name.strip() else _name_from(body.prompt)
    return Schedule(
        id=uuid.uuid4().hex[:12],
        name=name,
        schedule=parsed.text,
        kind=parsed.kind,
        timezone=parsed.timezone,
        prompt=body.prompt,
        mode=body.mode,
        session_id=body.session_id,
        workspace=body.workspace,
        agent=body.agent,
        next_run_at=parsed.next_after(now, anchor=now),
        anchor_at=now,
        created_by_session=body.created_by_session,
        created_at=now,
        updated_at=now,
    )


def updated_schedule(job: Schedule, body: ScheduleUpdate, *, now: datetime) -> Schedule:
    """The job with the request's fields applied; a new schedule or zone restarts its timing."""
    changes: dict[str, object] = body.model_dump(exclude_unset=True)
    # An explicit null clears only what may be empty (target session, workspace; zone = default).
    for required in ("schedule", "prompt", "name", "mode"):
        if changes.get(required, "") is None:
            del changes[required]
    if "name" in changes:
        changes["name"] = str(changes["name"]).strip() or job.name
    if "schedule" in changes or "timezone" in changes:
        text = changes.pop("schedule", None) or job.schedule
        zone = changes.pop("timezone") if "timezone" in changes else job.timezone
        parsed = parse_schedule(str(text), zone if zone is None else str(zone), now=now)
        status = "active" if job.status == "done" else job.status
        changes |= {
            "schedule": parsed.text,
            "kind": parsed.kind,
            "timezone": parsed.timezone,
            "anchor_at": now,
            "status": status,
            "next_run_at": parsed.next_after(now, anchor=now) if status == "active" else None,
        }
    return job.model_copy(update={**changes, "updated_at": now})


def resumed_schedule(job: Schedule, *, now: datetime) -> Schedule:
    """The job active again, next run counted from `now`; a one-shot whose time passed cannot resume."""
    if job.status == "done":
        raise Conflict(f"schedule {job.id} has finished; give it a new schedule to run it again")
    next_run = parsed_schedule_of(job).next_after(now, anchor=job.anchor_at)
    if next_run is None:
        raise Conflict(f"the one-shot time of schedule {job.id} has passed; give it a new time to resume it")
    return job.model_copy(update={"status": "active", "next_run_at": next_run, "updated_at": now})


def _name_from(prompt: str) -> str:
    first = prompt.strip().splitlines()[0] if prompt.strip() else "Scheduled run"
    return first if len(first) <= 60 else first[:59] + "…"
