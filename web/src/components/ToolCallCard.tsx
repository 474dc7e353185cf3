// One tool call in a session's transcript: its card (status, arguments, decision, result), what it
// returned beyond text, its step's changes or why it has no checkpoint, and Retry after a denial.

import { useState } from "react";
import { argumentSummary, formatDuration, splitToolName, truncate } from "../format";
import { useNow } from "../hooks";
import { writesWorkspace } from "../checkpoints";
import { CHECKPOINTS_OFF, NoCheckpoint, StepChangesPanel } from "./StepChanges";
import { SentArguments, showsSentText } from "./SentArguments";
import { upsertSession } from "../store";
import type { MediaFile, StepChanges, StopReason, ToolCall, ToolProgress } from "../types";
import { stepsApi } from "../outcome";
import { useToolTitle } from "../names";
import { ArgumentsView } from "./Arguments";
import { OutsideTextTag } from "./UntrustedContent";

const STATUS_TEXT: Record<ToolCall["status"], string> = {
  pending: "queued",
  waiting_approval: "waiting for you",
  running: "running",
  done: "done",
  error: "failed",
  denied: "denied",
  interrupted: "interrupted",
  stopped: "stopped",
};

/** Said of an image or clip the tool marked `audience: ["user"]`: the person's, kept from the model. */
const FOR_YOU_ALONE = "For you alone: not sent to the model";

/** What a tool returned beyond text: images (each opens full size) and audio, always in view. */
function ToolMedia({ sessionId, media }: { sessionId: string; media: MediaFile[] }) {
  if (media.length === 0) return null;
  const url = (m: MediaFile) => `/api/sessions/${encodeURIComponent(sessionId)}/media/${encodeURIComponent(m.name)}`;
  const shown = (m: MediaFile) =>
    m.kind === "image" ? (
      <a key={m.name} href={url(m)} target="_blank" rel="noreferrer" title={`${m.mime_type}, ${formatBytes(m.size)}: open full size`}>
        <img src={url(m)} alt={`Image returned by the tool (${m.mime_type})`} loading="lazy" data-testid="tool-media-image" />
      </a>
    ) : (
      <audio key={m.name} controls preload="none" src={url(m)} data-testid="tool-media-audio" title={`${m.mime_type}, ${formatBytes(m.size)}`} />
    );
  return (
    <div className="tool-media" data-testid="tool-media">
      {media.map((m) =>
        m.for_user_only ? (
          // The tool marked it for the person (audience: user): say so, so no one takes it for what the model saw.
          <figure key={m.name} style={{ margin: 0 }} data-testid="tool-media-for-you">
            {shown(m)}
            <figcaption className="muted">{FOR_YOU_ALONE}</figcaption>
          </figure>
        ) : (
          shown(m)
        ),
      )}
    </div>
  );
}

/** What the tool last said of its progress: a bar when it gave a total, and its message. */
function ProgressView({ progress }: { progress: ToolProgress }) {
  const { total, message } = progress;
  const amount = total ? `${progress.progress}/${total}` : String(progress.progress);
  return (
    <span className="tool-card-progress" data-testid="tool-call-progress">
      {total ? <progress value={progress.progress} max={total} aria-label="Progress" /> : null}
      <span>{message ? `${message} (${amount})` : amount}</span>
    </span>
  );
}

function formatBytes(size: number): string {
  if (size < 1024) return `${size} bytes`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}

/** Under a call a person denied (or let time out): ask it again. */
function RetryStep({ sessionId, callId, reason }: { sessionId: string; callId: string; reason: StopReason }) {
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  const retry = async () => {
    setState({ busy: true, error: null });
    try {
      upsertSession(await stepsApi.retry(sessionId, callId));
      setState({ busy: false, error: null });
    } catch (e) {
      setState({ busy: false, error: e instanceof Error ? e.message : String(e) });
    }
  };
  return (
    <div className="tool-retry" data-testid="tool-retry">
      <span className="muted">{reason === "timed_out" ? "Nobody answered in time." : "You denied this step."}</span>
      <button type="button" className="btn" data-testid="retry-step" disabled={state.busy} onClick={() => void retry()}>
        Retry
      </button>
      <span className="muted small">asks you again before it runs</span>
      {state.error && (
        <span className="error-text" role="alert" data-testid="retry-error">
          {state.error}
        </span>
      )}
    </div>
  );
}

/** What ties a tool call to its checkpoint: its step (when it has one) and what to do after a rewind. */
export interface StepLink {
  byCall: Map<string, StepChanges>;
  /** Why a call's checkpoint could not be taken, by call id. */
  failed: Map<string, string>;
  /** Whether the host keeps checkpoints (null: not known yet). */
  enabled: boolean | null;
  onRewound: () => void;
}

/** Statuses of a call that has not run (and so changed nothing yet). */
const NOT_RUN = new Set<ToolCall["status"]>(["pending", "waiting_approval", "denied"]);

/** Whether the call ran (or is running): a call stopped or interrupted before it started did not. */
function ran(call: ToolCall): boolean {
  if (NOT_RUN.has(call.status)) return false;
  return call.started_at !== null || call.status === "done" || call.status === "error";
}

/** Why a call that ran has no checkpoint, when that is known: it failed, or checkpoints are off. */
function missingCheckpoint(call: ToolCall, steps: StepLink | undefined): string | null {
  if (!steps || !ran(call) || steps.byCall.has(call.id)) return null;
  const failed = steps.failed.get(call.id);
  if (failed !== undefined) return failed;
  return steps.enabled === false && writesWorkspace(call.name) ? CHECKPOINTS_OFF : null;
}

export function ToolCallCard({ call, sessionId, refused, steps }: { call: ToolCall; sessionId: string; refused?: StopReason; steps?: StepLink }) {
  const step = steps?.byCall.get(call.id);
  const running = call.status === "running";
  const now = useNow(running);
  const { server, tool } = splitToolName(call.name);
  const title = useToolTitle(call.name);
  const started = call.started_at ? Date.parse(call.started_at) : null;
  const finished = call.finished_at ? Date.parse(call.finished_at) : null;
  const duration = started !== null ? (finished ?? now) - started : null;
  const missing = missingCheckpoint(call, steps);
  return (
    <>
    <details className={`tool-card status-${call.status}`} data-testid="tool-call" data-tool-call-id={call.id} data-status={call.status}>
      <summary>
        <span className={`tool-dot dot-${call.status}`} aria-hidden="true" />
        <span className="tool-card-name" data-testid="tool-call-title" title={call.name}>
          {title ?? tool}
        </span>
        {server && <span className="chip server-chip">{server}</span>}
        <OutsideTextTag source={call.untrusted} />
        <span className="tool-card-args">{truncate(argumentSummary(call.arguments), 80)}</span>
        <span className={`tool-card-status status-text-${call.status}`} data-testid="tool-call-status">
          {STATUS_TEXT[call.status] ?? call.status}
        </span>
        {running && call.progress && <ProgressView progress={call.progress} />}
        {duration !== null && <span className="tool-card-duration">{formatDuration(duration)}</span>}
      </summary>
      <div className="tool-card-body">
        <h4>Arguments</h4>
        {/* Once it ran, what a write or edit changed is its step's diff (below), not its arguments. */}
        {ran(call) && showsSentText(call.name) ? (
          <SentArguments args={call.arguments} recorded={step !== undefined} />
        ) : (
          <ArgumentsView name={call.name} args={call.arguments} />
        )}
        {call.decision && (
          <p className="tool-decision" data-testid="tool-call-decision">
            {call.status !== "denied" && <span className="muted">Let it run:</span>} {call.decision}
          </p>
        )}
        {call.result !== null && call.result !== undefined && (
          <>
            <h4>{call.is_error ? "Error" : "Result"}</h4>
            <pre className={`code result${call.is_error ? " is-error" : ""}`} data-testid="tool-call-result">
              <code>{call.result || "(no output)"}</code>
            </pre>
          </>
        )}
      </div>
    </details>
    <ToolMedia sessionId={sessionId} media={call.media ?? []} />
    {step && steps && <StepChangesPanel step={step} sessionId={sessionId} onRewound={steps.onRewound} />}
    {missing !== null && <NoCheckpoint reason={missing} />}
    {refused && call.status === "denied" && <RetryStep sessionId={sessionId} callId={call.id} reason={refused} />}
    </>
  );
}
