// Settings: the model, MCP servers with per-tool policies, the permission rules, and the audit log.

import { useState, type FormEvent } from "react";
import { PushSection } from "./PushSection";
import { SpendPanel } from "./SpendPanel";
import { api, errorText } from "../api";
import { useLoad } from "../hooks";
import { splitToolName, truncate } from "../format";
import type { Permissions, Policy, ServerInfo } from "../types";
import { AuditLog } from "./AuditLog";
import { CheckpointsSection } from "./CheckpointsSection";
import { ModelSection } from "./ModelSection";
import { ManagedRuleRows, ManagedSwitches, useManagedPolicy } from "./ManagedRules";
import { RuleWarnings } from "./RuleWarnings";

/** The servers list may name tools in full (`mcp__file__read_file`) or by their short name. */
function fullName(server: string, tool: string): string {
  return tool.startsWith("mcp__") ? tool : `mcp__${server}__${tool}`;
}

const POLICIES: Policy[] = ["always_allow", "ask", "deny"];
const POLICY_TEXT: Record<Policy, string> = { always_allow: "Allow", ask: "Ask", deny: "Deny" };
type Effect = "allow" | "ask" | "deny"; // the rule lists; the block also holds defaultMode and more
const EFFECTS: Effect[] = ["allow", "ask", "deny"];

function ServersSection() {
  const {
    data: servers,
    setData: setServers,
    error,
    setError,
    reload: load,
  } = useLoad<ServerInfo[]>(() =>
    // Servers switched off have no tools to set policies for: the Servers page lists them.
    api.servers().then((list) => list.filter((s) => s.enabled !== false)),
  );
  const [saving, setSaving] = useState<string | null>(null);

  const setPolicies = async (server: string, tools: string[], policy: Policy) => {
    const names = tools.map((tool) => fullName(server, tool));
    setSaving(names.length === 1 ? names[0] : server);
    setError(null);
    try {
      await api.setPolicies(Object.fromEntries(names.map((name) => [name, policy])));
      setServers((list) =>
        (list ?? []).map((s) =>
          s.name !== server ? s : { ...s, tools: s.tools.map((t) => (tools.includes(t.name) ? { ...t, policy } : t)) },
        ),
      );
    } catch (e) {
      setError(errorText(e));
    } finally {
      setSaving(null);
    }
  };
  const setPolicy = (server: string, tool: string, policy: Policy) => setPolicies(server, [tool], policy);

  return (
    <section className="settings-section" aria-labelledby="servers-heading" data-testid="servers-section">
      <div className="section-head">
        <h2 id="servers-heading">MCP servers</h2>
        <a href="#/servers" className="small" data-testid="manage-servers">
          Add, restart or remove servers
        </a>
        <button type="button" className="btn small" onClick={load}>
          Refresh
        </button>
      </div>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {servers === null ? (
        <p className="muted">Loading…</p>
      ) : servers.length === 0 ? (
        <p className="muted">No MCP servers are configured.</p>
      ) : (
        servers.map((server) => {
          const readOnly = server.tools.filter((t) => t.annotations?.readOnlyHint && !t.annotations?.destructiveHint);
          const writes = server.tools.filter((t) => !readOnly.includes(t));
          return (
            <details key={server.name} className="server-card" data-testid="server-card" data-server={server.name} open>
              <summary>
                <strong>{server.name}</strong>
                <span className={`badge server-${server.state}`} data-testid="server-state">
                  {server.state}
                </span>
                <span className="muted">
                  {server.tools.length} tool{server.tools.length === 1 ? "" : "s"}
                </span>
              </summary>
              {server.error && <p className="error-text">{server.error}</p>}
              {server.last_restart && (
                <p className="muted" data-testid="server-restarted">
                  Restarted {server.restarts} time{server.restarts === 1 ? "" : "s"}; last because it {server.last_restart}.
                </p>
              )}
              {[
                ["Read-only (server says)", readOnly],
                ["Write / delete", writes],
              ].map(([label, tools]) =>
                (tools as ServerInfo["tools"]).length === 0 ? null : (
                  <div key={label as string} className="tool-group">
                    <div className="tool-group-head">
                      <h3>{label as string}</h3>
                      {tools === readOnly && readOnly.some((t) => t.policy !== "always_allow") && (
                        <button
                          type="button"
                          className="btn small subtle"
                          data-testid="allow-reads"
                          disabled={saving === server.name}
                          onClick={() => void setPolicies(server.name, readOnly.map((t) => t.name), "always_allow")}
                        >
                          Allow reads
                        </button>
                      )}
                    </div>
                    <table className="tool-table">
                      <tbody>
                        {(tools as ServerInfo["tools"]).map((tool) => {
                          const name = fullName(server.name, tool.name);
                          return (
                            <tr key={tool.name} data-testid="tool-row" data-tool={name}>
                              <td>
                                <code>{splitToolName(name).tool}</code>
                                <div className="muted small">{truncate(tool.description || "", 140)}</div>
                              </td>
                              <td className="policy-cell">
                                <select
                                  aria-label={`Policy for ${name}`}
                                  data-testid="policy-select"
                                  value={tool.policy ?? ""}
                                  disabled={saving === name}
                                  onChange={(e) => void setPolicy(server.name, tool.name, e.target.value as Policy)}
                                >
                                  {tool.policy === null && (
                                    <option value="" disabled>
                                      default (ask)
                                    </option>
                                  )}
                                  {POLICIES.map((p) => (
                                    <option key={p} value={p}>
                                      {POLICY_TEXT[p]}
                                    </option>
                                  ))}
                                </select>
                              </td>
                            </tr>
                          );
                        })}
                      </tbody>
                    </table>
                  </div>
                ),
              )}
            </details>
          );
        })
      )}
    </section>
  );
}

function RulesSection() {
  const { data: rules, setData: setRules, error, setError } = useLoad<Permissions>(() => api.permissions());
  const [effect, setEffect] = useState<Effect>("allow");
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const managed = useManagedPolicy(); // its rules are shown locked, first: no one here changes them

  const save = async (next: Permissions) => {
    setBusy(true);
    setError(null);
    try {
      setRules(await api.setPermissions(next));
      return true;
    } catch (e) {
      // The server refused (422 names the bad rule): keep what it has.
      setError(errorText(e));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const add = async (event: FormEvent) => {
    event.preventDefault();
    const rule = draft.trim();
    if (!rule || !rules) return;
    if (await save({ ...rules, [effect]: [...rules[effect], rule] })) setDraft("");
  };

  const remove = (which: Effect, index: number) => {
    if (!rules) return;
    void save({ ...rules, [which]: rules[which].filter((_, i) => i !== index) });
  };

  return (
    <section className="settings-section" aria-labelledby="rules-heading" data-testid="rules-section">
      <h2 id="rules-heading">Permission rules</h2>
      <p className="muted">
        Claude Code's grammar, e.g. <code>mcp__shell__exec(npm test *)</code> or <code>mcp__file__write_file</code>. Deny
        beats ask beats allow; a call no rule matches falls to its tool's policy.
      </p>
      {error && (
        <p className="error-text" role="alert" data-testid="rules-error">
          {error}
        </p>
      )}
      {rules === null ? (
        <p className="muted">Loading…</p>
      ) : (
        <>
          <RuleWarnings version={rules} />
          <table className="rules-table">
            <thead>
              <tr>
                <th scope="col">Effect</th>
                <th scope="col">Rule</th>
                <th scope="col">
                  <span className="visually-hidden">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              <ManagedRuleRows policy={managed} />
              {EFFECTS.flatMap((which) =>
                rules[which].map((rule, i) => (
                  <tr key={`${which}-${i}-${rule}`} data-testid="rule-row" data-effect={which}>
                    <td>
                      <span className={`badge effect-${which}`}>{which}</span>
                    </td>
                    <td>
                      <code className="rule-text">{rule}</code>
                    </td>
                    <td>
                      <button type="button" className="btn small subtle" aria-label={`Remove ${which} rule ${rule}`} disabled={busy} onClick={() => remove(which, i)}>
                        Remove
                      </button>
                    </td>
                  </tr>
                )),
              )}
              {EFFECTS.every((which) => rules[which].length === 0) && !managed?.rules.length && (
                <tr>
                  <td colSpan={3} className="muted">
                    No rules yet: every tool follows its policy.
                  </td>
                </tr>
              )}
            </tbody>
          </table>
          <ManagedSwitches policy={managed} />
          <form className="rule-form" onSubmit={add} aria-label="Add a rule">
            <select aria-label="Effect" data-testid="rule-effect" value={effect} onChange={(e) => setEffect(e.target.value as Effect)}>
              {EFFECTS.map((e) => (
                <option key={e} value={e}>
                  {e}
                </option>
              ))}
            </select>
            <input
              aria-label="Rule"
              data-testid="rule-input"
              placeholder="mcp__shell__exec(git status)"
              value={draft}
              spellCheck={false}
              onChange={(e) => setDraft(e.target.value)}
            />
            <button type="submit" className="btn primary" data-testid="rule-add" disabled={busy || !draft.trim()}>
              Add rule
            </button>
          </form>
        </>
      )}
    </section>
  );
}

export function SettingsView() {
  return (
    <main className="main settings" data-testid="settings-view" aria-label="Settings">
      <h1>Settings</h1>
      <ModelSection />
      <ServersSection />
      <RulesSection />
      <PushSection />
      <SpendPanel />
      <CheckpointsSection />
      <AuditLog />
    </main>
  );
}
