// "Auto-approve: on/off" for one session. Turning it on asks what it covers: file edits in the
// workspace (like Claude Code's accept-edits) or edits and commands, and whether High-risk calls
// are included too (unticked, they still ask). On, what the session's rules ask and the scope
// covers is allowed in the name of whoever turned it on (each an audit row, `via auto`, reading
// "auto-approved by NAME"); a deny still denies, and the agent changing its own instructions still
// waits for a person. Turned on while requests wait, it asks whether to approve those too. Only
// the session's owner and admins may switch it.

import { useState } from "react";
import { canManage, editSession } from "../housekeeping";
import { formatTime } from "../format";
import { useAppState } from "../store";
import type { Approval, Session, SessionEdit } from "../types";
import "../housekeeping.css";

type Scope = NonNullable<SessionEdit["auto_approve_scope"]>;

/** What each scope covers, as the switch says it. */
const SCOPE_WORDS: Record<Scope, string> = {
  workspace_edits: "file edits in the workspace",
  edits_and_commands: "edits and commands",
};

export function AutoApproveSwitch({ session, pending }: { session: Session; pending: Approval[] }) {
  const { me } = useAppState();
  const [asking, setAsking] = useState(false);
  const [scope, setScope] = useState<Scope>("workspace_edits");
  const [highRisk, setHighRisk] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const on = !!session.auto_approve;
  const manage = canManage(me, session);
  const waiting = pending.filter((a) => a.session_id === session.id && (a.kind ?? "tool") === "tool");

  const send = async (auto_approve: boolean, approve_pending = false) => {
    setBusy(true);
    setError(null);
    try {
      const body: SessionEdit = auto_approve
        ? { auto_approve, auto_approve_scope: scope, auto_approve_high_risk: highRisk, ...(approve_pending ? { approve_pending } : {}) }
        : { auto_approve };
      await editSession(session.id, body);
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
          else setAsking(true);
        }}
      >
        Auto-approve: {on ? "on" : "off"}
      </button>
      {on && by && session.auto_approve && (
        <span className="muted small" data-testid="auto-approve-by">
          by {by.name} since {formatTime(session.auto_approve.since)} · {SCOPE_WORDS[session.auto_approve.scope ?? "edits_and_commands"]}
          {session.auto_approve.high_risk ? ", High risk included" : ", High risk still asks"} · asks in {by.name}'s turns are
          allowed, others' ask, denies still deny
        </span>
      )}
      {asking && (
        <div className="auto-approve-ask" role="dialog" aria-modal="false" aria-labelledby="auto-approve-ask-text" data-testid="auto-approve-ask">
          <fieldset className="auto-approve-scope" data-testid="auto-approve-scope">
            <legend>Auto-approve in your name</legend>
            {(Object.keys(SCOPE_WORDS) as Scope[]).map((value) => (
              <label key={value}>
                <input
                  type="radio"
                  name={`auto-approve-scope-${session.id}`}
                  value={value}
                  checked={scope === value}
                  onChange={() => setScope(value)}
                  data-testid={`auto-approve-scope-${value}`}
                />{" "}
                {SCOPE_WORDS[value][0].toUpperCase() + SCOPE_WORDS[value].slice(1)}
              </label>
            ))}
            <label>
              <input type="checkbox" checked={highRisk} onChange={(e) => setHighRisk(e.target.checked)} data-testid="auto-approve-high-risk" />{" "}
              Also High-risk calls (deleting files, sudo, piping downloads to a shell…); unticked, they still ask
            </label>
          </fieldset>
          <p id="auto-approve-ask-text">
            {waiting.length === 0
              ? "Nothing is waiting in this session."
              : `${waiting.length === 1 ? "1 request is" : `${waiting.length} requests are`} waiting in this session. Approve ${
                  waiting.length === 1 ? "it" : "them"
                } too (those the choice above covers)?`}
          </p>
          <div className="auto-approve-ask-actions">
            {waiting.length > 0 && (
              <button type="button" className="btn small primary" data-testid="auto-approve-with-pending" disabled={busy} onClick={() => void send(true, true)}>
                Turn on and approve {waiting.length === 1 ? "it" : `all ${waiting.length}`}
              </button>
            )}
            <button
              type="button"
              className={`btn small${waiting.length === 0 ? " primary" : ""}`}
              data-testid="auto-approve-new-only"
              disabled={busy}
              onClick={() => void send(true)}
            >
              {waiting.length > 0 ? "Turn on for new requests only" : "Turn on"}
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
