// "Auto-approve: on/off" for one session. On, what the session's rules ask is allowed in the name
// of whoever turned it on (each an audit row, `via auto`); a deny still denies, and the agent
// changing its own instructions still waits for a person. Turned on while requests wait, it asks
// whether to approve those too. Only the session's owner and admins may switch it.

import { useState } from "react";
import { canManage, editSession } from "../housekeeping";
import { formatTime } from "../format";
import { useAppState } from "../store";
import type { Approval, Session } from "../types";
import "../housekeeping.css";

export function AutoApproveSwitch({ session, pending }: { session: Session; pending: Approval[] }) {
  const { me } = useAppState();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const on = !!session.auto_approve;
  const manage = canManage(me, session);
  const waiting = pending.filter((a) => a.session_id === session.id && (a.kind ?? "tool") === "tool");

  const send = async (auto_approve: boolean, approve_pending = false) => {
    setBusy(true);
    setError(null);
    try {
      await editSession(session.id, approve_pending ? { auto_approve, approve_pending } : { auto_approve });
      setAsking(false);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  const by = session.auto_approve?.by;
  return (
    <div className={`auto-approve${on ? " is-on" : ""}`} data-testid="auto-approve">
      <button
        type="button"
        role="switch"
        aria-checked={on}
        className={`btn small auto-approve-switch${on ? " on" : ""}`}
        data-testid="auto-approve-switch"
        disabled={!manage || busy || asking}
        title={
          manage
            ? "Allow what this session's rules would ask about, in your name, in turns your own messages start (another person's message still asks). A deny still denies."
            : "Only the session's owner or an admin can change this"
        }
        onClick={() => {
          if (on) void send(false);
          else if (waiting.length > 0) setAsking(true);
          else void send(true);
        }}
      >
        Auto-approve: {on ? "on" : "off"}
      </button>
      {on && by && session.auto_approve && (
        <span className="muted small" data-testid="auto-approve-by">
          by {by.name} since {formatTime(session.auto_approve.since)} · asks in {by.name}'s turns are allowed, others' ask, denies still deny
        </span>
      )}
      {asking && (
        <div className="auto-approve-ask" role="dialog" aria-modal="false" aria-labelledby="auto-approve-ask-text" data-testid="auto-approve-ask">
          <p id="auto-approve-ask-text">
            {waiting.length === 1 ? "1 request is" : `${waiting.length} requests are`} waiting in this session. Approve{" "}
            {waiting.length === 1 ? "it" : "them"} too?
          </p>
          <div className="auto-approve-ask-actions">
            <button type="button" className="btn small primary" data-testid="auto-approve-with-pending" disabled={busy} onClick={() => void send(true, true)}>
              Turn on and approve {waiting.length === 1 ? "it" : `all ${waiting.length}`}
            </button>
            <button type="button" className="btn small" data-testid="auto-approve-new-only" disabled={busy} onClick={() => void send(true)}>
              Turn on for new requests only
            </button>
            <button type="button" className="btn small subtle" data-testid="auto-approve-cancel" disabled={busy} onClick={() => setAsking(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {error && (
        <p className="error-text small" role="alert" data-testid="auto-approve-error">
          {error}
        </p>
      )}
    </div>
  );
}
