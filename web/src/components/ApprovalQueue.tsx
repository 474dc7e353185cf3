// The queue of pending approvals, oldest first: one focused card ("1 of 3"), the others as
// compact rows, a batch bar from two pending, and one-line rows for what was just decided.

import { useEffect, useMemo, useState } from "react";
import { approvalSubject, approvalTitle, argumentSummary, elicitationOutcome, formatAge, gateOutcome, isElicitation, isGate, isSampling, sessionName, splitToolName, truncate } from "../format";
import "../names.css";
import { useNow } from "../hooks";
import { decideAll, requestFocus, useAppState, type DecidedEntry } from "../store";
import type { Approval } from "../types";
import { batchAllowable } from "../risk";
import { ApprovalCard } from "./ApprovalCard";
import { ElicitationCard } from "./ElicitationCard";
import { SamplingCard } from "./SamplingCard";
import { GateCard } from "./GateCard";

interface QueueProps {
  pending: Approval[];
  decided: DecidedEntry[];
  /** Whether the keyboard shortcuts act on this queue (only the one on screen). */
  shortcuts?: boolean;
  emptyText?: string;
  showDecided?: number;
  /** Name each row's session (the inbox mixes sessions; a session's own view does not). */
  showSession?: boolean;
}

export function ApprovalQueue({ pending, decided, shortcuts = true, emptyText, showDecided = 5, showSession = true }: QueueProps) {
  const { focusRequest, submitting, sessions } = useAppState();
  const [focusedId, setFocusedId] = useState<string | null>(null);
  const now = useNow(pending.length > 1, 15_000);

  // A notification click asks for a particular card.
  useEffect(() => {
    if (focusRequest && pending.some((a) => a.id === focusRequest)) {
      setFocusedId(focusRequest);
      requestFocus(null);
    }
  }, [focusRequest, pending]);

  const focused = pending.find((a) => a.id === focusedId) ?? pending[0];
  const position = focused ? pending.indexOf(focused) + 1 : 0;
  const others = pending.filter((a) => a !== focused);
  const recent = decided.slice(-showDecided);
  const anyBusy = pending.some((a) => submitting[a.id]);

  // A batch allows only what a person could judge from its row; the rest waits for its own decision.
  const allowable = useMemo(() => pending.filter(batchAllowable), [pending]);
  const held = pending.length - allowable.length;
  const groups = useMemo(() => {
    const byTool = new Map<string, Approval[]>();
    for (const approval of allowable) byTool.set(approval.tool_name, [...(byTool.get(approval.tool_name) ?? []), approval]);
    return [...byTool.entries()].filter(([, list]) => list.length > 1);
  }, [allowable]);

  return (
    <section className="approval-queue" aria-label="Approvals waiting" data-testid="approval-queue">
      {recent.length > 0 && (
        <ul className="decided-list" aria-label="Just decided">
          {recent.map((entry) => (
            <li
              key={entry.approval.id}
              className={`decided-row${entry.denied ? " denied" : " allowed"}`}
              data-testid="approval-decided"
              data-approval-id={entry.approval.id}
            >
              <span aria-hidden="true" className="decided-icon">
                {entry.denied ? "✕" : "✓"}
              </span>
              <strong title={entry.approval.tool_name}>{approvalSubject(entry.approval)}</strong> —{" "}
              {isGate(entry.approval)
                ? gateOutcome(entry.outcome)
                : isElicitation(entry.approval)
                  ? elicitationOutcome(entry.outcome)
                  : entry.outcome}
              {entry.by && (
                <span className="decided-by" data-testid="decided-by">
                  {" "}
                  {entry.by}
                </span>
              )}
              {showSession && (
                <span className="row-session" data-testid="row-session">
                  {sessionName(sessions[entry.approval.session_id], entry.approval.session_id)}
                </span>
              )}
              {entry.lost && (
                <span className="decision-lost" role="status" data-testid="decision-lost">
                  {entry.lost}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}

      {pending.length >= 2 && (
        <div className="batch-bar" role="group" aria-label="Answer all waiting requests" data-testid="batch-bar">
          <span className="batch-count">{pending.length} waiting</span>
          {allowable.length > 0 && (
            <button type="button" className="btn" data-testid="allow-all-once" disabled={anyBusy} onClick={() => void decideAll(allowable, "allow_once")}>
              {held === 0 ? "Allow all once" : `Allow ${allowable.length} low-risk once`}
            </button>
          )}
          {held > 0 && (
            <span className="batch-held" data-testid="batch-held">
              {held === 1 ? "1 needs its own decision" : `${held} need their own decision`}
            </span>
          )}
          <button type="button" className="btn" data-testid="deny-all" disabled={anyBusy} onClick={() => void decideAll(pending, "deny")}>
            Deny all
          </button>
          {groups.length > 1 &&
            groups.map(([tool, list]) => (
              <span className="batch-group" key={tool}>
                <button type="button" className="btn small" disabled={anyBusy} onClick={() => void decideAll(list, "allow_once")}>
                  Allow {list.length} × {splitToolName(tool).tool} once
                </button>
                <button type="button" className="btn small" disabled={anyBusy} onClick={() => void decideAll(list, "deny")}>
                  Deny {list.length}
                </button>
              </span>
            ))}
        </div>
      )}

      {focused && isElicitation(focused) ? (
        <ElicitationCard key={focused.id} approval={focused} position={position} total={pending.length} />
      ) : focused && isSampling(focused) ? (
        <SamplingCard key={focused.id} approval={focused} position={position} total={pending.length} />
      ) : focused && isGate(focused) ? (
        <GateCard key={focused.id} approval={focused} position={position} total={pending.length} shortcuts={shortcuts} />
      ) : focused ? (
        <ApprovalCard key={focused.id} approval={focused} position={position} total={pending.length} shortcuts={shortcuts} />
      ) : (
        emptyText && (
          <p className="empty" data-testid="queue-empty">
            {emptyText}
          </p>
        )
      )}

      {others.length > 0 && (
        <ol className="compact-list" aria-label="Also waiting">
          {others.map((approval) => (
            <li key={approval.id} data-testid="approval-compact" data-approval-id={approval.id}>
              <button type="button" className="compact-row" onClick={() => setFocusedId(approval.id)}>
                <span className="compact-pos">{pending.indexOf(approval) + 1}</span>
                <span className="compact-title" title={approval.tool_name}>{approvalTitle(approval)}</span>
                {showSession && (
                  <span className="row-session" data-testid="row-session">
                    {sessionName(sessions[approval.session_id], approval.session_id)}
                  </span>
                )}
                {splitToolName(approval.tool_name).server && (
                  <span className="chip server-chip">{splitToolName(approval.tool_name).server}</span>
                )}
                <span className="compact-args">
                  {truncate(
                    isGate(approval)
                      ? String(approval.arguments.plan ?? approval.arguments.prompt ?? "")
                      : isElicitation(approval)
                        ? String(approval.arguments.message ?? "")
                        : isSampling(approval)
                          ? String((approval.arguments.messages as { text?: string }[] | undefined)?.[0]?.text ?? "")
                          : argumentSummary(approval.arguments),
                    90,
                  )}
                </span>
                <span className="age">{formatAge(approval.created_at, now)}</span>
              </button>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
