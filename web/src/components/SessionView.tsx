// One session: header (status, usage, Stop), the transcript with tool-call cards, the session's
// approval queue and the composer.

import { Fragment, useEffect, useMemo, useRef, useState } from "react";
import { api } from "../api";
import { formatCost, formatTokens } from "../format";
import { revealDecision } from "../reveal";
import { navigate, sessionHref } from "../router";
import { modeLabel, useModes } from "../modes";
import { useSessionDetail, type TimelineNote } from "../sessionDetail";
import { CheckpointChanges, NoCheckpointsView } from "./ChangesView";
import { stepsByCall, useCheckpointStatus, useCheckpoints, useNetChange } from "../checkpoints";
import { RewindEntry } from "./StepChanges";
import { decidedList, forgetSession, pendingList, upsertSession, useAppState } from "../store";
import type { Message, Session, StepChanges, StopReason, ToolCall } from "../types";
import { stopNote, useRefusedCalls } from "../outcome";
import { useServers } from "../standing";
import { ToolTitles, toolTitles } from "../names";
import { StandingStrip, StartupProgress } from "./SessionStartup";
import { Breadcrumb } from "./ApprovalCard";
import { ApprovalQueue } from "./ApprovalQueue";
import { AutoApproveSwitch } from "./AutoApproveSwitch";
import { Attachments } from "./Attachments";
import { Composer } from "./Composer";
import { MessageText, StreamingReply } from "./Reply";
import { StatusBadge } from "./Sidebar";
import { ToolCallCard, type StepLink } from "./ToolCallCard";

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
  // The open requests wait for the transcript they belong to: shown before it, a card's buttons
  // jumped down under a finger when the transcript landed above them (a tap meant for Approve
  // reached the command's text instead). A transcript that fails to load does not hold them back.
  const transcriptIn = detail.detail !== null || detail.error !== null;

  useEffect(() => {
    endRef.current?.scrollIntoView({ block: "end" });
    // The open request sits below the transcript: keep it in view, not just the transcript's end
    // (issue 33, item 2: the card landed below the fold while the transcript grew).
    const card = endRef.current?.closest(".session-view")?.querySelector<HTMLElement>(".session-approvals .approval-card");
    if (card) revealDecision(card);
  }, [detail.messages.length, detail.notes.length, streaming.length, thinking.length, pending.length, transcriptIn]);

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
        {!transcriptIn && (
          <p className="muted" role="status" data-testid="transcript-loading">
            Loading the transcript…
          </p>
        )}
        {detail.error && (
          <p className="error-text" role="alert" data-testid="transcript-error">
            The transcript could not be loaded: {detail.error}
          </p>
        )}
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

      {transcriptIn && (pending.length > 0 || decided.length > 0) && (
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
