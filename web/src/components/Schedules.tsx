// Schedules: cron jobs that start agent runs. The list with each job's next run (in this
// browser's local time) and how its last run went, pause/resume/delete, and a small create form.

import { useEffect, useState, type FormEvent } from "react";
import { api, errorText } from "../api";
import { useLoad, useNow } from "../hooks";
import { useModes } from "../modes";
import { formatAge, formatTime, truncate } from "../format";
import { sessionHref } from "../router";
import type { Schedule, ScheduleRunStatus } from "../types";

// Run results arrive without an event of their own; a slow refresh keeps the list honest.
const REFRESH_MS = 15_000;

const RUN_BADGE: Record<ScheduleRunStatus, string> = {
  running: "status-running",
  completed: "status-completed",
  error: "status-error",
  stopped: "",
  skipped: "effect-ask",
  missed: "effect-ask",
};

function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}


/** "in 5m" / "5m ago" next to an absolute time. */
function relative(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  if (ms <= 0) return formatAge(iso, now);
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return "in <1m";
  if (minutes < 60) return `in ${minutes}m`;
  if (minutes < 48 * 60) return `in ${Math.round(minutes / 60)}h`;
  return `in ${Math.round(minutes / 1440)}d`;
}

function CreateForm({ onCreated }: { onCreated: (job: Schedule) => void }) {
  const [name, setName] = useState("");
  const [schedule, setSchedule] = useState("");
  const [prompt, setPrompt] = useState("");
  const [mode, setMode] = useState("agent");
  const modes = useModes();
  const [timezone, setTimezone] = useState(browserZone);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const job = await api.createSchedule({
        schedule: schedule.trim(),
        prompt: prompt.trim(),
        name: name.trim() || undefined,
        mode,
        timezone: timezone.trim() || undefined,
      });
      setName("");
      setSchedule("");
      setPrompt("");
      onCreated(job);
    } catch (e) {
      // The server names what is wrong with the schedule (400) or the fields (422).
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="schedule-form" onSubmit={submit} aria-label="New schedule" data-testid="schedule-form">
      <div className="schedule-form-grid">
        <label>
          Name
          <input data-testid="schedule-name" value={name} placeholder="from the prompt" onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Schedule
          <input
            data-testid="schedule-text"
            value={schedule}
            placeholder="0 9 * * 1-5 · every 2h · 2026-05-01T09:00"
            spellCheck={false}
            required
            onChange={(e) => setSchedule(e.target.value)}
          />
        </label>
        <label>
          Time zone
          <input data-testid="schedule-timezone" value={timezone} spellCheck={false} onChange={(e) => setTimezone(e.target.value)} />
        </label>
        <label>
          Mode
          <select data-testid="schedule-mode" value={mode} onChange={(e) => setMode(e.target.value)}>
            {(modes ?? [{ name: "agent", icon: null }]).map((m) => (
              <option key={m.name} value={m.name}>
                {m.icon ? `${m.icon} ${m.name}` : m.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label>
        Prompt
        <textarea
          data-testid="schedule-prompt"
          rows={2}
          value={prompt}
          required
          placeholder="What should the agent do at each run?"
          onChange={(e) => setPrompt(e.target.value)}
        />
      </label>
      {error && (
        <p className="error-text" role="alert" data-testid="schedule-error">
          {error}
        </p>
      )}
      <div>
        <button type="submit" className="btn primary" data-testid="schedule-create" disabled={busy || !schedule.trim() || !prompt.trim()}>
          Add schedule
        </button>
      </div>
    </form>
  );
}

function ScheduleRow({ job, now, onChanged, onDeleted }: { job: Schedule; now: number; onChanged: (job: Schedule) => void; onDeleted: (id: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const act = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <tr data-testid="schedule-row" data-schedule-id={job.id} data-status={job.status}>
      <td>
        <strong>{job.name}</strong>
        <div className="muted small" title={job.prompt}>
          {truncate(job.prompt, 100)}
        </div>
      </td>
      <td>
        <code>{job.schedule}</code>
        <div className="muted small">{job.timezone}</div>
      </td>
      <td>
        {job.mode}
        {job.session_id && (
          <div className="small">
            into <a href={sessionHref(job.session_id)}>{job.session_id.slice(0, 8)}</a>
          </div>
        )}
      </td>
      <td className="nowrap" data-testid="schedule-next">
        <span className={`badge sched-${job.status}`} data-testid="schedule-status">
          {job.status}
        </span>
        {job.next_run_at && (
          <div className="small" title={job.next_run_at}>
            {formatTime(job.next_run_at)} <span className="muted">({relative(job.next_run_at, now)})</span>
          </div>
        )}
      </td>
      <td data-testid="schedule-last">
        {job.last_status ? (
          <>
            <span className={`badge ${RUN_BADGE[job.last_status]}`} data-testid="schedule-last-status">
              {job.last_status}
            </span>{" "}
            {job.last_run_at && <span className="small muted">{formatAge(job.last_run_at, now)}</span>}
            {job.last_session_id && (
              <>
                {" "}
                <a className="small" href={sessionHref(job.last_session_id)}>
                  session
                </a>
              </>
            )}
            {job.last_result && <div className="small schedule-result">{truncate(job.last_result, 160)}</div>}
          </>
        ) : (
          <span className="muted small">not run yet</span>
        )}
      </td>
      <td className="schedule-actions">
        {job.status === "active" && (
          <button type="button" className="btn small" data-testid="schedule-pause" disabled={busy} onClick={() => void act(async () => onChanged(await api.pauseSchedule(job.id)))}>
            Pause
          </button>
        )}
        {job.status === "paused" && (
          <button type="button" className="btn small" data-testid="schedule-resume" disabled={busy} onClick={() => void act(async () => onChanged(await api.resumeSchedule(job.id)))}>
            Resume
          </button>
        )}
        {confirming ? (
          <>
            <button
              type="button"
              className="btn small danger"
              data-testid="schedule-delete-confirm"
              disabled={busy}
              onClick={() => void act(async () => {
                await api.deleteSchedule(job.id);
                onDeleted(job.id);
              })}
            >
              Delete for good
            </button>
            <button type="button" className="btn small subtle" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" className="btn small subtle" data-testid="schedule-delete" aria-label={`Delete schedule ${job.name}`} onClick={() => setConfirming(true)}>
            Delete
          </button>
        )}
        {error && (
          <p className="error-text small" role="alert">
            {error}
          </p>
        )}
      </td>
    </tr>
  );
}

export function SchedulesView() {
  const { data: jobs, setData: setJobs, error, reload: load } = useLoad<Schedule[]>(() => api.schedules());
  const now = useNow(true, 30_000);

  useEffect(() => {
    const timer = window.setInterval(load, REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [load]);

  const replace = (job: Schedule) => setJobs((list) => (list ?? []).map((j) => (j.id === job.id ? job : j)));

  return (
    <main className="main schedules" data-testid="schedules-view" aria-label="Schedules">
      <div className="section-head">
        <h1>Schedules</h1>
        <button type="button" className="btn small" onClick={load}>
          Refresh
        </button>
      </div>
      <p className="muted">
        Each run is a session marked as coming from cron; its tool calls wait for approval here like any other. A job never
        runs twice at once.
      </p>
      <section className="settings-section" aria-labelledby="schedules-heading">
        <h2 id="schedules-heading" className="visually-hidden">
          Scheduled jobs
        </h2>
        {error && (
          <p className="error-text" role="alert">
            {error}
          </p>
        )}
        {jobs === null ? (
          <p className="muted">Loading…</p>
        ) : (
          <div className="table-scroll">
            <table className="schedules-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Schedule</th>
                  <th scope="col">Mode</th>
                  <th scope="col">Next run</th>
                  <th scope="col">Last run</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {jobs.map((job) => (
                  <ScheduleRow key={job.id} job={job} now={now} onChanged={replace} onDeleted={(id) => setJobs((list) => (list ?? []).filter((j) => j.id !== id))} />
                ))}
                {jobs.length === 0 && (
                  <tr>
                    <td colSpan={6} className="muted" data-testid="schedules-empty">
                      No schedules yet.
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section className="settings-section" aria-labelledby="new-schedule-heading">
        <h2 id="new-schedule-heading">New schedule</h2>
        <CreateForm onCreated={(job) => setJobs((list) => [...(list ?? []), job])} />
      </section>
    </main>
  );
}
