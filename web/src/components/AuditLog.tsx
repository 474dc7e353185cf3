// The audit log: every permission decision, filtered by tool, decision, who decided, session and
// time, with session titles and human durations, and exported (CSV or JSON) as filtered.

import { useMemo, useState } from "react";
import { api } from "../api";
import { formatDuration, formatTime, splitToolName, truncate } from "../format";
import { useLoad } from "../hooks";
import { toolTitles } from "../names";
import { useServers } from "../standing";
import { useAppState } from "../store";
import type { AuditPage, DecidedBy } from "../types";
import "../housekeeping.css";

const PAGE = 50;
const DECIDERS: DecidedBy[] = ["user", "rule", "policy", "timeout", "hook", "stop"];

export interface AuditFilters {
  tool: string;
  decision: "" | "allow" | "deny";
  decidedBy: "" | DecidedBy;
  who: string;
  sessionId: string;
  /** `datetime-local` values, in the person's own time zone. */
  since: string;
  until: string;
}

const NO_FILTERS: AuditFilters = { tool: "", decision: "", decidedBy: "", who: "", sessionId: "", since: "", until: "" };

/** The API's query for `filters` (local times sent as UTC instants). */
export function auditQuery(filters: AuditFilters, extra: Record<string, string> = {}): URLSearchParams {
  const query = new URLSearchParams();
  const add = (name: string, value: string) => value.trim() && query.set(name, value.trim());
  add("tool", filters.tool);
  add("decision", filters.decision);
  add("decided_by", filters.decidedBy);
  add("who", filters.who);
  add("session_id", filters.sessionId);
  for (const [name, value] of [["since", filters.since], ["until", filters.until]] as const) {
    const time = value ? new Date(value) : null;
    if (time && !Number.isNaN(time.getTime())) query.set(name, time.toISOString());
  }
  for (const [name, value] of Object.entries(extra)) query.set(name, value);
  return query;
}

export function AuditLog() {
  const state = useAppState();
  const [draft, setDraft] = useState<AuditFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const [offset, setOffset] = useState(0);
  const query = useMemo(() => auditQuery(filters, { limit: String(PAGE), offset: String(offset) }), [filters, offset]);
  const { data: page, error } = useLoad<AuditPage>(() => api.auditPage(query), [query]);

  const set = (change: Partial<AuditFilters>) => setDraft({ ...draft, ...change });
  const apply = (next: AuditFilters) => {
    setFilters(next);
    setOffset(0);
  };
  const sessions = Object.values(state.sessions).sort((a, b) => b.created_at.localeCompare(a.created_at));
  const servers = useServers();
  const tools = useMemo(() => toolTitles(servers), [servers]);
  const titleOf = (id: string) => page?.sessions?.[id] || state.sessions[id]?.title || id.slice(0, 8);
  const exportHref = (format: "csv" | "json") => `/api/audit?${auditQuery(filters, { format })}`;

  return (
    <section className="settings-section" aria-labelledby="audit-heading" data-testid="audit-section">
      <h2 id="audit-heading">Audit log</h2>
      <form
        className="audit-filters"
        data-testid="audit-filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <label>
          Tool
          <input data-testid="audit-filter-tool" placeholder="mcp__shell or mcp__shell__exec" value={draft.tool} onChange={(e) => set({ tool: e.target.value })} />
        </label>
        <label>
          Decision
          <select data-testid="audit-filter-decision" value={draft.decision} onChange={(e) => set({ decision: e.target.value as AuditFilters["decision"] })}>
            <option value="">any</option>
            <option value="allow">allow</option>
            <option value="deny">deny</option>
          </select>
        </label>
        <label>
          Decided by
          <select data-testid="audit-filter-decided-by" value={draft.decidedBy} onChange={(e) => set({ decidedBy: e.target.value as AuditFilters["decidedBy"] })}>
            <option value="">any</option>
            {DECIDERS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <label>
          Who
          <input data-testid="audit-filter-who" placeholder="a person, a key, overseer" value={draft.who} onChange={(e) => set({ who: e.target.value })} />
        </label>
        <label>
          Session
          <select data-testid="audit-filter-session" value={draft.sessionId} onChange={(e) => set({ sessionId: e.target.value })}>
            <option value="">any</option>
            {sessions.map((s) => (
              <option key={s.id} value={s.id}>
                {truncate(s.title || s.id.slice(0, 8), 60)}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="datetime-local" data-testid="audit-filter-since" value={draft.since} onChange={(e) => set({ since: e.target.value })} />
        </label>
        <label>
          Until
          <input type="datetime-local" data-testid="audit-filter-until" value={draft.until} onChange={(e) => set({ until: e.target.value })} />
        </label>
        <div className="audit-filter-actions">
          <button type="submit" className="btn small primary" data-testid="audit-apply">
            Filter
          </button>
          <button
            type="button"
            className="btn small subtle"
            data-testid="audit-clear"
            onClick={() => {
              setDraft(NO_FILTERS);
              apply(NO_FILTERS);
            }}
          >
            Clear
          </button>
          <a className="btn small" href={exportHref("csv")} download data-testid="audit-export-csv">
            Export CSV
          </a>
          <a className="btn small" href={exportHref("json")} download data-testid="audit-export-json">
            Export JSON
          </a>
        </div>
      </form>
      {error && <p className="error-text" role="alert">{error}</p>}
      {page === null ? (
        <p className="muted">Loading…</p>
      ) : (
        <>
          <div className="table-scroll">
            <table className="audit-table">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Session</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Arguments</th>
                  <th scope="col">Decision</th>
                  <th scope="col">By</th>
                  <th scope="col">Took</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((item) => (
                  <tr key={item.id} data-testid="audit-row">
                    <td className="nowrap">{formatTime(item.created_at)}</td>
                    <td>
                      <a href={`#/s/${encodeURIComponent(item.session_id)}`} title={item.session_id} data-testid="audit-session">
                        {truncate(titleOf(item.session_id), 40)}
                      </a>
                    </td>
                    <td data-testid="audit-tool" title={item.tool_name}>
                      {/* As the session's cards name it: its title, else its name on its server. */}
                      {tools[item.tool_name] ?? splitToolName(item.tool_name).tool}
                      {splitToolName(item.tool_name).server && (
                        <div className="muted small">{splitToolName(item.tool_name).server}</div>
                      )}
                    </td>
                    <td>
                      <code className="small">{truncate(JSON.stringify(item.arguments), 80)}</code>
                      {(item.detail.includes("with edits") || item.detail.includes("edited arguments")) && (
                        <div>
                          <span className="chip" data-testid="audit-edited" title="A person changed the arguments before allowing; these are the ones that ran">
                            edited by a person
                          </span>
                        </div>
                      )}
                    </td>
                    <td>
                      <span className={`badge effect-${item.decision}`}>{item.decision}</span>
                      {item.detail && <div className="muted small">{truncate(item.detail, 80)}</div>}
                    </td>
                    <td data-testid="audit-by">
                      {item.decider?.via === "auto" ? (
                        <span title="Allowed by the session's auto-approve switch, in this person's name">
                          auto-approved by {item.decider.name}
                        </span>
                      ) : item.decider && item.decider.kind !== "system" ? (
                        <>
                          {item.decider.name} <span className="muted small">({item.decided_by})</span>
                        </>
                      ) : (
                        item.decided_by
                      )}
                    </td>
                    <td className="nowrap">{item.latency_ms ? formatDuration(item.latency_ms) : "—"}</td>
                  </tr>
                ))}
                {page.items.length === 0 && (
                  <tr>
                    <td colSpan={7} className="muted">
                      {offset > 0 ? "No more entries." : filters === NO_FILTERS ? "No decisions yet." : "No decision matches these filters."}
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
          <div className="pager">
            <button type="button" className="btn small" data-testid="audit-prev" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              ← Previous
            </button>
            <span className="muted">{page.items.length ? `${offset + 1}–${offset + page.items.length}` : ""}</span>
            <button type="button" className="btn small" data-testid="audit-next" disabled={page.items.length < PAGE} onClick={() => setOffset(offset + PAGE)}>
              Next →
            </button>
          </div>
        </>
      )}
    </section>
  );
}
