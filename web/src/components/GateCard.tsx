// The card for a gate (UX.md section 1, adapted): not a tool call but a decision about the work.
// A plan asks to switch modes and carry it out; a workflow asks to start its next step. The
// person reads the plan or prompt, may edit that text, approve, deny, or deny with a reason
// (for a plan, the reason goes back to the agent, which revises it). No session or always
// options: those only make sense for tools.

import { useState } from "react";
import { approvalTitle } from "../format";
import { useCardFocus, useNow } from "../hooks";
import { decide, useAppState } from "../store";
import type { Approval } from "../types";
import { CardMeta } from "./ApprovalCard";
import { Markdown } from "./Markdown";

type Panel = "buttons" | "edit" | "reason";

interface GateCardProps {
  approval: Approval;
  position: number;
  total: number;
  shortcuts: boolean;
}

export function GateCard({ approval, position, total, shortcuts }: GateCardProps) {
  const { sessions, submitting, errors } = useAppState();
  const isPlan = approval.kind === "mode_switch";
  const field = isPlan ? "plan" : "prompt";
  const original = String(approval.arguments[field] ?? "");
  const nextMode = String(approval.arguments.mode ?? "");
  const [panel, setPanel] = useState<Panel>("buttons");
  const [edited, setEdited] = useState(original);
  const [reason, setReason] = useState("");
  const busy = Boolean(submitting[approval.id]);
  const now = useNow(true, 15_000);
  const title = approvalTitle(approval);
  const fromMode = sessions[approval.session_id]?.mode;

  const approve = () => void decide(approval, { decision: "allow_once" });
  const deny = () => void decide(approval, { decision: "deny" });
  const sendEdited = () => {
    if (!edited.trim()) return;
    void decide(approval, { decision: "allow_once", updated_arguments: { ...approval.arguments, [field]: edited } });
  };
  const sendReason = () => void decide(approval, { decision: "deny", message: reason.trim() || undefined });

  // Shortcuts decide only from the buttons view. Esc only closes the open panel: denying a plan
  // stops the agent, so no closing key may do it.
  const close = () => {
    if (panel === "buttons") return false;
    setPanel("buttons");
    return true;
  };
  const shortcut = (key: string, onControl: boolean): (() => void) | null => {
    if (panel !== "buttons") return null;
    if (key === "y" || (key === "Enter" && !onControl)) return approve;
    if (key === "n") return deny;
    if (key === "r") return () => setPanel("reason");
    if (key === "e") return () => setPanel("edit");
    return null;
  };
  const { ref: cardRef, fieldKeys, notice } = useCardFocus(approval.id, {
    keys: { active: shortcuts, close, shortcut, busy },
    panel,
    closePanel: () => setPanel("buttons"),
  });

  return (
    <article
      ref={cardRef}
      className="approval-card gate-card"
      data-testid="approval-card"
      data-approval-id={approval.id}
      data-kind={approval.kind}
      aria-label={`Approval request ${position} of ${total}: ${title}`}
      tabIndex={-1}
      aria-busy={busy}
    >
      <header className="card-head">
        <CardMeta approval={approval} position={position} total={total} sessions={sessions} now={now} />
        <div className="card-title">
          <h3 data-testid="approval-title">{title}</h3>
          {isPlan ? (
            fromMode && <span className="chip gate-chip">{`${fromMode} → ${nextMode}`}</span>
          ) : (
            <span className="chip gate-chip" title="Workflow">
              {String(approval.arguments.workflow ?? "workflow")}
            </span>
          )}
        </div>
      </header>

      {approval.reason && (
        <p className="why" data-testid="approval-reason">
          {approval.reason}
        </p>
      )}

      {panel === "edit" ? (
        <div className="mode-panel" role="group" aria-label={isPlan ? "Edit the plan" : "Edit the prompt"}>
          <label htmlFor={`gate-edit-${approval.id}`}>
            {isPlan ? `The plan the agent carries out in ${nextMode} mode:` : `The prompt step ${String(approval.arguments.step)} starts with:`}
          </label>
          <textarea
            id={`gate-edit-${approval.id}`}
            className="gate-editor"
            data-testid="gate-edit-text"
            rows={Math.min(18, Math.max(5, edited.split("\n").length + 1))}
            autoFocus
            value={edited}
            onChange={(e) => setEdited(e.target.value)}
            onKeyDown={(e) => fieldKeys(e, sendEdited, true)}
          />
          <div className="actions">
            <button type="button" className="btn primary" data-testid="gate-edit-allow" disabled={busy || !edited.trim()} onClick={sendEdited}>
              {isPlan ? "Approve this plan" : "Start with this prompt"} <kbd>Ctrl+Enter</kbd>
            </button>
            <button type="button" className="btn" onClick={() => setPanel("buttons")}>
              Cancel <kbd>Esc</kbd>
            </button>
          </div>
        </div>
      ) : (
        <section className="gate-text" aria-label={isPlan ? "The plan" : "The next step's prompt"}>
          <Markdown text={original} testId="gate-text" />
        </section>
      )}

      {panel === "reason" && (
        <div className="mode-panel" role="group" aria-label={isPlan ? "Deny with feedback" : "Deny with reason"}>
          <label htmlFor={`gate-reason-${approval.id}`}>
            {isPlan ? "What should change? The agent reads this and revises the plan (leave empty to just stop)." : "Why not? The run ends with this reason."}
          </label>
          <textarea
            id={`gate-reason-${approval.id}`}
            data-testid="gate-reason"
            rows={2}
            autoFocus
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            onKeyDown={(e) => fieldKeys(e, sendReason)}
          />
          <div className="actions">
            <button type="button" className="btn danger" data-testid="gate-reason-send" disabled={busy} onClick={sendReason}>
              {isPlan && reason.trim() ? "Send feedback" : "Deny"} <kbd>Enter</kbd>
            </button>
            <button type="button" className="btn" onClick={() => setPanel("buttons")}>
              Cancel <kbd>Esc</kbd>
            </button>
          </div>
        </div>
      )}

      {panel === "buttons" && (
        <div className="actions decision-actions" role="group" aria-label="Decision" data-testid="approval-actions">
          <button type="button" className="btn primary" data-testid="gate-approve" aria-keyshortcuts="Y Enter" disabled={busy} onClick={approve}>
            {isPlan ? `Switch to ${nextMode} and carry it out` : `Start step ${String(approval.arguments.step)}`} <kbd>Y</kbd>
          </button>
          <button type="button" className="btn" data-testid="gate-edit" aria-keyshortcuts="E" disabled={busy} onClick={() => setPanel("edit")}>
            {isPlan ? "Edit the plan" : "Edit the prompt"} <kbd>E</kbd>
          </button>
          <button type="button" className="btn" data-testid="gate-deny-with-reason" aria-keyshortcuts="R" disabled={busy} onClick={() => setPanel("reason")}>
            {isPlan ? "Deny with feedback" : "Deny with reason"} <kbd>R</kbd>
          </button>
          <button type="button" className="btn" data-testid="gate-deny" aria-keyshortcuts="N" disabled={busy} onClick={deny}>
            Deny <kbd>N</kbd>
          </button>
        </div>
      )}
      {notice && (
        <p className="muted small press-again" role="status" data-testid="press-again">
          {notice}
        </p>
      )}
      {errors[approval.id] && (
        <p className="error-text" role="alert" data-testid="approval-error">
          {errors[approval.id]}
        </p>
      )}
    </article>
  );
}
