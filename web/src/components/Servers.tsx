// The Servers page: every MCP server's live state (starting, ready, failing with its last error,
// switched off), its tools with the policy a call gets when no rule matches, and the end of its
// log. It follows the WebSocket's `servers.changed`, so a server that starts, fails or offers new
// tools shows so without a reload. Admins add, edit, switch off, remove and restart servers here.

import { useEffect, useRef, useState } from "react";
import { api, errorText } from "../api";
import { splitToolName, truncate } from "../format";
import { live } from "../live";
import { useLoad } from "../hooks";
import { useAppState } from "../store";
import type { Policy, ServerInfo } from "../types";
import { ServerForm } from "./ServerForm";
import { ServerSignIn } from "./ServerSignIn";
import { ToolChangeView } from "./ToolChange";
import { ToolFlagBadge, ToolFlags } from "./UntrustedContent";
import "../servers.css";

const POLICY_TEXT: Record<Policy, string> = { always_allow: "allow", ask: "ask", deny: "deny" };
const POLICY_BADGE: Record<Policy, string> = { always_allow: "effect-allow", ask: "effect-ask", deny: "effect-deny" };
const LOG_LINES = 60;


/** The state in words: "failing" for an error, "disabled" for a server switched off. */
function stateLabel(server: ServerInfo): string {
  if (server.enabled === false) return "disabled";
  return server.state === "error" ? "failing" : server.state;
}

function ServerLog({ name, version }: { name: string; version: number }) {
  const [open, setOpen] = useState(false);
  const [lines, setLines] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!open) return;
    api
      .serverLog(name, LOG_LINES)
      .then((log) => {
        setLines(log.lines);
        setError(null);
      })
      .catch((e: unknown) => setError(errorText(e)));
  }, [open, name, version]);

  return (
    <details className="server-log" onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary data-testid="server-log-toggle">Log (stderr)</summary>
      {error && <p className="error-text">{error}</p>}
      {open && lines !== null && (
        <pre data-testid="server-log">
          <code>{lines.length > 0 ? lines.join("\n") : "(empty)"}</code>
        </pre>
      )}
    </details>
  );
}

function ServerCard({
  server,
  version,
  admin,
  onEdit,
  onRemoved,
  added = false,
}: {
  server: ServerInfo;
  version: number;
  admin: boolean;
  onEdit: () => void;
  onRemoved: () => void;
  /** Just added here: brought into view and focused, so it is not left unseen at the page's end. */
  added?: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const panel = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!added) return;
    panel.current?.scrollIntoView({ block: "center" });
    panel.current?.focus({ preventScroll: true });
  }, [added]);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const enabled = server.enabled !== false;

  const act = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };

  return (
    <section
      ref={panel}
      className={`settings-section server-panel${added ? " server-added" : ""}`}
      tabIndex={added ? -1 : undefined}
      data-added={added || undefined}
      data-testid="server-card"
      data-server={server.name}
      data-state={stateLabel(server)}
      aria-label={`MCP server ${server.name}`}
    >
      <div className="server-head">
        <h2>{server.name}</h2>
        <span className={`badge server-${enabled ? server.state : "stopped"}`} data-testid="server-state">
          {stateLabel(server)}
        </span>
        <span className="chip">{server.type ?? "stdio"}</span>
        {server.builtin && <span className="chip">built-in</span>}
        {enabled && (
          <span className="muted small">
            {server.tools.length} tool{server.tools.length === 1 ? "" : "s"}
          </span>
        )}
        {admin && (
          <span className="server-actions">
            {enabled && (
              <button type="button" className="btn small" data-testid="server-restart" disabled={busy} onClick={() => void act(() => api.restartServer(server.name))}>
                Restart
              </button>
            )}
            {server.editable && (
              <>
                <button type="button" className="btn small" data-testid="server-edit" disabled={busy} onClick={onEdit}>
                  Edit
                </button>
                <button
                  type="button"
                  className="btn small"
                  data-testid="server-toggle"
                  disabled={busy}
                  onClick={() => void act(() => api.setServerEnabled(server.name, !enabled))}
                >
                  {enabled ? "Disable" : "Enable"}
                </button>
                {confirming ? (
                  <button
                    type="button"
                    className="btn small danger"
                    data-testid="server-remove-confirm"
                    disabled={busy}
                    onClick={() => void act(async () => {
                      await api.removeServer(server.name);
                      onRemoved();
                    })}
                  >
                    Remove {server.name} from the config
                  </button>
                ) : (
                  <button type="button" className="btn small subtle" data-testid="server-remove" disabled={busy} onClick={() => setConfirming(true)}>
                    Remove
                  </button>
                )}
              </>
            )}
          </span>
        )}
      </div>
      {server.url && <p className="muted small server-url">{server.url}</p>}
      {server.error && enabled && (
        <p className={server.state === "error" ? "error-text" : "muted"} data-testid="server-error">
          {server.error}
        </p>
      )}
      {server.last_http_error && <p className="muted small">Last HTTP error: {server.last_http_error}</p>}
      {server.confinement && server.type !== "http" && server.type !== "sse" && (
        <p className="muted small" data-testid="server-confinement">
          Confinement: {server.confinement}
        </p>
      )}
      {enabled && server.type !== undefined && server.type !== "stdio" && <ServerSignIn name={server.name} admin={admin} version={`${version}:${server.state}`} />}
      {server.last_restart && (
        <p className="muted small" data-testid="server-restarted">
          Restarted {server.restarts} time{server.restarts === 1 ? "" : "s"}; last because it {server.last_restart}.
        </p>
      )}
      {error && (
        <p className="error-text" role="alert" data-testid="server-action-error">
          {error}
        </p>
      )}
      {server.tools.length > 0 && (
        <table className="tool-table">
          <tbody>
            {server.tools.map((tool) => {
              const effective = tool.effective_policy ?? tool.policy ?? "ask";
              return (
                <tr key={tool.name} data-testid="tool-row" data-tool={tool.name}>
                  <td>
                    <code>{splitToolName(tool.name).tool}</code>
                    {tool.changed && (
                      <span className="badge tool-changed" data-testid="tool-changed" title="Every call asks until an admin accepts the new definition">
                        changed
                      </span>
                    )}
                    <ToolFlagBadge tool={tool} />
                    <div className="muted small">{truncate(tool.description || "", 160)}</div>
                    {tool.changed && <ToolChangeView change={tool.changed} admin={admin} />}
                    <ToolFlags tool={tool} />
                  </td>
                  <td className="policy-cell">
                    <span className={`badge ${POLICY_BADGE[effective]}`} data-testid="tool-policy" title={tool.policy ? "set by a policy" : "the default"}>
                      {POLICY_TEXT[effective]}
                      {tool.policy ? "" : " (default)"}
                    </span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <ServerLog name={server.name} version={version} />
    </section>
  );
}

export function ServersView() {
  const { me } = useAppState();
  const admin = me?.role === "admin";
  // Live messages received so far: a list fetched while one arrived may be older than it.
  const liveCount = useRef(0);
  const {
    data: servers,
    setData: setServers,
    error,
    reload: load,
  } = useLoad<ServerInfo[]>(async () => {
    const asked = liveCount.current;
    const list = await api.servers();
    return liveCount.current === asked ? list : (shown) => shown;
  });
  // Per server, how many changes the live channel reported: an open log re-reads on each.
  const [versions, setVersions] = useState<Record<string, number>>({});
  const [form, setForm] = useState<{ editing: ServerInfo | null } | null>(null);
  const [added, setAdded] = useState<string | null>(null);

  useEffect(
    () =>
      live.onServers((message) => {
        liveCount.current += 1;
        setServers(message.servers);
        setVersions((current) => {
          const next = { ...current };
          for (const name of message.changed) next[name] = (next[name] ?? 0) + 1;
          return next;
        });
      }),
    [setServers],
  );

  // The answer to a save is the server as it was then; the live channel may already have told
  // of what came next (a start that failed at once), so the answer only fills a gap.
  const saved = (server: ServerInfo) => {
    if (form?.editing == null) setAdded(server.name);
    setForm(null);
    setServers((list) => {
      const current = list ?? [];
      return current.some((s) => s.name === server.name) ? current : [...current, server];
    });
  };

  return (
    <main className="main servers" data-testid="servers-view" aria-label="Servers">
      <div className="section-head">
        <h1>Servers</h1>
        <span className="server-actions">
          {admin && form === null && (
            <button type="button" className="btn small primary" data-testid="server-add" onClick={() => setForm({ editing: null })}>
              Add server
            </button>
          )}
          <button type="button" className="btn small" onClick={load}>
            Refresh
          </button>
        </span>
      </div>
      <p className="muted">
        The MCP servers every session shares. Changes here are written to the config file and take effect at once.
        {!admin && " Only admins can change servers."}
      </p>
      {form !== null && (
        <section className="settings-section" aria-label={form.editing ? `Edit ${form.editing.name}` : "New server"}>
          <h2>{form.editing ? `Edit ${form.editing.name}` : "New server"}</h2>
          <ServerForm key={form.editing?.name ?? ""} editing={form.editing} onSaved={saved} onCancel={() => setForm(null)} />
        </section>
      )}
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {servers === null ? (
        <p className="muted">Loading…</p>
      ) : servers.length === 0 ? (
        <p className="muted" data-testid="servers-empty">
          No MCP servers are configured.
        </p>
      ) : (
        servers.map((server) => (
          <ServerCard
            key={server.name}
            server={server}
            version={versions[server.name] ?? 0}
            admin={admin}
            added={server.name === added}
            onEdit={() => setForm({ editing: server })}
            onRemoved={() => setServers((list) => (list ?? []).filter((s) => s.name !== server.name))}
          />
        ))
      )}
    </main>
  );
}
