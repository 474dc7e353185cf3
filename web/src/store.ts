// The app-wide state: who is logged in, the sessions, and the approvals waiting across them.
//
// One small external store (read with useSyncExternalStore) fed by REST snapshots and live
// events. Approvals are keyed by id and a resolved id never comes back, so a late snapshot or a
// replayed event cannot resurrect a card that was already answered.

import { useSyncExternalStore } from "react";
import { ApiError, api, onUnauthorized } from "./api";
import { outcomeLabel } from "./format";
import { live, type LiveState } from "./live";
import { OFFLINE_MESSAGE, dropStaged, sendStagedNow } from "./undo";
import type { Approval, ApprovalStatus, DecidedBy, Decider, DecisionBody, LiveEvent, Me, Session } from "./types";

export interface DecidedEntry {
  approval: Approval;
  outcome: string;
  denied: boolean;
  at: number;
  /** Who decided, when not this tab: "by admin in another tab", "by ann via telegram". */
  by?: string;
  /** This tab's own answer that did not count (a staged key press, or a click the server refused
   * with 409): "Your deny was not sent: allowed once by admin in another tab first". */
  lost?: string;
}

export interface AppState {
  auth: "checking" | "ok" | "required";
  me: Me | null;
  sessions: Record<string, Session>;
  /** Pending approvals by id. */
  pending: Record<string, Approval>;
  /** Recently decided approvals by id, shown as one-line rows. */
  decided: Record<string, DecidedEntry>;
  /** Approval ids with a decision in flight. */
  submitting: Record<string, boolean>;
  /** A failed decision's message, by approval id. */
  errors: Record<string, string>;
  /** The card the person asked to see (a notification click); queues focus it when they hold it. */
  focusRequest: string | null;
  live: LiveState;
  /** Counts the times the live connection came back after an outage: what was loaded before
   * (a session's transcript) may be stale, and views that hold it load it again. */
  liveEpoch: number;
  loaded: boolean;
  /** Decisions made by a key press, waiting out their undo window before they are sent. */
  staged: Record<string, StagedDecision>;
}

/** A key-press decision not sent yet: it can be taken back until `due` (epoch ms). */
export interface StagedDecision {
  approval: Approval;
  body: DecisionBody;
  label: string;
  due: number;
}

let state: AppState = {
  auth: "checking",
  me: null,
  sessions: {},
  pending: {},
  decided: {},
  submitting: {},
  errors: {},
  focusRequest: null,
  live: "stopped",
  liveEpoch: 0,
  loaded: false,
  staged: {},
};

const listeners = new Set<() => void>();
const resolvedIds = new Set<string>();
const receivedAt = new Map<string, number>();
/** Approvals this tab answered (the server took its answer): their outcome names no one. */
const answeredHere = new Set<string>();
const DECIDED_KEEP = 30;

function setState(update: Partial<AppState> | ((s: AppState) => Partial<AppState>)): void {
  patchState(update);
}

/** Change the state and tell every view: for this module and its sibling undo.ts only. */
export function patchState(update: Partial<AppState> | ((s: AppState) => Partial<AppState>)): void {
  const patch = typeof update === "function" ? update(state) : update;
  state = { ...state, ...patch };
  listeners.forEach((listener) => listener());
}

export function getState(): AppState {
  return state;
}

export function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useAppState(): AppState {
  return useSyncExternalStore(subscribe, getState);
}

/** A session and its sub-sessions, at any depth: a child's request also shows in its parent. */
export function sessionFamily(s: AppState, sessionId: string): Set<string> {
  const family = new Set([sessionId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const session of Object.values(s.sessions)) {
      if (session.parent_id && family.has(session.parent_id) && !family.has(session.id)) {
        family.add(session.id);
        grew = true;
      }
    }
  }
  return family;
}

/** Pending approvals, oldest first; with a session, those of it and its sub-sessions. A staged
 * decision (in its undo window) has already left the queue as far as the person can tell. */
export function pendingList(s: AppState, sessionId?: string): Approval[] {
  const family = sessionId === undefined ? null : sessionFamily(s, sessionId);
  return Object.values(s.pending)
    .filter((a) => !s.staged[a.id] && (family === null || family.has(a.session_id)))
    // Date.parse keeps milliseconds only; the ISO strings break ties down to the microsecond.
    .sort(
      (a, b) =>
        Date.parse(a.created_at) - Date.parse(b.created_at) ||
        a.created_at.localeCompare(b.created_at) ||
        a.id.localeCompare(b.id),
    );
}

export function decidedList(s: AppState, sessionId?: string): DecidedEntry[] {
  const family = sessionId === undefined ? null : sessionFamily(s, sessionId);
  return Object.values(s.decided)
    .filter((d) => family === null || family.has(d.approval.session_id))
    .sort((a, b) => a.at - b.at);
}

export function pendingCountBySession(s: AppState): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of Object.values(s.pending)) counts[a.session_id] = (counts[a.session_id] ?? 0) + 1;
  return counts;
}

// ---- auth and loading ----

let booted = false;

export function boot(): void {
  if (booted) return;
  booted = true;
  onUnauthorized(() => {
    live.stop();
    setState({ auth: "required", me: null });
  });
  live.onEvent(applyEvent);
  live.onState((liveState, reconnected) => {
    const outage = liveState === "open" && state.live === "reconnecting";
    setState((s) => ({ live: liveState, liveEpoch: outage ? s.liveEpoch + 1 : s.liveEpoch }));
    // Sessions created while we were away have no `since` entry: a fresh snapshot covers them.
    // A first load that failed (the page opened while the server was down) is made now.
    // Once the state is fresh, a "Not sent" from the outage is stale: the card can be answered.
    if (liveState === "open" && (reconnected || !state.loaded)) void refresh().then(clearOfflineErrors, () => undefined);
    if (liveState === "open" && !state.me) void api.me().then((me) => setState({ me }), () => undefined);
  });
  // A person who leaves the page has no undo window left to use: their answers go now.
  window.addEventListener("pagehide", sendStagedNow);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") sendStagedNow();
  });
  window.setInterval(expireDue, 1000);
  void checkAuth();
}

async function checkAuth(): Promise<void> {
  try {
    const me = await api.me();
    setState({ auth: "ok", me });
    live.start();
    await refresh();
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) {
      // The server is unreachable or broken: keep trying quietly, the UI shows the live state.
      setState({ auth: "ok" });
      live.start();
      await refresh().catch(() => undefined);
    }
  }
}

export async function login(username: string, password: string): Promise<void> {
  await api.login(username, password);
  const me = await api.me();
  setState({ auth: "ok", me });
  live.start();
  await refresh();
}

export async function logout(): Promise<void> {
  try {
    await api.logout();
  } finally {
    live.stop();
    setState({ auth: "required", me: null, sessions: {}, pending: {}, decided: {} });
  }
}

/** Forget the "Not sent: the server cannot be reached" of every card: it can be reached again. */
function clearOfflineErrors(): void {
  if (!Object.values(state.errors).includes(OFFLINE_MESSAGE)) return;
  setState((s) => ({
    errors: Object.fromEntries(Object.entries(s.errors).filter(([, message]) => message !== OFFLINE_MESSAGE)),
  }));
}

/** Load sessions and pending approvals; merge with what live events already told us. */
export async function refresh(): Promise<void> {
  const started = Date.now();
  const [sessions, approvals] = await Promise.all([api.sessions(), api.pendingApprovals()]);
  const vanished: string[] = [];
  setState((s) => {
    const byId: Record<string, Session> = {};
    for (const session of sessions) byId[session.id] = session;
    // Keep sessions announced live after the request left, and statuses newer than the snapshot.
    for (const session of Object.values(s.sessions)) {
      const fetched = byId[session.id];
      if (!fetched || Date.parse(session.updated_at) > Date.parse(fetched.updated_at)) byId[session.id] = session;
    }
    const pending: Record<string, Approval> = {};
    for (const approval of approvals) {
      if (!resolvedIds.has(approval.id)) pending[approval.id] = approval;
    }
    for (const approval of Object.values(s.pending)) {
      if (pending[approval.id]) continue;
      // Newer than the snapshot, or answered while we were away: keep it until we know how it ended.
      pending[approval.id] = approval;
      if ((receivedAt.get(approval.id) ?? 0) < started) vanished.push(approval.id);
    }
    return { sessions: byId, pending, loaded: true };
  });
  await Promise.all(
    vanished.map(async (id) => {
      try {
        const final = await api.approval(id);
        if (final.status !== "pending") resolve(id, final.status, final.decision, final.decided_by, final.decider);
      } catch {
        resolve(id, "cancelled", null, null);
      }
    }),
  );
}

// ---- live events ----

function applyEvent(event: LiveEvent): void {
  const data = event.data ?? {};
  switch (event.type) {
    case "session.created": {
      const session = data as unknown as Session;
      if (session?.id) setState((s) => ({ sessions: { ...s.sessions, [session.id]: session } }));
      return;
    }
    case "session.status": {
      setState((s) => {
        const session = s.sessions[event.session_id];
        if (!session) return {};
        const updated: Session = {
          ...session,
          status: (data.status as Session["status"]) ?? session.status,
          error: (data.error as string | null | undefined) ?? null,
          stop_reason: (data.stop_reason as Session["stop_reason"] | undefined) ?? null,
          updated_at: event.created_at ?? session.updated_at,
        };
        return { sessions: { ...s.sessions, [session.id]: updated } };
      });
      if (!state.sessions[event.session_id]) void refresh().catch(() => undefined);
      return;
    }
    case "session.updated": {
      // A person renamed it, archived it or switched its auto-approve (here or in another tab).
      setState((s) => {
        const session = s.sessions[event.session_id];
        if (!session) return {};
        return { sessions: { ...s.sessions, [session.id]: { ...session, ...(data as Partial<Session>) } } };
      });
      return;
    }
    case "session.mode": {
      const mode = typeof data.mode === "string" ? data.mode : null;
      setState((s) => {
        const session = s.sessions[event.session_id];
        if (!session || !mode) return {};
        return { sessions: { ...s.sessions, [session.id]: { ...session, mode } } };
      });
      return;
    }
    case "approval.requested": {
      const approval = data as unknown as Approval;
      if (!approval?.id || resolvedIds.has(approval.id)) return;
      receivedAt.set(approval.id, Date.now());
      setState((s) => ({ pending: { ...s.pending, [approval.id]: approval } }));
      return;
    }
    case "approval.resolved": {
      const id = String(data.id ?? "");
      if (!id) return;
      resolve(
        id,
        data.status as ApprovalStatus,
        data.decision as Approval["decision"],
        data.decided_by as DecidedBy,
        (data.decider as Decider | undefined) ?? null,
      );
      return;
    }
  }
}

/** What a decision body asks, as a verb: "Your deny was not sent". */
function answerVerb(body: DecisionBody): string {
  switch (body.decision) {
    case "deny":
      return "deny";
    case "allow_session":
      return "allow for the session";
    case "allow_always":
      return "always allow";
    default:
      return "allow";
  }
}

/** Who answered, for every tab to read: "by admin in another tab", "by ann via telegram". This
 * tab's own answer names no one; a decider this tab cannot tell from its own person is named
 * with the door they came through. */
export function deciderWords(decider: Decider | null | undefined, me: Me | null, ours: boolean): string {
  if (!decider || decider.kind === "system") return "";
  const via = decider.via ?? "core";
  if (via === "auto") return `by ${decider.name}`; // "auto-approved by ann": the switch, never this tab
  if (ours) return "";
  if (me && decider.name === me.name && via === "rest") return `by ${decider.name} in another tab`;
  return `by ${decider.name} via ${via}`;
}

/** Move an approval out of the queue into the decided rows. `lostBody`: this tab's own answer
 * that did not count (the server refused it: someone answered first). */
function resolve(
  id: string,
  status: ApprovalStatus,
  decision: Approval["decision"],
  decidedBy: DecidedBy | null,
  decider: Decider | null = null,
  lostBody: DecisionBody | null = null,
): void {
  resolvedIds.add(id);
  // Answered elsewhere (or timed out) while a key press's undo window ran: that answer is lost.
  const lost = lostBody ?? state.staged[id]?.body ?? null;
  const lostSent = lostBody !== null;
  dropStaged(id);
  setState((s) => {
    const approval = s.pending[id] ?? s.decided[id]?.approval;
    const pending = { ...s.pending };
    delete pending[id];
    if (!approval) return { pending };
    // After a local timeout or a 409 the server's own word, when it arrives, replaces ours.
    const known = decider ?? (decidedBy === "user" ? s.decided[id]?.approval.decider ?? null : null);
    const resolved: Approval = { ...approval, status: status ?? approval.status, decision, decided_by: decidedBy, decider: known };
    const outcome = outcomeLabel(resolved.status, decision, decidedBy, known);
    // An answer in flight from this tab is taken as ours until the server says otherwise (a 409).
    const ours = !lostSent && (answeredHere.has(id) || Boolean(s.submitting[id]));
    const who = decidedBy === "user" ? deciderWords(known, s.me, ours) : "";
    const denied = resolved.status !== "allowed";
    const lostText = lost
      ? `Your ${answerVerb(lost)} was ${lostSent ? "not recorded" : "not sent"}: ${who ? `${outcome} ${who}` : outcome} first`
      : s.decided[id]?.lost;
    const entry: DecidedEntry = {
      approval: resolved,
      outcome,
      denied,
      at: s.decided[id]?.at ?? Date.now(),
      by: who || undefined,
      lost: lostText,
    };
    const decided = { ...s.decided, [id]: entry };
    const ids = Object.keys(decided);
    if (ids.length > DECIDED_KEEP) {
      ids.sort((a, b) => decided[a].at - decided[b].at);
      for (const old of ids.slice(0, ids.length - DECIDED_KEEP)) delete decided[old];
    }
    const submitting = { ...s.submitting };
    delete submitting[id];
    return { pending, decided, submitting };
  });
}

/** Approvals past `expires_at` leave the queue as "Timed out – denied" (the server denies them too). */
function expireDue(): void {
  const now = Date.now();
  for (const approval of Object.values(state.pending)) {
    if (Date.parse(approval.expires_at) <= now && !state.submitting[approval.id]) {
      resolve(approval.id, "expired", { kind: "deny" }, "timeout");
    }
  }
}

// ---- decisions ----

/** Answer one approval. A 409 means someone (or the clock) answered first: the card leaves anyway.
 * While the server is known to be unreachable the answer is refused with a message, not lost
 * in a request that cannot arrive. */
export async function decide(approval: Approval, body: DecisionBody): Promise<boolean> {
  if (state.submitting[approval.id] || !state.pending[approval.id]) return false;
  if (state.live === "reconnecting") {
    setState((s) => ({ errors: { ...s.errors, [approval.id]: OFFLINE_MESSAGE } }));
    return false;
  }
  setState((s) => {
    const errors = { ...s.errors };
    delete errors[approval.id];
    return { submitting: { ...s.submitting, [approval.id]: true }, errors };
  });
  try {
    const answered = await api.decide(approval.id, body);
    answeredHere.add(approval.id);
    resolve(approval.id, answered?.status ?? (body.decision === "deny" ? "denied" : "allowed"),
      answered?.decision ?? { kind: body.decision, message: body.message ?? null, updated_arguments: body.updated_arguments ?? null },
      answered?.decided_by ?? "user", answered?.decider ?? null);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) {
      // Answered first by someone else (another tab, a phone) or by the clock: show how it
      // really ended and who decided, never a guess that reads as a denial.
      const final = await api.approval(approval.id).catch(() => null);
      if (final && final.status !== "pending") {
        resolve(approval.id, final.status, final.decision, final.decided_by, final.decider ?? null, body);
      } else {
        resolve(approval.id, "expired", { kind: "deny" }, "timeout", null, body);
      }
      return false;
    }
    if (error instanceof ApiError && error.status === 404) {
      resolve(approval.id, "expired", { kind: "deny" }, "timeout");
      return false;
    }
    // fetch's TypeError ("Failed to fetch") is the network: say what it means for the answer.
    const message = error instanceof TypeError ? OFFLINE_MESSAGE : error instanceof Error ? error.message : String(error);
    setState((s) => {
      const submitting = { ...s.submitting };
      delete submitting[approval.id];
      return { submitting, errors: { ...s.errors, [approval.id]: message } };
    });
    return false;
  }
}

/** "Allow all once" / "Deny all": one plain decision per approval, never a standing rule. */
export async function decideAll(approvals: Approval[], kind: "allow_once" | "deny"): Promise<void> {
  await Promise.all(approvals.map((approval) => decide(approval, { decision: kind })));
}

export function requestFocus(id: string | null): void {
  setState({ focusRequest: id });
}

export function forgetSession(id: string): void {
  setState((s) => {
    const sessions = { ...s.sessions };
    delete sessions[id];
    return { sessions };
  });
}

export function upsertSession(session: Session): void {
  setState((s) => ({ sessions: { ...s.sessions, [session.id]: { ...s.sessions[session.id], ...session } } }));
}

