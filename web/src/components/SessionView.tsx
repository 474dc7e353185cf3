// One session: header (status, usage, Stop), the transcript with tool-call cards, the session's
// approval queue and the composer.

import { Fragment, useEffect, useMemo, useRef, useState } from "react";
import { api } from "../api";
import { argumentSummary, formatCost, formatDuration, formatTokens, splitToolName, truncate } from "../format";
import { useNow } from "../hooks";
import { revealDecision } from "../reveal";
import { navigate, sessionHref } from "../router";
import { modeLabel, useModes } from "../modes";
import { useSessionDetail, type TimelineNote } from "../sessionDetail";
import { CheckpointChanges, NoCheckpointsView } from "./ChangesView";
import { stepsByCall, useCheckpointStatus, useCheckpoints, useNetChange, writesWorkspace } from "../checkpoints";
import { CHECKPOINTS_OFF, NoCheckpoint, RewindEntry, StepChangesPanel } from "./StepChanges";
import { SentArguments, showsSentText } from "./SentArguments";
import { decidedList, forgetSession, pendingList, upsertSession, useAppState } from "../store";
import type { MediaFile, Message, Session, StepChanges, StopReason, ToolCall, ToolProgress } from "../types";
import { stepsApi, stopNote, useRefusedCalls } from "../outcome";
import { useServers } from "../standing";
import { ToolTitles, toolTitles, useToolTitle } from "../names";
import { StandingStrip, StartupProgress } from "./SessionStartup";
import { Breadcrumb } from "./ApprovalCard";
import { ApprovalQueue } from "./ApprovalQueue";
import { AutoApproveSwitch } from "./AutoApproveSwitch";
import { ArgumentsView } from "./Arguments";
import { Attachments } from "./Attachments";
import { Composer } from "./Composer";
import { OutsideTextTag } from "./UntrustedContent";
import { MessageText, StreamingReply } from "./Reply";
import { StatusBadge } from "./Sidebar";

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
interface StepLink {
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

function ToolCallCard({ call, sessionId, refused, steps }: { call: ToolCall; sessionId: string; refused?: StopReason; steps?: StepLink }) {
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

function MessageBubble({
  message,
  toolCalls,
  resultFor,
  sessionId,
  refused,
  steps,
}: {
  message: Message;
  toolCalls: Record<string, ToolCall>;
  resultFor: Map<string, Message>;
  sessionId: string;
  refused: Record<string, StopReason>;
  steps: StepLink;
}) {
  if (message.role === "tool" || message.role === "system") return null;
  return (
    <div className={`message message-${message.role}`} data-testid={`message-${message.role}`}>
      <MessageText message={message} />
      {message.attachments && <Attachments items={message.attachments} />}
      {message.tool_calls?.map((request) => {
        const known = toolCalls[request.id];
        const fallback = resultFor.get(request.id);
        const call: ToolCall = known ?? {
          id: request.id,
          name: request.name,
          arguments: request.arguments ?? {},
          status: fallback ? (fallback.is_error ? "error" : "done") : "pending",
          decision: null,
          result: fallback?.content ?? null,
          is_error: fallback?.is_error ?? false,
          media: fallback?.media ?? [],
          started_at: null,
          finished_at: null,
        };
        return <ToolCallCard key={request.id} call={call} sessionId={sessionId} refused={refused[request.id]} steps={steps} />;
      })}
    </div>
  );
}

function Note({ note }: { note: TimelineNote }) {
  if (note.kind === "cleared") {
    return (
      <div className="history-divider" role="separator" data-testid="history-cleared">
        <span>{note.text}</span>
      </div>
    );
  }
  return (
    <div className={`timeline-note note-${note.kind}${note.status ? ` note-${note.status}` : ""}`} data-testid="timeline-note" data-kind={note.kind}>
      {note.text}
      {note.kind === "workflow" && (
        <>
          {" "}
          <a href="#/workflows">workflows</a>
        </>
      )}
    </div>
  );
}

/** Rewinds grouped by the message they follow (the last one created before them; -1: before all). */
function placeRewinds(messages: Message[], steps: StepChanges[] | null): Map<number, StepChanges[]> {
  const placed = new Map<number, StepChanges[]>();
  for (const step of steps ?? []) {
    if (step.kind !== "rewind") continue;
    const at = Date.parse(step.created_at);
    let anchor = -1;
    for (const m of messages) {
      if (Date.parse(m.created_at) <= at) anchor = m.idx;
      else break;
    }
    placed.set(anchor, [...(placed.get(anchor) ?? []), step]);
  }
  return placed;
}

/** Notes grouped by the message they follow: the last message at or before each note's `after`. */
function placeNotes(messages: Message[], notes: TimelineNote[]): { before: TimelineNote[]; after: Map<number, TimelineNote[]> } {
  const before: TimelineNote[] = [];
  const after = new Map<number, TimelineNote[]>();
  for (const note of notes) {
    let anchor: number | null = null;
    for (const m of messages) {
      if (m.idx <= note.after) anchor = m.idx;
      else break;
    }
    if (anchor === null) before.push(note);
    else after.set(anchor, [...(after.get(anchor) ?? []), note]);
  }
  return { before, after };
}

export function SessionView({ id }: { id: string }) {
  const state = useAppState();
  const detail = useSessionDetail(id, state.liveEpoch);
  const session: Session | undefined = state.sessions[id] ?? detail.detail ?? undefined;
  const pending = pendingList(state, id);
  const decided = decidedList(state, id);
  const endRef = useRef<HTMLDivElement>(null);
  const children = Object.values(state.sessions).filter((s) => s.parent_id === id);

  const resultFor = useMemo(() => {
    const map = new Map<string, Message>();
    for (const m of detail.messages) if (m.role === "tool" && m.tool_call_id) map.set(m.tool_call_id, m);
    return map;
  }, [detail.messages]);
  const shown = useMemo(() => {
    const ids = new Set<string>();
    for (const m of detail.messages) for (const c of m.tool_calls ?? []) ids.add(c.id);
    return ids;
  }, [detail.messages]);
  const orphans = Object.values(detail.toolCalls).filter((c) => !shown.has(c.id));
  const streaming = detail.tokens.map((t) => t.text).join("");
  const thinking = detail.thinking.map((t) => t.text).join("");
  const placed = useMemo(() => placeNotes(detail.messages, detail.notes), [detail.messages, detail.notes]);
  const modes = useModes();
  const [tab, setTab] = useState<"conversation" | "changes">("conversation");
  const checkpoints = useCheckpoints(id, state.liveEpoch);
  const checkpointStatus = useCheckpointStatus(id, state.liveEpoch);
  const enabled = checkpointStatus?.enabled ?? null;
  const steps: StepLink = useMemo(
    () => ({ byCall: stepsByCall(checkpoints.steps), failed: checkpoints.failed, enabled, onRewound: checkpoints.reload }),
    [checkpoints.steps, checkpoints.failed, enabled, checkpoints.reload],
  );
  const rewinds = useMemo(() => placeRewinds(detail.messages, checkpoints.steps), [detail.messages, checkpoints.steps]);
  const hasCheckpoints = (checkpoints.steps?.length ?? 0) > 0;
  const net = useNetChange(id, checkpoints.steps, tab === "changes" && hasCheckpoints);
  const servers = useServers();
  const titles = useMemo(() => toolTitles(servers), [servers]);
  const deniedCount = Object.values(detail.toolCalls).filter((c) => c.status === "denied").length;
  const refused = useRefusedCalls(session, deniedCount);

  useEffect(() => {
    endRef.current?.scrollIntoView({ block: "end" });
    // The open request sits below the transcript: keep it in view, not just the transcript's end
    // (issue 33, item 2: the card landed below the fold while the transcript grew).
    const card = endRef.current?.closest(".session-view")?.querySelector<HTMLElement>(".session-approvals .approval-card");
    if (card) revealDecision(card);
  }, [detail.messages.length, detail.notes.length, streaming.length, thinking.length, pending.length]);

  if (!session) {
    return (
      <main className="main" data-testid="session-view">
        <p className={detail.error ? "error-text" : "muted"}>{detail.error ?? "Loading session…"}</p>
      </main>
    );
  }
  const usage = detail.usage ?? session.usage ?? { input_tokens: 0, output_tokens: 0, cost_usd: 0 };
  const active =
    session.status === "running" || session.status === "waiting_approval" || pending.some((a) => a.session_id === id);

  const stop = async () => {
    try {
      upsertSession(await api.stopSession(id));
    } catch {
      /* the status event tells the truth either way */
    }
  };
  const remove = async () => {
    if (!window.confirm("Delete this session and its transcript?")) return;
    await api.deleteSession(id);
    forgetSession(id);
    navigate("#/");
  };

  return (
    <ToolTitles.Provider value={titles}>
    <main className="main session-view" data-testid="session-view" aria-label={session.title || "Session"}>
      <header className="session-head">
        <div className="session-head-main">
          {session.parent_id && <Breadcrumb sessionId={session.id} sessions={state.sessions} />}
          <h1 data-testid="session-title">{session.title || `Session ${session.id.slice(0, 8)}`}</h1>
          <StatusBadge session={session} waiting={pending.length} />
          <a className="badge mode-badge" href={`#/modes/${encodeURIComponent(session.mode)}`} data-testid="session-mode" data-mode={session.mode} title="This session's mode">
            {modeLabel(session.mode, modes)}
          </a>
          {session.engine === "claude-sdk" && (
            <span className="badge" data-testid="session-engine" title="Driven by Claude Code's loop (Claude Agent SDK)">
              Claude Agent SDK
            </span>
          )}
        </div>
        <div className="session-head-side">
          <span
            className="usage"
            data-testid="session-usage"
            title={`${formatTokens(usage.input_tokens)} input tokens, ${formatTokens(usage.output_tokens)} output tokens, $${usage.cost_usd.toFixed(6)}`}
          >
            {formatTokens(usage.input_tokens)} in · {formatTokens(usage.output_tokens)} out · {formatCost(usage.cost_usd)}
          </span>
          <span className="muted small">{session.model}</span>
          {active && (
            <button type="button" className="btn danger" data-testid="stop-session" onClick={() => void stop()}>
              Stop
            </button>
          )}
          {!active && (
            <button type="button" className="btn subtle" data-testid="delete-session" onClick={() => void remove()}>
              Delete
            </button>
          )}
        </div>
      </header>
      {children.length > 0 && (
        <p className="sub-sessions" data-testid="sub-sessions">
          Sub-sessions:{" "}
          {children.map((c, i) => (
            <span key={c.id}>
              {i > 0 && ", "}
              <a href={sessionHref(c.id)}>{c.title || c.id.slice(0, 8)}</a>
            </span>
          ))}
        </p>
      )}

      <div className="session-tabs" role="tablist" aria-label="Session views">
        <button type="button" role="tab" aria-selected={tab === "conversation"} data-testid="tab-conversation" onClick={() => setTab("conversation")}>
          Conversation
        </button>
        <button type="button" role="tab" aria-selected={tab === "changes"} data-testid="tab-changes" onClick={() => setTab("changes")}>
          Changes
          {hasCheckpoints ? (
            <span className="count" data-testid="tab-changes-steps" title="Steps that changed the workspace, rewinds included">
              {" "}
              {checkpoints.steps?.length}
            </span>
          ) : null}
        </button>
      </div>
      {tab === "changes" &&
        (hasCheckpoints && checkpoints.steps ? (
          <CheckpointChanges
            sessionId={id}
            steps={checkpoints.steps}
            net={net.files}
            netError={net.error}
            toolCalls={detail.toolCalls}
            rewoundTo={checkpoints.rewoundTo}
            onRewound={checkpoints.reload}
          />
        ) : (
          checkpoints.steps !== null && <NoCheckpointsView enabled={enabled} failed={checkpoints.failed.size} />
        ))}
      {checkpoints.error && tab === "changes" && (
        <p className="muted small" role="note" data-testid="checkpoints-error">
          Checkpoints could not be loaded: {checkpoints.error}
        </p>
      )}

      <div className="transcript" data-testid="transcript" aria-live="off" hidden={tab !== "conversation"}>
        {placed.before.map((n) => (
          <Note key={n.seq} note={n} />
        ))}
        {rewinds.get(-1)?.map((r) => <RewindEntry key={r.step} step={r} to={checkpoints.rewoundTo.get(r.step)} sessionId={id} onRewound={checkpoints.reload} />)}
        {detail.messages.map((m) => (
          <Fragment key={m.idx}>
            <MessageBubble message={m} toolCalls={detail.toolCalls} resultFor={resultFor} sessionId={id} refused={refused} steps={steps} />
            {placed.after.get(m.idx)?.map((n) => <Note key={n.seq} note={n} />)}
            {rewinds.get(m.idx)?.map((r) => <RewindEntry key={r.step} step={r} to={checkpoints.rewoundTo.get(r.step)} sessionId={id} onRewound={checkpoints.reload} />)}
          </Fragment>
        ))}
        {orphans.length > 0 && (
          <div className="message message-assistant">
            {orphans.map((c) => (
              <ToolCallCard key={c.id} call={c} sessionId={id} refused={refused[c.id]} steps={steps} />
            ))}
          </div>
        )}
        <StreamingReply text={streaming} thinking={thinking} />
        {detail.notices.map((n) => (
          <p
            key={n.seq}
            className={n.kind === "error" ? "error-text" : n.kind === "budget" ? "notice stop-note" : "notice"}
            data-testid={n.kind === "budget" ? "budget-warning" : undefined}
          >
            {n.kind === "retry" ? "Retrying the model: " : ""}
            {n.text}
          </p>
        ))}
        {!active && stopNote(session) && (
          <p className="stop-note" role="status" data-testid="session-stop-note">
            {stopNote(session)}
          </p>
        )}
        {/* Its stored `error` event is already a note in the timeline: say it once. */}
        {session.status === "error" && session.error && !detail.notes.some((n) => n.kind === "error" && n.text === session.error) && (
          <p className="error-text" role="alert" data-testid="session-error">
            {session.error}
          </p>
        )}
        <div ref={endRef} />
      </div>

      {(pending.length > 0 || decided.length > 0) && (
        <div className="session-approvals">
          <ApprovalQueue pending={pending} decided={decided} showDecided={3} showSession={false} />
        </div>
      )}

      <AutoApproveSwitch session={session} pending={pending} />
      <StartupProgress
        servers={servers}
        waiting={session.status === "running" && !streaming && detail.messages.at(-1)?.role === "user"}
      />
      <StandingStrip sessionId={id} mode={session.mode} servers={servers} />
      <Composer session={session} />
    </main>
    </ToolTitles.Provider>
  );
}
