// The undo window of a decision made by one key press (issue 16: "never lose a person's intent").
//
// A key press lands on whatever card has the focus, and the focus moves as requests come and go,
// so a press meant for one card can answer another. Such a decision leaves the queue at once (the
// next card can be answered) but is sent only after UNDO_MS; Z (or Ctrl/Cmd+Z) or the toast's
// Undo takes it back. A click is deliberate: it goes through `decide` at once, never slowed.

import { decide, getState, patchState, requestFocus, type AppState, type StagedDecision } from "./store";
import type { Approval, DecisionBody } from "./types";

/** How long a decision made by a key press waits before it is sent. */
export const UNDO_MS = 4000;
export const OFFLINE_MESSAGE =
  "Not sent: Overseer's server cannot be reached. Your answer was not recorded; answer again once it is back.";
const timers = new Map<string, number>();

function undoWindow(): number {
  // Browser tests may shorten it; nothing else sets this.
  const override = (window as unknown as { __overseerUndoMs?: number }).__overseerUndoMs;
  return typeof override === "number" ? override : UNDO_MS;
}

/** Decide by key press: the card leaves the queue now, the answer is sent after the window. */
export function stageDecision(approval: Approval, body: DecisionBody, label: string): void {
  const state = getState();
  if (state.staged[approval.id] || state.submitting[approval.id] || !state.pending[approval.id]) return;
  const wait = undoWindow();
  const staged: StagedDecision = { approval, body, label, due: Date.now() + wait };
  patchState((s) => ({ staged: { ...s.staged, [approval.id]: staged } }));
  timers.set(approval.id, window.setTimeout(() => sendStaged(approval.id), wait));
}

/** Take back a staged decision: its card returns to the queue, focused. */
export function undoStaged(id: string): void {
  if (!getState().staged[id]) return;
  dropStaged(id);
  requestFocus(id);
}

/** The most recent staged decision, which the undo key takes back. */
export function lastStaged(s: AppState): StagedDecision | null {
  return Object.values(s.staged).sort((a, b) => b.due - a.due)[0] ?? null;
}

/** Forget a staged decision without sending it (undone, or answered elsewhere meanwhile). */
export function dropStaged(id: string): void {
  window.clearTimeout(timers.get(id));
  timers.delete(id);
  if (!getState().staged[id]) return;
  patchState((s) => {
    const staged = { ...s.staged };
    delete staged[id];
    return { staged };
  });
}

function sendStaged(id: string): void {
  const staged = getState().staged[id];
  if (!staged) return;
  dropStaged(id);
  void decide(staged.approval, staged.body);
}

/** Send every staged decision now: the page is going away or out of sight, so no undo can come. */
export function sendStagedNow(): void {
  Object.keys(getState().staged).forEach(sendStaged);
}
