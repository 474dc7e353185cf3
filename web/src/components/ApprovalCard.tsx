// The approval card (UX.md section 1): what wants to run, why it asks, and the decisions, each
// with its shortcut key printed. Shortcuts belong to the focused card and are ignored while the
// focus is in any text field.

import { useEffect, useRef, useState } from "react";
import { formatAge, formatClock, reasonInWords, splitToolName, toolTitle } from "../format";
import { useCardFocus, useNow } from "../hooks";
import { sessionHref } from "../router";
import { decide, useAppState } from "../store";
import { stageDecision } from "../undo";
import type { Approval, Session, ToolAnnotations } from "../types";
import { ArgumentsView } from "./Arguments";
import { ArgumentsEditor } from "./ArgumentsEditor";
import { ToolChangeView } from "./ToolChange";
import { useFileOnDisk } from "../fileOnDisk";
import { useHunkChoice } from "../hunkChoice";
import { reveal } from "../reveal";
import { alwaysSummary, localScope, scopeChoices, type AlwaysScope } from "../alwaysRule";
import { alwaysAllowOff, useManagedPolicy } from "../managed";
import { FILE_TOOLS, reasonWithoutStakes, riskOf } from "../risk";
import { Stakes } from "./Stakes";
import { RuleChoices } from "./RuleChoices";
import "../person.css";

type Mode = "buttons" | "always" | "reason" | "edit";

function annotationChips(annotations: ToolAnnotations): string[] {
  const chips: string[] = [];
  if (annotations.readOnlyHint) chips.push("read-only");
  if (annotations.destructiveHint) chips.push("destructive");
  if (annotations.openWorldHint) chips.push("open-world");
  if (annotations.idempotentHint) chips.push("idempotent");
  return chips;
}

/** How the gate words a question about the agent rewriting its own instruction files (bootstrap_guard.py). */
const INSTRUCTIONS_PREFIX = "The agent wants to change its own instructions: ";

/** A question about AGENTS.md, SOUL.md, MEMORY.md...: asked each time, never allowed for good. */
function changesInstructions(approval: Approval): boolean {
  return (approval.kind ?? "tool") === "tool" && approval.reason.startsWith(INSTRUCTIONS_PREFIX);
}

/** `Parent › Child` for a session, linking each step. */
export function Breadcrumb({ sessionId, sessions }: { sessionId: string; sessions: Record<string, Session> }) {
  const chain: Session[] = [];
  let current: Session | undefined = sessions[sessionId];
  const seen = new Set<string>();
  while (current && !seen.has(current.id) && chain.length < 5) {
    seen.add(current.id);
    chain.unshift(current);
    current = current.parent_id ? sessions[current.parent_id] : undefined;
  }
  if (chain.length === 0) {
    return (
      <span className="breadcrumb" data-testid="breadcrumb">
        <a href={sessionHref(sessionId)}>Session {sessionId.slice(0, 8)}</a>
      </span>
    );
  }
  return (
    <nav className="breadcrumb" aria-label="Session" data-testid="breadcrumb">
      {chain.map((s, i) => (
        <span key={s.id}>
          {i > 0 && <span aria-hidden="true"> › </span>}
          <a href={sessionHref(s.id)}>{s.title || `Session ${s.id.slice(0, 8)}`}</a>
        </span>
      ))}
    </nav>
  );
}

/** "auto-deny in 9:41", then "Timed out – denied". */
export function Countdown({ expiresAt }: { expiresAt: string }) {
  const now = useNow();
  const left = (Date.parse(expiresAt) - now) / 1000;
  const urgent = left <= 60;
  return (
    <span className={`countdown${urgent ? " urgent" : ""}`} data-testid="countdown" title={`Denied automatically at ${new Date(expiresAt).toLocaleTimeString()}`}>
      {left > 0 ? `auto-deny in ${left > 2 * 86400 ? `${Math.round(left / 86400)} days` : formatClock(left)}` : "Timed out – denied"}
    </span>
  );
}

interface CardProps {
  approval: Approval;
  position: number;
  total: number;
  /** Whether this card's shortcuts are live (it is the focused card of the visible queue). */
  shortcuts: boolean;
}

/** Where a card stands in the queue, whose session it is, how old it is and when it expires. */
export function CardMeta(props: {
  approval: Approval;
  position: number;
  total: number;
  sessions: Record<string, Session>;
  now: number;
}) {
  const { approval, position, total, sessions, now } = props;
  return (
    <div className="card-meta">
      <span className="queue-position" data-testid="queue-position">
        {position} of {total}
      </span>
      <Breadcrumb sessionId={approval.session_id} sessions={sessions} />
      <span className="age" title={new Date(approval.created_at).toLocaleString()}>
        {formatAge(approval.created_at, now)}
      </span>
      <Countdown expiresAt={approval.expires_at} />
    </div>
  );
}

export function ApprovalCard({ approval, position, total, shortcuts }: CardProps) {
  const { sessions, submitting, errors, me } = useAppState();
  const [mode, setMode] = useState<Mode>("buttons");
  const [raw, setRaw] = useState(false);
  const [rules, setRules] = useState<string[]>(approval.suggested_rules);
  const scopes = scopeChoices(me, localScope(approval, sessions[approval.session_id]));
  const [scope, setScope] = useState<AlwaysScope>(scopes[0].kind);
  const scopeLabel = (scopes.find((s) => s.kind === scope) ?? scopes[0]).label;
  const [reason, setReason] = useState("");
  const [editedArgs, setEditedArgs] = useState<Record<string, unknown> | null>(approval.arguments);
  const panelRef = useRef<HTMLDivElement>(null);
  const onDisk = useFileOnDisk(approval);
  const hunks = useHunkChoice(approval, onDisk);
  const busy = Boolean(submitting[approval.id]);
  const now = useNow(true, 15_000);

  const { server } = splitToolName(approval.tool_name);
  const title = toolTitle(approval.tool_name, approval.annotations?.title);
  const chips = annotationChips(approval.annotations ?? {});
  const risk = riskOf(approval);
  const instructions = changesInstructions(approval);
  const outside = approval.kind === "unconfined";
  const onceOnly = instructions || outside;
  const onceTitle = outside
    ? "A command outside the sandbox is allowed once at a time."
    : "Changes to the agent's own instructions are allowed once at a time.";
  // The managed policy may turn "always allow" off: then the card does not offer it (the host refuses it too).
  const alwaysOff = alwaysAllowOff(useManagedPolicy());
  // The exact call's rule, else one narrowed by an argument (issue 34): what the panel opens with.
  const firstRules = approval.suggested_rules.length > 0 ? approval.suggested_rules : (approval.argument_rules ?? []).slice(0, 1);
  const canAlways = firstRules.length > 0 && !onceOnly && !alwaysOff;
  const noNarrowRule =
    me?.role === "admin"
      ? "No narrow rule can cover this call; allow it once or for the session."
      : `Only an admin may allow every call of ${approval.tool_name}; allow it once or for this session.`;

  const cleanRules = rules.map((r) => r.trim()).filter(Boolean);

  const allowOnce = () => void decide(approval, { decision: "allow_once" });
  const allowSession = () => void decide(approval, { decision: "allow_session" });
  const deny = () => void decide(approval, { decision: "deny" });
  const openAlways = () => {
    if (!canAlways) return;
    setRules(firstRules);
    setScope(scopes[0].kind);
    setMode("always");
  };
  const confirmAlways = () => {
    if (cleanRules.length === 0) return;
    void decide(approval, { decision: "allow_always", rules: cleanRules, scope });
  };
  const sendDeny = () => void decide(approval, { decision: "deny", message: reason.trim() || undefined });
  const sendEdited = () => {
    if (editedArgs) void decide(approval, { decision: "allow_once", updated_arguments: editedArgs });
  };
  // Some hunks left out: the call runs with arguments that make only the chosen ones (allowed with edits).
  const hunkBody = hunks.chosenArgs ? { decision: "allow_once" as const, updated_arguments: hunks.chosenArgs } : null;
  const allowHunks = () => {
    if (hunkBody) void decide(approval, hunkBody);
  };

  // Shortcuts decide only from the buttons view. Esc only closes: a panel, then the raw JSON.
  const close = () => {
    if (mode !== "buttons") setMode("buttons");
    else if (raw) setRaw(false);
    else return false;
    return true;
  };
  const shortcut = (key: string, onControl: boolean): (() => void) | null => {
    if (mode !== "buttons") return null;
    // A one-key decision waits out an undo window (undo.ts); the buttons' clicks do not.
    if (hunks.partial && (key === "y" || (key === "Enter" && !onControl))) {
      return hunkBody ? () => stageDecision(approval, hunkBody, `Allowed ${hunks.summary}`) : null;
    }
    if (key === "y" || (key === "Enter" && !onControl)) return () => stageDecision(approval, { decision: "allow_once" }, "Allowed once");
    if (key === "s") return onceOnly || hunks.partial ? null : () => stageDecision(approval, { decision: "allow_session" }, "Allowed for the session");
    if (key === "a") return canAlways && !hunks.partial ? openAlways : null;
    if (key === "n") return () => stageDecision(approval, { decision: "deny" }, "Denied");
    if (key === "r") return () => setMode("reason");
    if (key === "e") return () => setMode("edit");
    return null;
  };
  const backToButtons = () => setMode("buttons");
  const { ref: cardRef, fieldKeys, notice } = useCardFocus(approval.id, {
    keys: { active: shortcuts, close, shortcut, busy },
    panel: mode,
    closePanel: backToButtons,
  });

  // An opened panel is brought into view whole, its buttons clear of the composer, and kept so
  // while the card grows above it (its diff arriving after the panel opened pushed it off screen).
  useEffect(() => {
    const panel = panelRef.current;
    const article = cardRef.current;
    if (mode === "buttons" || !panel) return;
    reveal(panel);
    if (!article) return;
    const observer = new ResizeObserver(() => reveal(panel));
    observer.observe(article);
    return () => observer.disconnect();
  }, [mode]);

  return (
    <article
      ref={cardRef}
      className={`approval-card${risk ? " high-risk" : ""}`}
      data-testid="approval-card"
      data-approval-id={approval.id}
      aria-label={`Approval request ${position} of ${total}: ${title}`}
      tabIndex={-1}
      aria-busy={busy}
    >
      <header className="card-head">
        <CardMeta approval={approval} position={position} total={total} sessions={sessions} now={now} />
        <div className="card-title">
          <h3 data-testid="approval-title">{title}</h3>
          {server && (
            <span className="chip server-chip" data-testid="server-chip" title="MCP server">
              {server}
            </span>
          )}
          {title !== approval.tool_name && <code className="tool-name">{approval.tool_name}</code>}
        </div>
      </header>

      {risk && (
        <div className="risk-banner" role="alert" data-testid="risk-banner">
          {risk}
        </div>
      )}

      {outside && (
        <div className="risk-banner" role="alert" data-testid="outside-sandbox-banner">
          This command would run OUTSIDE the sandbox, with everything your user can reach: other folders, ~/.ssh,
          the network. Allow it only if you read it and the sandbox truly blocks what the task needs.
        </div>
      )}
      {instructions && (
        <div className="risk-banner" role="alert" data-testid="instructions-banner">
          The agent is changing its own instructions: what it writes here steers every later run. Read the new text
          first. This is asked every time; it cannot be allowed for the session or always.
        </div>
      )}

      {approval.tool_change && <ToolChangeView change={approval.tool_change} admin={me?.role === "admin"} />}
      <p className="why" data-testid="approval-reason">
        <span className="why-label">Why it asks:</span>{" "}
        <span title={approval.reason || undefined} data-testid="approval-reason-text">
          {reasonInWords(reasonWithoutStakes(approval.reason), approval.tool_name, approval.annotations?.title)}
        </span>
      </p>
      <Stakes approval={approval} />
      {chips.length > 0 && (
        <ul className="chips" aria-label="What the server says about this tool">
          {chips.map((chip) => (
            <li key={chip} className={`chip hint-chip hint-${chip}`} data-testid="annotation-chip" title="A hint from the tool's server, not verified">
              {chip} (server says)
            </li>
          ))}
        </ul>
      )}

      <section className="card-args" aria-label="Arguments">
        {hunks.choice && mode === "buttons" && (
          <p className="muted small" data-testid="hunk-hint">
            Untick the hunks you do not want: the call then runs with only the ticked ones ({hunks.summary}).
          </p>
        )}
        <ArgumentsView
          name={approval.tool_name}
          args={approval.arguments}
          raw={raw}
          onRawChange={setRaw}
          onDisk={onDisk}
          choice={mode === "buttons" ? hunks.choice : undefined}
        />
      </section>

      {mode === "always" && (
        <div ref={panelRef} className="mode-panel" data-testid="always-panel" role="group" aria-label="Always allow">
          <p className="always-summary" data-testid="always-summary">
            <strong>{alwaysSummary(approval.tool_name, cleanRules, scopeLabel)}</strong>
          </p>
          <p>
            Saved before the call runs; later calls {cleanRules.length === 1 ? "it matches" : "they match"} run without
            asking. {me?.role === "admin" ? "Edit the pattern if you want it narrower or wider." : "You may narrow the pattern; only an admin may widen it."}
          </p>
          {rules.map((rule, i) => (
            <input
              key={i}
              className="rule-input"
              data-testid="always-rule"
              aria-label={`Rule ${i + 1}`}
              value={rule}
              autoFocus={i === 0}
              spellCheck={false}
              onChange={(e) => setRules(rules.map((r, j) => (j === i ? e.target.value : r)))}
              onKeyDown={(e) => fieldKeys(e, confirmAlways)}
            />
          ))}
          <RuleChoices approval={approval} chosen={rules} onChoose={setRules} fieldKeys={fieldKeys} onEnter={confirmAlways} />
          {scopes.length > 1 ? (
            <fieldset className="scope" data-testid="always-scope">
              <legend>Scope</legend>
              {scopes.map((s) => (
                <label key={s.kind}>
                  <input
                    type="radio"
                    name={`scope-${approval.id}`}
                    value={s.kind}
                    data-testid={`always-scope-${s.kind}`}
                    checked={scope === s.kind}
                    onChange={() => setScope(s.kind)}
                    onKeyDown={(e) => fieldKeys(e, confirmAlways)}
                  />{" "}
                  {s.kind === "global" ? (
                    <>
                      {s.label}: the config file's <code>permissions.allow</code>
                    </>
                  ) : (
                    <>only this session's {s.label}</>
                  )}
                </label>
              ))}
            </fieldset>
          ) : (
            <p className="scope" data-testid="always-scope">
              Scope: <strong>{scopeLabel}</strong> — later sessions there run it unasked; no other session does.
            </p>
          )}
          <div className="actions">
            <button type="button" className="btn primary" data-testid="always-confirm" disabled={busy || cleanRules.length === 0} onClick={confirmAlways}>
              Save rule and allow <kbd>Enter</kbd>
            </button>
            <button type="button" className="btn" data-testid="always-cancel" onClick={backToButtons}>
              Cancel <kbd>Esc</kbd>
            </button>
          </div>
        </div>
      )}

      {mode === "reason" && (
        <div ref={panelRef} className="mode-panel" data-testid="reason-panel" role="group" aria-label="Deny with reason">
          <label htmlFor={`reason-${approval.id}`}>Why not? The model reads this.</label>
          <textarea
            id={`reason-${approval.id}`}
            data-testid="deny-reason"
            rows={2}
            autoFocus
            value={reason}
            placeholder="e.g. use the staging database instead"
            onChange={(e) => setReason(e.target.value)}
            onKeyDown={(e) => fieldKeys(e, sendDeny)}
          />
          <div className="actions">
            <button type="button" className="btn danger" data-testid="deny-reason-send" disabled={busy} onClick={sendDeny}>
              Send denial <kbd>Enter</kbd>
            </button>
            <button type="button" className="btn" onClick={backToButtons}>
              Cancel <kbd>Esc</kbd>
            </button>
          </div>
        </div>
      )}

      {mode === "edit" && (
        <div ref={panelRef} className="mode-panel" data-testid="edit-panel" role="group" aria-label="Edit arguments">
          <p>Edit the arguments, then allow the edited call. It is checked against your rules again.</p>
          <ArgumentsEditor
            id={approval.id}
            args={approval.arguments}
            onChange={({ args }) => setEditedArgs(args)}
            onKeyDown={(e) => fieldKeys(e, sendEdited, true)}
          />
          {editedArgs && FILE_TOOLS.has(approval.tool_name) && (
            // Closed at first, so the panel and its buttons fit above the composer.
            <details className="edit-preview" data-testid="edit-preview">
              <summary>Preview the change</summary>
              <ArgumentsView name={approval.tool_name} args={editedArgs} onDisk={onDisk} />
            </details>
          )}
          <div className="actions">
            <button type="button" className="btn primary" data-testid="edit-allow" disabled={busy || editedArgs === null} onClick={sendEdited}>
              Allow with these arguments <kbd>Ctrl+Enter</kbd>
            </button>
            <button type="button" className="btn" onClick={backToButtons}>
              Cancel <kbd>Esc</kbd>
            </button>
          </div>
        </div>
      )}

      {mode === "buttons" && (
        <div className="actions decision-actions" role="group" aria-label="Decision" data-testid="approval-actions">
          {hunks.partial ? (
            <button
              type="button"
              className="btn primary"
              data-testid="allow-hunks"
              aria-keyshortcuts="Y Enter"
              disabled={busy || !hunkBody}
              title={hunkBody ? "Runs the call with only the ticked hunks" : "Tick at least one hunk, or deny"}
              onClick={allowHunks}
            >
              Allow selected hunks ({hunks.summary}) <kbd>Y</kbd>
            </button>
          ) : (
            <button type="button" className="btn primary" data-testid="approve-once" aria-keyshortcuts="Y Enter" disabled={busy} onClick={allowOnce}>
              Allow once <kbd>Y</kbd>
            </button>
          )}
          <button
            type="button"
            className="btn"
            data-testid="approve-session"
            aria-keyshortcuts="S"
            disabled={busy || onceOnly || hunks.partial}
            title={onceOnly ? onceTitle : hunks.partial ? "Allows the whole call: tick every hunk first" : undefined}
            onClick={allowSession}
          >
            Allow for session <kbd>S</kbd>
          </button>
          {!alwaysOff && (
          <button
            type="button"
            className="btn"
            data-testid="approve-always"
            aria-keyshortcuts="A"
            disabled={busy || !canAlways || hunks.partial}
            title={
              hunks.partial
                ? "Allows the whole call: tick every hunk first"
                : canAlways
                  ? undefined
                  : onceOnly
                    ? onceTitle
                    : noNarrowRule
            }
            onClick={openAlways}
          >
            Always allow… <kbd>A</kbd>
          </button>
          )}
          <button type="button" className="btn" data-testid="deny" aria-keyshortcuts="N" disabled={busy} onClick={deny}>
            Deny <kbd>N</kbd>
          </button>
          <button type="button" className="btn" data-testid="deny-with-reason" aria-keyshortcuts="R" disabled={busy} onClick={() => setMode("reason")}>
            Deny with reason <kbd>R</kbd>
          </button>
          <button type="button" className="btn" data-testid="edit-args" aria-keyshortcuts="E" disabled={busy} onClick={() => setMode("edit")}>
            Edit arguments <kbd>E</kbd>
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
