// Workflows: definitions (steps of modes, with a gate where a person approves before the next
// step) and their runs. "Run" starts one with an input; the runs list (newest first) links each
// step to its session and says when a run waits at a gate. Refreshed while any run is active.

import { useEffect, useState, type FormEvent } from "react";
import { api, errorText } from "../api";
import { formatAge, truncate } from "../format";
import { useLoad, useNow } from "../hooks";
import { modeLabel, useModes } from "../modes";
import { sessionHref } from "../router";
import type { Mode, Workflow, WorkflowRun, WorkflowRunStatus } from "../types";

const POLL_MS = 3000;

const RUN_BADGE: Record<WorkflowRunStatus, string> = {
  running: "status-running",
  waiting_approval: "status-waiting_approval",
  completed: "status-completed",
  failed: "status-error",
  denied: "status-error",
  stopped: "",
};

const RUN_LABEL: Record<WorkflowRunStatus, string> = {
  running: "running",
  waiting_approval: "waiting for you",
  completed: "completed",
  failed: "failed",
  denied: "denied",
  stopped: "stopped",
};


function isActive(run: WorkflowRun): boolean {
  return run.status === "running" || run.status === "waiting_approval";
}

function StepChain({ workflow, modes }: { workflow: Workflow; modes: Mode[] | null }) {
  return (
    <ol className="step-chain" data-testid="workflow-steps" aria-label="Steps">
      {workflow.steps.map((step, i) => (
        <li key={i}>
          {i > 0 && workflow.steps[i - 1].approve && (
            <>
              <span className="step-arrow" aria-hidden="true">
                →
              </span>
              <span className="step-gate" data-testid="step-gate" title="You approve (or edit) the next prompt before this step starts">
                <span aria-hidden="true">🔒</span> you approve
              </span>
            </>
          )}
          {i > 0 && (
            <span className="step-arrow" aria-hidden="true">
              →
            </span>
          )}
          <span className="chip step-mode" title={step.prompt}>
            {modeLabel(step.mode, modes)}
          </span>
        </li>
      ))}
    </ol>
  );
}

function WorkflowCard({ workflow, modes, onStarted }: { workflow: Workflow; modes: Mode[] | null; onStarted: (run: WorkflowRun) => void }) {
  const [open, setOpen] = useState(false);
  const [input, setInput] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const start = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onStarted(await api.startWorkflow(workflow.name, input));
      setInput("");
      setOpen(false);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <li className="workflow-card" data-testid="workflow-card" data-workflow={workflow.name}>
      <div className="section-head">
        <div>
          <strong>{workflow.name}</strong> <span className="badge">{workflow.source === "builtin" ? "built-in" : "yours"}</span>
          <div className="muted small">{workflow.description}</div>
        </div>
        <button type="button" className="btn small" data-testid="workflow-run" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "Close" : "Run"}
        </button>
      </div>
      <StepChain workflow={workflow} modes={modes} />
      {open && (
        <form className="schedule-form" onSubmit={start} aria-label={`Run ${workflow.name}`}>
          <label>
            Input <span className="muted small">(the steps' {"{{input}}"})</span>
            <textarea
              data-testid="workflow-input"
              rows={3}
              autoFocus
              value={input}
              placeholder="What should this run work on?"
              onChange={(e) => setInput(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void start(e);
              }}
            />
          </label>
          {error && (
            <p className="error-text" role="alert" data-testid="workflow-error">
              {error}
            </p>
          )}
          <div>
            <button type="submit" className="btn primary" data-testid="workflow-start" disabled={busy || !input.trim()}>
              Start run
            </button>
          </div>
        </form>
      )}
    </li>
  );
}

function RunRow({ run, modes, now, onChanged }: { run: WorkflowRun; modes: Mode[] | null; now: number; onChanged: (run: WorkflowRun) => void }) {
  const [error, setError] = useState<string | null>(null);
  const gateStep = run.status === "waiting_approval" ? run.steps[run.current] : null;
  const gateSession = gateStep && run.current > 0 ? run.steps[run.current - 1].session_id : null;
  const stop = async () => {
    setError(null);
    try {
      onChanged(await api.stopWorkflowRun(run.id));
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <tr data-testid="run-row" data-run-id={run.id} data-status={run.status}>
      <td>
        <strong>{run.workflow}</strong>
        <div className="muted small" title={run.input}>
          {truncate(run.input, 100)}
        </div>
        <div className="muted small" title={new Date(run.created_at).toLocaleString()}>
          started {formatAge(run.created_at, now)}
        </div>
      </td>
      <td>
        <span className={`badge ${RUN_BADGE[run.status]}`} data-testid="run-status">
          {RUN_LABEL[run.status]}
        </span>
        {gateStep && (
          <p className="small run-gate" data-testid="run-gate">
            Waiting for your approval to start step {gateStep.index + 1} ({gateStep.mode}):{" "}
            {gateSession ? <a href={sessionHref(gateSession)}>review it</a> : null} or answer it in the <a href="#/">inbox</a>.
          </p>
        )}
        {run.detail && !isActive(run) && <p className="small muted run-detail">{truncate(run.detail, 200)}</p>}
      </td>
      <td>
        <ol className="run-steps">
          {run.steps.map((step) => (
            <li key={step.index} data-testid="run-step" data-status={step.status}>
              <span className="chip step-mode">{modeLabel(step.mode, modes)}</span>{" "}
              {step.session_id ? (
                <a href={sessionHref(step.session_id)} data-testid="run-step-link">
                  {step.status}
                </a>
              ) : (
                <span className="muted">{step.status}</span>
              )}
              {step.prompt_edited && <span className="muted small"> (prompt edited)</span>}
              {step.error && <span className="error-text small"> {truncate(step.error, 120)}</span>}
            </li>
          ))}
        </ol>
      </td>
      <td className="schedule-actions">
        {isActive(run) && (
          <button type="button" className="btn small subtle" data-testid="run-stop" onClick={() => void stop()}>
            Stop
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

export function WorkflowsView() {
  const modes = useModes();
  const definitions = useLoad<Workflow[]>(() => api.workflows());
  const workflows = definitions.data;
  const { data: runs, setData: setRuns, error: runsError, reload: loadRuns } = useLoad<WorkflowRun[]>(() => api.workflowRuns());
  const error = definitions.error ?? runsError;
  const now = useNow(true, 30_000);

  // A run moves on without an event of its own here: look again while any is active.
  const anyActive = runs?.some(isActive) ?? false;
  useEffect(() => {
    if (!anyActive) return;
    const timer = window.setInterval(loadRuns, POLL_MS);
    return () => window.clearInterval(timer);
  }, [anyActive, loadRuns]);

  const upsert = (run: WorkflowRun) =>
    setRuns((list) => [run, ...(list ?? []).filter((r) => r.id !== run.id)].sort((a, b) => b.created_at.localeCompare(a.created_at)));

  return (
    <main className="main workflows" data-testid="workflows-view" aria-label="Workflows">
      <div className="section-head">
        <h1>Workflows</h1>
        <button type="button" className="btn small" onClick={loadRuns}>
          Refresh
        </button>
      </div>
      <p className="muted">
        A workflow runs its steps one after another, each as a session in its mode. At a 🔒 gate you approve (or edit) the
        next step's prompt before it starts; the request waits in your inbox.
      </p>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      <section className="settings-section" aria-labelledby="workflow-defs-heading">
        <h2 id="workflow-defs-heading">Definitions</h2>
        {workflows === null ? (
          <p className="muted">Loading…</p>
        ) : workflows.length === 0 ? (
          <p className="muted">No workflows defined.</p>
        ) : (
          <ul className="workflow-list">
            {workflows.map((w) => (
              <WorkflowCard key={w.name} workflow={w} modes={modes} onStarted={upsert} />
            ))}
          </ul>
        )}
      </section>
      <section className="settings-section" aria-labelledby="workflow-runs-heading">
        <h2 id="workflow-runs-heading">Runs</h2>
        {runs === null ? (
          <p className="muted">Loading…</p>
        ) : runs.length === 0 ? (
          <p className="muted" data-testid="runs-empty">
            No runs yet.
          </p>
        ) : (
          <div className="table-scroll">
            <table className="runs-table">
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Status</th>
                  <th scope="col">Steps</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {runs.map((run) => (
                  <RunRow key={run.id} run={run} modes={modes} now={now} onChanged={upsert} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </main>
  );
}
