// The undo window of key-press decisions, as a toast above everything: what was decided, the
// seconds left, and Undo (Z). See undo.ts for why only key presses wait.

import { useEffect } from "react";
import { isTypingTarget, useNow } from "../hooks";
import { toolTitle } from "../format";
import { useAppState } from "../store";
import { lastStaged, undoStaged } from "../undo";
import "../person.css";

export function UndoToast() {
  const state = useAppState();
  const staged = Object.values(state.staged).sort((a, b) => a.due - b.due);
  const now = useNow(staged.length > 0, 250);

  useEffect(() => {
    if (staged.length === 0) return;
    const onKey = (event: KeyboardEvent) => {
      if (isTypingTarget(event.target) || event.altKey || event.repeat) return;
      const undoKey = event.key.toLowerCase() === "z" && !event.shiftKey;
      if (!undoKey) return;
      const last = lastStaged(state);
      if (!last) return;
      event.preventDefault();
      undoStaged(last.approval.id);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [staged.length, state]);

  if (staged.length === 0) return null;
  return (
    <div className="undo-toast" role="status" aria-live="polite" data-testid="undo-toast">
      {staged.map((s) => (
        <div className="undo-row" key={s.approval.id} data-testid="undo-row" data-approval-id={s.approval.id}>
          <span>
            <strong>{s.label}</strong>: {toolTitle(s.approval.tool_name, s.approval.annotations?.title)}
            <span className="muted"> · sending in {Math.max(0, Math.ceil((s.due - now) / 1000))} s</span>
          </span>
          <button type="button" className="btn small" data-testid="undo-button" onClick={() => undoStaged(s.approval.id)}>
            Undo <kbd>Z</kbd>
          </button>
        </div>
      ))}
    </div>
  );
}
