// Modes: which tools a session is offered, the policies it adds, the prompt it runs under.
// The list (built-in, yours, overridden), and a form to edit one, create one, delete yours or
// reset an overridden built-in. The server checks every field; its 400 is shown at the form.

import { useEffect, useState, type FormEvent } from "react";
import { api, errorText } from "../api";
import { useLoad } from "../hooks";
import { setModes } from "../modes";
import { navigate } from "../router";
import type { Mode, ModeWrite, Policy } from "../types";


function sourceBadge(mode: Mode): { label: string; className: string } {
  if (mode.source === "builtin") return { label: "built-in", className: "" };
  return mode.overrides_builtin ? { label: "overridden", className: "effect-ask" } : { label: "yours", className: "effect-allow" };
}

function policiesText(policies: Record<string, Policy>): string {
  return Object.entries(policies)
    .map(([pattern, policy]) => `${pattern}: ${policy}`)
    .join("\n");
}

/** `pattern: policy` lines; the last colon splits, since a pattern may hold one. */
function parsePolicies(text: string): Record<string, Policy> {
  const out: Record<string, Policy> = {};
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const cut = line.lastIndexOf(":");
    if (cut <= 0) throw new Error(`policies, line ${i + 1}: write “pattern: always_allow | ask | deny”`);
    out[line.slice(0, cut).trim()] = line.slice(cut + 1).trim() as Policy;
  });
  return out;
}

interface FormProps {
  mode: Mode | null;
  modes: Mode[];
  onSaved: (mode: Mode) => void;
  onRemoved: (name: string, builtin: Mode | null) => void;
}

function ModeForm({ mode, modes, onSaved, onRemoved }: FormProps) {
  const [name, setName] = useState(mode?.name ?? "");
  const [description, setDescription] = useState(mode?.description ?? "");
  const [icon, setIcon] = useState(mode?.icon ?? "");
  const [allTools, setAllTools] = useState(mode ? mode.tools === "all" : true);
  const [tools, setTools] = useState(mode && mode.tools !== "all" ? mode.tools.join("\n") : "");
  const [policies, setPolicies] = useState(policiesText(mode?.policies ?? {}));
  const [folder, setFolder] = useState(mode?.default_folder ?? "");
  const [nextMode, setNextMode] = useState(mode?.next_mode ?? "");
  const [prompt, setPrompt] = useState(mode?.prompt ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const editing = mode !== null;

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    let body: ModeWrite;
    try {
      body = {
        description: description.trim(),
        icon: icon.trim() || null,
        tools: allTools ? "all" : tools.split("\n").map((t) => t.trim()).filter(Boolean),
        policies: parsePolicies(policies),
        default_folder: folder.trim() || null,
        next_mode: nextMode || null,
        // The form has no field for it: an edit keeps the mode's own (else it fell back to "ask").
        sampling: mode?.sampling,
        prompt,
      };
    } catch (e) {
      setError(errorText(e));
      return;
    }
    setBusy(true);
    try {
      const result = await api.saveMode(editing ? mode.name : name.trim(), body);
      onSaved(result);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    if (!mode) return;
    setBusy(true);
    setError(null);
    try {
      const result = await api.deleteMode(mode.name);
      onRemoved(mode.name, result.mode);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };

  const others = modes.filter((m) => m.name !== (mode?.name ?? name.trim()));
  return (
    <form className="library-form" onSubmit={save} aria-label={editing ? `Mode ${mode.name}` : "New mode"} data-testid="mode-form">
      <div className="section-head">
        <h2>{editing ? `${mode.icon ? `${mode.icon} ` : ""}${mode.name}` : "New mode"}</h2>
        {mode && <span className={`badge ${sourceBadge(mode).className}`}>{sourceBadge(mode).label}</span>}
      </div>
      {mode?.source === "builtin" && (
        <p className="muted small">Saving makes your own copy, which replaces the built-in until you reset it.</p>
      )}
      <div className="schedule-form-grid">
        {!editing && (
          <label>
            Name
            <input data-testid="mode-name" value={name} required spellCheck={false} placeholder="e.g. docs" onChange={(e) => setName(e.target.value)} />
          </label>
        )}
        <label>
          Icon
          <input data-testid="mode-icon" value={icon} placeholder="an emoji" onChange={(e) => setIcon(e.target.value)} />
        </label>
        <label>
          Next mode
          <select data-testid="mode-next" value={nextMode} onChange={(e) => setNextMode(e.target.value)}>
            <option value="">(none)</option>
            {others.map((m) => (
              <option key={m.name} value={m.name}>
                {m.icon ? `${m.icon} ${m.name}` : m.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Default folder
          <input data-testid="mode-folder" value={folder} spellCheck={false} placeholder="the default workspace" onChange={(e) => setFolder(e.target.value)} />
        </label>
      </div>
      <label>
        Description
        <input data-testid="mode-description" value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <fieldset className="tools-field">
        <legend>Tools</legend>
        <label className="inline">
          <input type="radio" name="tools" data-testid="mode-tools-all" checked={allTools} onChange={() => setAllTools(true)} /> All tools
        </label>
        <label className="inline">
          <input type="radio" name="tools" data-testid="mode-tools-some" checked={!allTools} onChange={() => setAllTools(false)} /> Only these
        </label>
        {!allTools && (
          <textarea
            data-testid="mode-tools"
            aria-label="Tool patterns, one per line"
            className="mono"
            rows={4}
            spellCheck={false}
            value={tools}
            placeholder={"read-only\nmcp__browser\nmcp__file__*"}
            onChange={(e) => setTools(e.target.value)}
          />
        )}
        <p className="muted small">
          One per line: a tool (<code>mcp__file__read_file</code>), a server (<code>mcp__browser</code>), a glob (
          <code>mcp__file__*</code>) or <code>read-only</code>.
        </p>
      </fieldset>
      <label>
        Policies <span className="muted small">(one “pattern: always_allow | ask | deny” per line)</span>
        <textarea data-testid="mode-policies" className="mono" rows={3} spellCheck={false} value={policies} placeholder="mcp__shell__exec: deny" onChange={(e) => setPolicies(e.target.value)} />
      </label>
      <label>
        Prompt
        <textarea data-testid="mode-prompt" rows={10} value={prompt} placeholder="The system prompt for sessions in this mode (Markdown)." onChange={(e) => setPrompt(e.target.value)} />
      </label>
      {error && (
        <p className="error-text" role="alert" data-testid="mode-error">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="btn primary" data-testid="mode-save" disabled={busy || (!editing && !name.trim())}>
          {editing ? "Save" : "Create mode"}
        </button>
        {mode?.source === "user" &&
          (confirming ? (
            <>
              <button type="button" className="btn danger" data-testid="mode-delete-confirm" disabled={busy} onClick={() => void remove()}>
                {mode.overrides_builtin ? "Reset, dropping my changes" : "Delete for good"}
              </button>
              <button type="button" className="btn subtle" onClick={() => setConfirming(false)}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" className="btn" data-testid={mode.overrides_builtin ? "mode-reset" : "mode-delete"} onClick={() => setConfirming(true)}>
              {mode.overrides_builtin ? "Reset to built-in" : "Delete"}
            </button>
          ))}
      </div>
    </form>
  );
}

export function ModesView({ selected }: { selected: string | null }) {
  const {
    data: modes,
    setData: setList,
    error,
    reload: load,
  } = useLoad<Mode[]>(() =>
    api.modes().then((list) => {
      setModes(list);
      return list;
    }),
  );
  const [creating, setCreating] = useState(false);
  const [flash, setFlash] = useState<{ name: string; text: string; version: number } | null>(null);

  useEffect(() => setCreating(false), [selected]);

  const current = creating ? null : (modes?.find((m) => m.name === selected) ?? null);
  const showForm = creating || current !== null;

  const saved = (mode: Mode) => {
    load();
    setFlash((f) => ({ name: mode.name, text: "Saved.", version: (f?.version ?? 0) + 1 }));
    setCreating(false);
    navigate(`#/modes/${encodeURIComponent(mode.name)}`);
    setList((list) => (list ?? []).filter((m) => m.name !== mode.name).concat(mode));
  };
  const removed = (name: string, builtin: Mode | null) => {
    load();
    setFlash((f) => ({ name, text: builtin ? "Reset to the built-in mode." : "Deleted.", version: (f?.version ?? 0) + 1 }));
    if (!builtin) navigate("#/modes");
    setList((list) => (builtin ? (list ?? []).map((m) => (m.name === name ? builtin : m)) : (list ?? []).filter((m) => m.name !== name)));
  };

  return (
    <main className="main library" data-testid="modes-view" aria-label="Modes">
      <div className="section-head">
        <h1>Modes</h1>
        <button type="button" className="btn primary small" data-testid="mode-new" onClick={() => setCreating(true)}>
          New mode
        </button>
      </div>
      <p className="muted">
        A mode decides which tools a session is offered, the policies it adds, and the prompt it runs under. A mode with
        a next mode ends at a gate: you approve its result before the session switches.
      </p>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      <div className="library-grid">
        <section className="settings-section library-list" aria-label="All modes">
          {modes === null ? (
            <p className="muted">Loading…</p>
          ) : (
            <ul>
              {modes.map((m) => {
                const badge = sourceBadge(m);
                return (
                  <li key={m.name}>
                    <a
                      href={`#/modes/${encodeURIComponent(m.name)}`}
                      className={`library-row${m.name === selected && !creating ? " active" : ""}`}
                      aria-current={m.name === selected && !creating ? "page" : undefined}
                      data-testid="mode-row"
                      data-mode={m.name}
                    >
                      <span className="library-icon" aria-hidden="true">
                        {m.icon || "•"}
                      </span>
                      <span className="library-main">
                        <strong>{m.name}</strong>
                        <span className="muted small">{m.description}</span>
                      </span>
                      <span className={`badge ${badge.className}`} data-testid="mode-source">
                        {badge.label}
                      </span>
                    </a>
                  </li>
                );
              })}
            </ul>
          )}
        </section>
        <section className="settings-section library-detail" aria-label="Mode">
          {flash && (flash.name === current?.name || !showForm) && (
            <p className="flash" role="status" data-testid="mode-flash">
              {flash.text}
            </p>
          )}
          {showForm && modes ? (
            <ModeForm key={creating ? "+new" : `${current?.name}:${flash?.version ?? 0}`} mode={current} modes={modes} onSaved={saved} onRemoved={removed} />
          ) : (
            <p className="muted">{selected && modes ? `No mode named “${selected}”.` : "Choose a mode to see or change it, or create a new one."}</p>
          )}
        </section>
      </div>
    </main>
  );
}
