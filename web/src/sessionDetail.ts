// One session's transcript: the REST snapshot, then live events on top of it.
//
// Events that arrive before the snapshot are held back and replayed after it, keeping only those
// the snapshot does not already contain (seq above its `last_seq`; token deltas at or above it).

import { useEffect, useReducer, useRef } from "react";
import { api } from "./api";
import { live } from "./live";
import type { LiveEvent, MediaFile, Message, SessionDetail, ToolCall, Usage } from "./types";

export interface Token {
  seq: number;
  part: number;
  text: string;
}

/** A system note in the timeline, placed after the message with idx `after` (-1: before all). */
export interface TimelineNote {
  seq: number;
  kind: "notice" | "cleared" | "mode" | "workflow" | "error";
  text: string;
  after: number;
  /** For workflow notes: the run's status or the step's, to colour the note. */
  status?: string;
}

/** Notices that still matter when the view opens later: read back from the persisted events. */
const KEPT_NOTICE_TYPES = ["budget.warning"];

/** Ephemeral deltas of an answer being streamed: its text and its reasoning. */
const DELTA_TYPES = ["token", "thinking.delta"];

// A stored `error` (a failed turn) is a note: it stays in the history after later turns succeed.
const NOTE_TYPES = new Set(["notice", "error", "server.failed", "sampling.completed", "session.cleared", "session.mode", "workflow.step", "workflow.gate", "workflow.finished"]);

function workflowText(type: string, data: Record<string, unknown>): string {
  const where = `step ${String(data.step)} of ${String(data.of)} (${String(data.mode)})`;
  const workflow = String(data.workflow ?? "workflow");
  const status = String(data.status ?? "");
  if (type === "workflow.step") {
    if (status === "running") return `Workflow ${workflow}: ${where} started${data.prompt_edited ? " with your edited prompt" : ""}.`;
    if (status === "completed") return `Workflow ${workflow}: ${where} is done.`;
    if (status === "error") return `Workflow ${workflow}: ${where} failed${data.error ? `: ${String(data.error)}` : "."}`;
    return `Workflow ${workflow}: ${where} ${status}.`;
  }
  if (type === "workflow.gate") {
    if (status === "pending") return `Workflow ${workflow}: waiting for your approval to start ${where}.`;
    if (status === "allowed") return `Workflow ${workflow}: ${where} approved${data.edited ? " with an edited prompt" : ""}.`;
    return `Workflow ${workflow}: ${where} was not approved (${status}).`;
  }
  return `Workflow ${workflow} ${status}${data.detail ? `: ${String(data.detail)}` : "."}`;
}

/** The timeline note an event makes, or null for events that are not notes. */
export function noteOf(event: LiveEvent, after: number): TimelineNote | null {
  const data = event.data ?? {};
  switch (event.type) {
    case "notice":
      return { seq: event.seq, kind: "notice", text: String(data.text ?? ""), after };
    case "error":
      return { seq: event.seq, kind: "error", text: String(data.message ?? ""), after };
    case "session.cleared": {
      const from = Number(data.from);
      return { seq: event.seq, kind: "cleared", text: "History cleared — the agent starts afresh here", after: Number.isFinite(from) ? from - 1 : after };
    }
    case "session.mode":
      return { seq: event.seq, kind: "mode", text: `Switched to ${String(data.mode ?? "another")} mode`, after };
    case "server.failed":
      // Its tools are missing from this session: say which server and why, where the person reads.
      return { seq: event.seq, kind: "notice", text: `Tool server ${String(data.server ?? "?")} is not running, so its tools are left out: ${String(data.error ?? "")}`, after };
    case "sampling.completed":
      return {
        seq: event.seq,
        kind: "notice",
        text: `${String(data.model ?? "The model")} answered ${String(data.server ?? "a server")}'s prompt${data.edited ? " (as you edited it)" : ""}: ${String(data.text ?? "")}`,
        after,
      };
    case "workflow.step":
    case "workflow.gate":
    case "workflow.finished":
      return { seq: event.seq, kind: "workflow", text: workflowText(event.type, data), after, status: String(data.status ?? "") };
    default:
      return null;
  }
}

/** Notes from a replayed event list, each placed after the last message seen before it. */
export function notesFromEvents(events: LiveEvent[]): TimelineNote[] {
  let last = -1;
  const notes: TimelineNote[] = [];
  for (const event of [...events].sort((a, b) => a.seq - b.seq)) {
    if (event.ephemeral) continue;
    if (event.type === "message" && typeof event.data?.idx === "number") last = Math.max(last, event.data.idx);
    const note = noteOf(event, last);
    if (note) notes.push(note);
  }
  return notes;
}

type Notice = DetailState["notices"][number];

/** A retry, error or budget warning, as the view shows it below the transcript. */
function noticeOf(event: LiveEvent): Notice {
  const data = event.data ?? {};
  const text = typeof data.message === "string" ? data.message : JSON.stringify(data);
  const kind = event.type === "error" ? "error" : event.type === "budget.warning" ? "budget" : "retry";
  return { seq: event.seq, kind, text };
}

/** `items` with those of `more` it does not hold yet (by seq), in seq order. */
function addBySeq<T extends { seq: number }>(items: T[], more: T[]): T[] {
  const seen = new Set(items.map((n) => n.seq));
  const fresh = more.filter((n) => !seen.has(n.seq));
  return fresh.length ? [...items, ...fresh].sort((a, b) => a.seq - b.seq) : items;
}

export interface DetailState {
  id: string;
  detail: SessionDetail | null;
  error: string | null;
  messages: Message[];
  toolCalls: Record<string, ToolCall>;
  /** Token deltas of the answer being streamed, in (seq, part) order. */
  tokens: Token[];
  /** Deltas of the model's reasoning before that answer (`thinking.delta`), likewise. */
  thinking: Token[];
  notices: { seq: number; kind: "retry" | "error" | "budget"; text: string }[];
  /** Command notices, history dividers, mode switches and workflow progress, in the timeline. */
  notes: TimelineNote[];
  /** Tokens and cost: the snapshot's totals plus the `usage` deltas after it (exact, by seq). */
  usage: Usage | null;
  baseSeq: number;
  /** The highest persisted seq applied: a delta older than it belongs to an answer already stored. */
  seenSeq: number;
  buffered: LiveEvent[];
  /** Loading again after an outage: events are applied and also kept, to replay over the snapshot. */
  reloading?: boolean;
}

type Action =
  | { type: "reset"; id: string }
  | { type: "reload"; id: string }
  | { type: "snapshot"; id: string; detail: SessionDetail }
  | { type: "failed"; id: string; error: string }
  | { type: "history"; id: string; events: LiveEvent[] }
  | { type: "deltas"; id: string; events: LiveEvent[] }
  | { type: "event"; event: LiveEvent };

function initial(id: string): DetailState {
  return { id, detail: null, error: null, messages: [], toolCalls: {}, tokens: [], thinking: [], notices: [], notes: [], usage: null, baseSeq: 0, seenSeq: 0, buffered: [] };
}

function upsertMessage(messages: Message[], message: Message): Message[] {
  const idx = typeof message.idx === "number" ? message.idx : messages.length;
  const next = messages.filter((m) => m.idx !== idx);
  next.push({ ...message, idx, tool_calls: message.tool_calls ?? [] });
  return next.sort((a, b) => a.idx - b.idx);
}

function apply(state: DetailState, event: LiveEvent): DetailState {
  if (event.ephemeral ? event.seq < state.baseSeq : event.seq <= state.baseSeq) return state;
  if (!event.ephemeral && event.seq > state.seenSeq) state = { ...state, seenSeq: event.seq };
  const data = event.data ?? {};
  // An unstored error (the store is refusing writes) stays a passing notice below the transcript.
  if (NOTE_TYPES.has(event.type) && !(event.type === "error" && event.ephemeral)) {
    const after = state.messages.length ? state.messages[state.messages.length - 1].idx : -1;
    const note = noteOf(event, after);
    return note ? { ...state, notes: addBySeq(state.notes, [note]) } : state;
  }
  switch (event.type) {
    case "token":
    case "thinking.delta": {
      const text = typeof data.text === "string" ? data.text : "";
      if (!text || event.seq < state.seenSeq) return state;
      const key = event.type === "token" ? "tokens" : "thinking";
      const part = event.part ?? 0;
      if (state[key].some((t) => t.seq === event.seq && t.part === part)) return state; // fetched and live
      const deltas = [...state[key], { seq: event.seq, part, text }];
      deltas.sort((a, b) => a.seq - b.seq || a.part - b.part);
      return { ...state, [key]: deltas };
    }
    case "message": {
      const message = data as unknown as Message;
      const messages = upsertMessage(state.messages, message);
      return message.role === "assistant" ? { ...state, messages, tokens: [], thinking: [] } : { ...state, messages };
    }
    case "tool.started": {
      const id = String(data.id ?? "");
      const previous = state.toolCalls[id];
      const call: ToolCall = {
        id,
        name: String(data.name ?? previous?.name ?? ""),
        arguments: (data.arguments as Record<string, unknown>) ?? previous?.arguments ?? {},
        status: "running",
        decision: (data.decision as string | null) ?? previous?.decision ?? null,
        result: null,
        is_error: false,
        media: previous?.media ?? [],
        session_id: event.session_id,
        created_at: previous?.created_at ?? event.created_at,
        started_at: event.created_at,
        finished_at: null,
        untrusted: previous?.untrusted ?? null,
        task_id: previous?.task_id ?? null,
      };
      return { ...state, toolCalls: { ...state.toolCalls, [id]: call } };
    }
    case "tool.progress": {
      const id = String(data.id ?? "");
      const previous = state.toolCalls[id];
      if (!previous || previous.status !== "running") return state;  // late: the result is in
      const progress = {
        progress: Number(data.progress ?? 0),
        total: typeof data.total === "number" ? data.total : null,
        message: typeof data.message === "string" ? data.message : null,
      };
      return { ...state, toolCalls: { ...state.toolCalls, [id]: { ...previous, progress } } };
    }
    case "tool.result": {
      const id = String(data.id ?? "");
      const previous = state.toolCalls[id];
      const call: ToolCall = {
        id,
        name: String(data.name ?? previous?.name ?? ""),
        // A call refused before it started (a deny rule) is first seen here, with what it asked.
        arguments: (data.arguments as Record<string, unknown> | undefined) ?? previous?.arguments ?? {},
        status: (data.status as ToolCall["status"]) ?? "done",
        decision: (data.decision as string | null | undefined) ?? previous?.decision ?? null,
        result: typeof data.text === "string" ? data.text : (previous?.result ?? null),
        is_error: Boolean(data.is_error),
        media: Array.isArray(data.media) ? (data.media as MediaFile[]) : (previous?.media ?? []),
        untrusted: data.untrusted && typeof data.source === "string" ? data.source : (previous?.untrusted ?? null),
        task_id: previous?.task_id ?? null,
        session_id: event.session_id,
        created_at: previous?.created_at ?? event.created_at,
        started_at: previous?.started_at ?? null,
        finished_at: event.created_at,
      };
      return { ...state, toolCalls: { ...state.toolCalls, [id]: call } };
    }
    case "approval.requested": {
      const id = String(data.tool_call_id ?? "");
      // A gate (mode switch, workflow step) has no tool call: its card is all there is.
      if (!id || (data.kind !== undefined && data.kind !== "tool")) return state;
      const previous = state.toolCalls[id];
      const call: ToolCall = {
        id,
        name: String(data.tool_name ?? previous?.name ?? ""),
        arguments: (data.arguments as Record<string, unknown>) ?? previous?.arguments ?? {},
        status: "waiting_approval",
        decision: null,
        result: null,
        is_error: false,
        media: previous?.media ?? [],
        untrusted: previous?.untrusted ?? null,
        task_id: previous?.task_id ?? null,
        session_id: event.session_id,
        created_at: previous?.created_at ?? event.created_at,
        started_at: null,
        finished_at: null,
      };
      return { ...state, toolCalls: { ...state.toolCalls, [id]: call } };
    }
    case "usage": {
      const base = state.usage ?? { input_tokens: 0, output_tokens: 0, cost_usd: 0 };
      const usage: Usage = {
        input_tokens: base.input_tokens + (Number(data.input_tokens) || 0),
        output_tokens: base.output_tokens + (Number(data.output_tokens) || 0),
        cost_usd: base.cost_usd + (Number(data.cost_usd) || 0),
      };
      return { ...state, usage };
    }
    case "session.status": {
      const status = String(data.status ?? "");
      const ended = status === "completed" || status === "stopped" || status === "error";
      return ended ? { ...state, tokens: [], thinking: [] } : state;
    }
    case "model.retry":
    case "budget.warning":
    case "error":
      return { ...state, notices: addBySeq(state.notices, [noticeOf(event)]) };
    default:
      return state;
  }
}

function reducer(state: DetailState, action: Action): DetailState {
  switch (action.type) {
    case "reset":
      return initial(action.id);
    case "reload":
      return action.id === state.id ? { ...state, error: null, reloading: true, buffered: [] } : state;
    case "failed":
      return action.id === state.id ? { ...state, error: action.error } : state;
    case "history": {
      // Notes the snapshot does not carry: events up to its last_seq (later ones arrive live).
      if (action.id !== state.id) return state;
      const older = action.events.filter((e) => e.seq <= state.baseSeq);
      const kept = older.filter((e) => KEPT_NOTICE_TYPES.includes(e.type)).map(noticeOf);
      return { ...state, notices: addBySeq(state.notices, kept), notes: addBySeq(state.notes, notesFromEvents(older)) };
    }
    case "deltas": {
      // What an answer in progress streamed before this view opened (the server's delta buffer).
      if (action.id !== state.id || !state.detail) return state;
      return action.events.filter((e) => e.ephemeral && DELTA_TYPES.includes(e.type)).reduce(apply, state);
    }
    case "snapshot": {
      if (action.id !== state.id) return state;
      const { detail } = action;
      const toolCalls: Record<string, ToolCall> = {};
      for (const call of detail.tool_calls ?? []) toolCalls[call.id] = call;
      let next: DetailState = {
        ...state,
        detail,
        error: null,
        messages: [...(detail.messages ?? [])].sort((a, b) => a.idx - b.idx),
        toolCalls,
        tokens: [],
        thinking: [],
        usage: detail.usage ?? null,
        baseSeq: detail.last_seq ?? 0,
        seenSeq: detail.last_seq ?? 0,
        buffered: [],
        reloading: false,
      };
      for (const event of state.buffered) next = apply(next, event);
      return next;
    }
    case "event": {
      if (action.event.session_id !== state.id) return state;
      if (!state.detail) return { ...state, buffered: [...state.buffered, action.event] };
      if (state.reloading) return { ...apply(state, action.event), buffered: [...state.buffered, action.event] };
      return apply(state, action.event);
    }
  }
}

/** Load a session and keep it current; load it again when `epoch` changes (the live connection
 * came back after an outage: a transcript that failed to load, or missed events, is fixed). */
export function useSessionDetail(id: string, epoch = 0): DetailState {
  const [state, dispatch] = useReducer(reducer, id, initial);
  const loadedId = useRef<string | null>(null);
  useEffect(() => {
    // Another session starts empty; the same one keeps what it shows until the new snapshot.
    dispatch(loadedId.current === id ? { type: "reload", id } : { type: "reset", id });
    loadedId.current = id;
    const off = live.onEvent((event) => {
      if (event.session_id === id) dispatch({ type: "event", event });
    });
    let cancelled = false;
    api
      .session(id)
      .then((detail) => {
        if (cancelled) return;
        live.noteSnapshot(id, detail.last_seq ?? 0);
        dispatch({ type: "snapshot", id, detail });
        // The timeline's notes (and notices such as a budget warning) live only in events: read
        // the persisted ones once, and with them the deltas of an answer that was already
        // streaming when the view opened.
        return api.sessionEvents(id, 0, [...NOTE_TYPES, ...KEPT_NOTICE_TYPES, ...DELTA_TYPES]).then((events) => {
          if (cancelled) return;
          dispatch({ type: "history", id, events: events.filter((e) => !e.ephemeral) });
          dispatch({ type: "deltas", id, events });
        }, () => undefined);
      })
      .catch((error: unknown) => !cancelled && dispatch({ type: "failed", id, error: error instanceof Error ? error.message : String(error) }));
    return () => {
      cancelled = true;
      off();
    };
  }, [id, epoch]);
  return state;
}
