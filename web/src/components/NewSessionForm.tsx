// The new-session form in the sidebar: prompt, agent (when there is more than one), mode (from
// /api/modes), model, workspace, and optional instructions for this session only (folded away).
// The workspace is a choice among the allowed ones (GET /api/workspaces); only an admin may type
// another folder (under one of them), and the server refuses anything else either way.

import { useEffect, useState, type FormEvent } from "react";
import { useAgents } from "../agents";
import { api } from "../api";
import { useModes } from "../modes";
import { navigate, sessionHref } from "../router";
import { upsertSession, useAppState } from "../store";
import type { WorkspaceChoice } from "../types";

export function NewSessionForm({ onCreated }: { onCreated: () => void }) {
  const modes = useModes();
  const agents = useAgents();
  const [agent, setAgent] = useState("");
  const [prompt, setPrompt] = useState("");
  const [mode, setMode] = useState("agent");
  const [model, setModel] = useState("");
  const [engine, setEngine] = useState<"" | "litellm" | "claude-sdk">("");
  const [workspace, setWorkspace] = useState("");
  const [instructions, setInstructions] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const chosen = modes?.find((m) => m.name === mode);
  const admin = useAppState().me?.role === "admin";
  const [choices, setChoices] = useState<WorkspaceChoice[]>([]);
  useEffect(() => {
    api.workspaces().then(setChoices, () => setChoices([]));
  }, []);

  // The folder a session works in when none is chosen, shown to everyone (issue 33, item 10).
  const defaultPath = choices.find((c) => c.default)?.path;
  const defaultShown = defaultPath && (chosen?.default_folder ? `${defaultPath}/${chosen.default_folder}` : defaultPath);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api.createSession({
        prompt: prompt.trim() || undefined,
        mode,
        agent: agent || undefined,
        model: model.trim() || undefined,
        engine: engine || undefined,
        workspace: workspace.trim() || undefined,
        instructions: instructions.trim() || undefined,
      });
      upsertSession(session);
      setPrompt("");
      setInstructions("");
      onCreated();
      navigate(sessionHref(session.id));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="new-session" onSubmit={submit} data-testid="new-session-form" aria-label="New session">
      <label>
        Prompt
        <textarea
          data-testid="new-session-prompt"
          rows={3}
          value={prompt}
          placeholder="What should the agent do?"
          onChange={(e) => setPrompt(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void submit(e);
          }}
        />
      </label>
      {agents && agents.length > 1 && (
        <label>
          Agent
          <select
            data-testid="new-session-agent"
            value={agent}
            title="Whose workspace, model, servers and rules the session works with"
            onChange={(e) => {
              setAgent(e.target.value);
              // The agent's own mode becomes the form's, still changeable.
              setMode(agents.find((a) => a.id === e.target.value)?.mode ?? "agent");
            }}
          >
            <option value="">default</option>
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name === a.id ? a.id : `${a.name} (${a.id})`}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="form-row">
        <label>
          Mode
          <select data-testid="new-session-mode" value={mode} onChange={(e) => setMode(e.target.value)}>
            {(modes ?? [{ name: "agent", icon: null }]).map((m) => (
              <option key={m.name} value={m.name}>
                {m.icon ? `${m.icon} ${m.name}` : m.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Model
          <input data-testid="new-session-model" value={model} placeholder="default" onChange={(e) => setModel(e.target.value)} />
        </label>
        <label>
          Engine
          <select
            data-testid="new-session-engine"
            value={engine}
            title="What drives the model loop: Overseer's own (any provider, via LiteLLM) or Claude Code's (Claude Agent SDK)"
            onChange={(e) => setEngine(e.target.value as typeof engine)}
          >
            <option value="">default</option>
            <option value="litellm">LiteLLM</option>
            <option value="claude-sdk">Claude Agent SDK</option>
          </select>
        </label>
      </div>
      {chosen?.description && (
        <p className="muted small mode-hint" data-testid="new-session-mode-hint">
          {chosen.description}
        </p>
      )}
      <label>
        Workspace
        {admin ? (
          <>
            <input
              data-testid="new-session-workspace"
              list="new-session-workspaces"
              value={workspace}
              placeholder={chosen?.default_folder ? `default workspace / ${chosen.default_folder}` : "default workspace"}
              onChange={(e) => setWorkspace(e.target.value)}
            />
            <datalist id="new-session-workspaces">
              {choices.map((c) => (
                <option key={c.path} value={c.path} />
              ))}
            </datalist>
          </>
        ) : (
          <select data-testid="new-session-workspace" value={workspace} onChange={(e) => setWorkspace(e.target.value)}>
            <option value="">
              {chosen?.default_folder ? `default workspace / ${chosen.default_folder}` : "default workspace"}
            </option>
            {choices
              .filter((c) => !c.default)
              .map((c) => (
                <option key={c.path} value={c.path}>
                  {c.path}
                </option>
              ))}
          </select>
        )}
      </label>
      {!workspace.trim() && defaultShown && (
        <p className="muted small workspace-path" data-testid="new-session-workspace-path">
          Works in <code title={defaultShown}>{defaultShown}</code>
        </p>
      )}
      <details className="instructions-box">
        <summary data-testid="new-session-instructions-toggle">Instructions (optional)</summary>
        <textarea
          data-testid="new-session-instructions"
          aria-label="Instructions for this session"
          rows={3}
          value={instructions}
          placeholder="Rules for this session only, e.g. “answer in German”, “never touch the migrations”"
          onChange={(e) => setInstructions(e.target.value)}
        />
      </details>
      {error && (
        <p className="error-text" role="alert" data-testid="new-session-error">
          {error}
        </p>
      )}
      <button type="submit" className="btn primary" data-testid="new-session-submit" disabled={busy}>
        Start session
      </button>
    </form>
  );
}
