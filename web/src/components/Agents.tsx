// The Agents page (issue 19): every named agent with its workspace, model, mode, servers and
// rules; admins add and edit agents here (written to the config file, in force at once).
// Also the small agent badge the sidebar shows on sessions when there is more than one agent.

import { useState, type FormEvent } from "react";
import { agentsApi, reloadAgents, useAgents, type Agent, type AgentRules, type AgentWrite } from "../agents";
import "../agents.css";
import { useAppState } from "../store";
import type { Session } from "../types";

const EFFECTS = ["allow", "ask", "deny"] as const;

/** The session's agent, named, where more than one agent exists (else nothing). */
export function AgentBadge({ session }: { session: Session }) {
  const agents = useAgents();
  if (!agents || agents.length < 2) return null;
  const id = session.agent_id ?? "main";
  const name = agents.find((a) => a.id === id)?.name ?? id;
  return (
    <span className="badge agent-badge" data-testid="agent-badge" data-agent={id} title={`Agent: ${name}`}>
      {name}
    </span>
  );
}

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

function AgentForm({ editing, onDone }: { editing: Agent | null; onDone: () => void }) {
  const [id, setId] = useState(editing?.id ?? "");
  const [name, setName] = useState(editing && editing.name !== editing.id ? editing.name : "");
  const [workspace, setWorkspace] = useState(editing?.configured_workspace ?? "");
  const [model, setModel] = useState(editing?.model ?? "");
  const [mode, setMode] = useState(editing?.mode ?? "");
  const [servers, setServers] = useState(editing?.servers?.join(", ") ?? "");
  const [rules, setRules] = useState<Record<"allow" | "ask" | "deny", string>>({
    allow: editing?.permissions.allow.join("\n") ?? "",
    ask: editing?.permissions.ask.join("\n") ?? "",
    deny: editing?.permissions.deny.join("\n") ?? "",
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const permissions = { allow: lines(rules.allow), ask: lines(rules.ask), deny: lines(rules.deny) };
    const body: AgentWrite = {
      id: id.trim(),
      name: name.trim() || undefined,
      workspace: workspace.trim() || undefined,
      model: model.trim() || undefined,
      mode: mode.trim() || undefined,
      // Empty: every configured server.
      servers: servers.trim() ? servers.split(",").map((s) => s.trim()).filter(Boolean) : undefined,
      permissions: EFFECTS.some((e) => permissions[e].length) ? permissions : undefined,
    };
    try {
      await (editing ? agentsApi.update(body) : agentsApi.create(body));
      await reloadAgents();
      onDone();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="agent-form" onSubmit={submit} data-testid="agent-form" aria-label={editing ? `Edit ${editing.id}` : "New agent"}>
      <label>
        Id
        <input data-testid="agent-id" value={id} disabled={editing !== null} required placeholder="reviewer" onChange={(e) => setId(e.target.value)} />
      </label>
      <label>
        Name
        <input data-testid="agent-name" value={name} placeholder="Code reviewer" onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Workspace
        <input data-testid="agent-workspace" value={workspace} placeholder="default: <data dir>/agents/<id>/workspace" onChange={(e) => setWorkspace(e.target.value)} />
      </label>
      <label>
        Model
        <input data-testid="agent-model" value={model} placeholder="default model" onChange={(e) => setModel(e.target.value)} />
      </label>
      <label>
        Mode
        <input data-testid="agent-mode" value={mode} placeholder="agent" onChange={(e) => setMode(e.target.value)} />
      </label>
      <label>
        Servers
        <input data-testid="agent-servers" value={servers} placeholder="all (or: file, shell)" onChange={(e) => setServers(e.target.value)} />
      </label>
      {EFFECTS.map((effect) => (
        <label key={effect}>
          {effect} rules (one per line, added to the global ones)
          <textarea
            data-testid={`agent-${effect}`}
            rows={2}
            value={rules[effect]}
            onChange={(e) => setRules({ ...rules, [effect]: e.target.value })}
          />
        </label>
      ))}
      {error && (
        <p className="error-text" role="alert" data-testid="agent-error">
          {error}
        </p>
      )}
      <div className="form-row">
        <button type="submit" className="btn primary" data-testid="agent-save" disabled={busy}>
          {editing ? "Save" : "Add agent"}
        </button>
        <button type="button" className="btn" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function RulesText({ rules }: { rules: AgentRules }) {
  const given = EFFECTS.filter((e) => rules[e].length);
  if (!given.length) return <span className="muted">global rules only</span>;
  return <>{given.map((e) => `${e}: ${rules[e].join(", ")}`).join("; ")}</>;
}

export function AgentsView() {
  const { me } = useAppState();
  const admin = me?.role === "admin";
  const agents = useAgents();
  const [form, setForm] = useState<{ editing: Agent | null } | null>(null);

  return (
    <main className="main agents" data-testid="agents-view" aria-label="Agents">
      <div className="section-head">
        <h1>Agents</h1>
        {admin && form === null && (
          <button type="button" className="btn small primary" data-testid="agent-add" onClick={() => setForm({ editing: null })}>
            Add agent
          </button>
        )}
      </div>
      <p className="muted">
        Each agent works in its own workspace (its memory, instruction files and skills live there) with its own model,
        mode, servers and rules. Changes are written to the config file and count from the next session or turn.
        {!admin && " Only admins can change agents."}
      </p>
      {form !== null && (
        <section className="settings-section">
          <h2>{form.editing ? `Edit ${form.editing.id}` : "New agent"}</h2>
          <AgentForm key={form.editing?.id ?? ""} editing={form.editing} onDone={() => setForm(null)} />
        </section>
      )}
      {agents === null ? (
        <p className="muted">Loading…</p>
      ) : (
        <div className="table-scroll">
          <table className="agents-table">
            <thead>
              <tr>
                <th>Agent</th>
                <th>Workspace</th>
                <th>Model</th>
                <th>Mode</th>
                <th>Servers</th>
                <th>Rules</th>
                {admin && (
                  <th>
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {agents.map((agent) => (
                <tr key={agent.id} data-testid="agent-row" data-agent={agent.id}>
                  <td>
                    <strong>{agent.name}</strong> <span className="muted small">{agent.id}</span>
                  </td>
                  <td className="small">{agent.workspace}</td>
                  <td className="small">{agent.model ?? <span className="muted">default</span>}</td>
                  <td className="small">{agent.mode ?? <span className="muted">agent</span>}</td>
                  <td className="small">{agent.servers?.join(", ") ?? <span className="muted">all</span>}</td>
                  <td className="small">
                    <RulesText rules={agent.permissions} />
                  </td>
                  {admin && (
                    <td>
                      <button type="button" className="btn small" data-testid="agent-edit" onClick={() => setForm({ editing: agent })}>
                        Edit
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </main>
  );
}
