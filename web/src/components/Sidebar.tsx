// The sessions sidebar: "Waiting for you" pinned on top, then every session (sub-sessions under
// their parent), a filter box and the new-session form.

import { useCallback, useEffect, useState } from "react";
import { api } from "../api";
import { canManage, isActive } from "../housekeeping";
import { formatCost, formatTokens, statusLabel } from "../format";
import { stoppedShort } from "../outcome";
import { sessionHref, type Route } from "../router";
import { pendingCountBySession, pendingList, useAppState } from "../store";
import type { Session } from "../types";
import { AgentBadge } from "./Agents";
import { NewSessionForm } from "./NewSessionForm";
import { RenameField, SessionMenu, type RowUi } from "./SessionMenu";

export function StatusBadge({ session, waiting }: { session: Session; waiting: number }) {
  const status = waiting > 0 ? "waiting_approval" : session.status;
  // A run that answered around a step a person refused is not "Done" (amber, with the reason).
  const short = waiting > 0 ? null : stoppedShort(session);
  return (
    <span
      className={`badge status-${short ? "stopped-short" : status}`}
      data-testid="status-badge"
      data-status={status}
      data-stop-reason={short ? session.stop_reason : undefined}
    >
      {short ?? statusLabel(status, waiting)}
    </span>
  );
}

function sessionName(session: Session): string {
  return session.title || `Session ${session.id.slice(0, 8)}`;
}

function SessionRow({
  session,
  waiting,
  active,
  depth,
  ui,
  setUi,
}: {
  session: Session;
  waiting: number;
  active: boolean;
  depth: number;
  ui: RowUi | null;
  setUi: (ui: RowUi | null) => void;
}) {
  const { me } = useAppState();
  const manage = canManage(me, session);
  const rename = () => setUi({ id: session.id, open: "rename", draft: session.title });
  const setMenu = useCallback(
    (open: boolean, error: string | null = null) => setUi(open ? { id: session.id, open: "menu", error } : null),
    [session.id, setUi],
  );
  if (ui?.open === "rename") {
    return (
      <li className="session-item">
        <RenameField
          session={session}
          value={ui.draft}
          setValue={(draft) => setUi({ ...ui, draft })}
          onDone={() => setUi(null)}
        />
      </li>
    );
  }
  return (
    <li className="session-item">
      <a
        href={sessionHref(session.id)}
        className={`session-row${active ? " active" : ""}`}
        style={depth ? { paddingLeft: `${0.75 + depth * 0.9}rem` } : undefined}
        aria-current={active ? "page" : undefined}
        data-testid="session-row"
        data-session-id={session.id}
      >
        {depth > 0 && (
          <span className="sub-marker" aria-label="sub-session">
            ↳
          </span>
        )}
        <span
          className="session-title"
          // The whole title, however little of it fits (issue 33, item 12).
          title={manage ? `${sessionName(session)} (double-click to rename)` : sessionName(session)}
          onDoubleClick={(e) => {
            if (!manage) return;
            e.preventDefault();
            rename();
          }}
        >
          {sessionName(session)}
        </span>
        {/* The pills go on a line of their own under the title, never beside it to squeeze it. */}
        <span className="session-pills">
          {session.archived && (
            <span className="badge archived-badge" data-testid="archived-badge">
              archived
            </span>
          )}
          <AgentBadge session={session} />
          {session.usage?.cost_usd > 0 && (
            <span className="muted small" data-testid="session-row-cost" title={`${formatTokens(session.usage.input_tokens)} in, ${formatTokens(session.usage.output_tokens)} out`}>
              {formatCost(session.usage.cost_usd)}
            </span>
          )}
          <StatusBadge session={session} waiting={waiting} />
        </span>
      </a>
      {manage && (
        <SessionMenu
          session={session}
          open={ui?.open === "menu"}
          error={ui?.open === "menu" ? ui.error : null}
          setMenu={setMenu}
          onRename={rename}
        />
      )}
    </li>
  );
}

/** Ids of sessions whose messages hold the filter text (asked of the server, after a pause in typing). */
function useMessageSearch(filter: string): Set<string> {
  const [found, setFound] = useState<Set<string>>(new Set());
  const text = filter.trim();
  useEffect(() => {
    if (text.length < 2) {
      setFound(new Set());
      return;
    }
    let cancelled = false;
    const timer = window.setTimeout(() => {
      api
        .searchSessions(text)
        .then((sessions) => !cancelled && setFound(new Set(sessions.map((s) => s.id))))
        .catch(() => undefined); // the title filter still works without the server
    }, 250);
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [text]);
  return found;
}

export function Sidebar({ route, onNavigate }: { route: Route; onNavigate: () => void }) {
  const state = useAppState();
  const [filter, setFilter] = useState("");
  const [creating, setCreating] = useState(false);
  const [showArchived, setShowArchived] = useState(false);
  const [ui, setUi] = useState<RowUi | null>(null); // see RowUi: kept here so a row that moves keeps it
  const found = useMessageSearch(filter);
  const counts = pendingCountBySession(state);
  const activeId = route.name === "session" ? route.id : null;
  const needle = filter.trim().toLowerCase();
  // Archived sessions stay out of the list unless asked for; one that runs again shows anyway.
  const all = Object.values(state.sessions).filter((s) => showArchived || !s.archived || isActive(s) || s.id === activeId);
  const archivedCount = Object.values(state.sessions).filter((s) => s.archived).length;
  const matches = (s: Session) =>
    !needle ||
    sessionName(s).toLowerCase().includes(needle) ||
    s.id.includes(needle) ||
    s.status.includes(needle) ||
    found.has(s.id);

  // Waiting sessions, ordered by their oldest pending approval.
  const oldestPending: Record<string, number> = {};
  for (const approval of pendingList(state)) {
    oldestPending[approval.session_id] ??= Date.parse(approval.created_at);
  }
  const waiting = all
    .filter((s) => counts[s.id] && matches(s))
    .sort((a, b) => oldestPending[a.id] - oldestPending[b.id]);

  const byRecent = (a: Session, b: Session) => Date.parse(b.updated_at || b.created_at) - Date.parse(a.updated_at || a.created_at);
  const ids = new Set(all.map((s) => s.id));
  const children = new Map<string, Session[]>();
  for (const s of all) {
    if (s.parent_id && ids.has(s.parent_id)) children.set(s.parent_id, [...(children.get(s.parent_id) ?? []), s]);
  }
  const roots = all.filter((s) => !s.parent_id || !ids.has(s.parent_id)).sort(byRecent);
  const rows: { session: Session; depth: number }[] = [];
  // A session is listed once: one pinned under "Waiting for you" is not repeated below (its
  // sub-sessions still are, one level up).
  const pinned = new Set(waiting.map((s) => s.id));
  const walk = (s: Session, depth: number) => {
    const kids = (children.get(s.id) ?? []).sort(byRecent);
    if (pinned.has(s.id)) {
      kids.forEach((k) => walk(k, depth));
      return;
    }
    const kidRowsStart = rows.length;
    rows.push({ session: s, depth });
    kids.forEach((k) => walk(k, depth + 1));
    // Drop a parent that neither matches nor has matching children.
    if (!matches(s) && rows.length === kidRowsStart + 1) rows.pop();
  };
  roots.forEach((s) => walk(s, 0));

  return (
    <nav className="sidebar" aria-label="Sessions" data-testid="sidebar" onClick={(e) => {
      if ((e.target as HTMLElement).closest("a")) onNavigate();
    }}>
      <div className="sidebar-top">
        <button
          type="button"
          className="btn primary wide"
          data-testid="new-session-toggle"
          aria-expanded={creating}
          onClick={() => setCreating(!creating)}
        >
          {creating ? "Close" : "New session"}
        </button>
        {creating && <NewSessionForm onCreated={() => { setCreating(false); onNavigate(); }} />}
        <input
          type="search"
          className="filter"
          data-testid="session-filter"
          aria-label="Search sessions"
          placeholder="Search titles and messages"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
        <label className="show-archived muted small">
          <input
            type="checkbox"
            data-testid="show-archived"
            checked={showArchived}
            onChange={(e) => setShowArchived(e.target.checked)}
          />{" "}
          Show archived{archivedCount > 0 ? ` (${archivedCount})` : ""}
        </label>
      </div>

      {waiting.length > 0 && (
        <section className="session-group waiting-group" aria-label="Waiting for you" data-testid="waiting-group">
          <h2>
            Waiting for you <span className="count">{waiting.reduce((n, s) => n + (counts[s.id] ?? 0), 0)}</span>
          </h2>
          <ul>
            {waiting.map((s) => (
              <SessionRow
                key={s.id}
                session={s}
                waiting={counts[s.id] ?? 0}
                active={s.id === activeId}
                depth={0}
                ui={ui?.id === s.id ? ui : null}
                setUi={setUi}
              />
            ))}
          </ul>
        </section>
      )}

      <section className="session-group" aria-label="All sessions">
        <h2>Sessions</h2>
        {rows.length === 0 ? (
          <p className="muted small-pad">
            {!state.loaded ? "Not loaded yet." : all.length === 0 ? "No sessions yet." : waiting.length > 0 && !needle ? "Every session is waiting for you (above)." : "No session matches."}
          </p>
        ) : (
          <ul data-testid="session-list">
            {rows.map(({ session, depth }) => (
              <SessionRow
                key={session.id}
                session={session}
                waiting={counts[session.id] ?? 0}
                active={session.id === activeId}
                depth={depth}
                ui={ui?.id === session.id ? ui : null}
                setUi={setUi}
              />
            ))}
          </ul>
        )}
      </section>
    </nav>
  );
}
