// Skills: instructions an agent can be given (SKILL.md folders). The list as the default
// workspace sees them (available or why not, where each comes from, which are always on),
// one skill's SKILL.md, and an editor for a person's own skills (new ones start from a template).

import { useEffect, useState, type FormEvent } from "react";
import { api, errorText } from "../api";
import { useLoad } from "../hooks";
import { navigate } from "../router";
import type { Skill, SkillSource } from "../types";

const SOURCE_LABEL: Record<SkillSource, string> = { workspace: "workspace", user: "yours", builtin: "built-in" };


function yamlString(text: string): string {
  return /[:#[\]{}&*!|>'"%@`,]|^[-?\s]|\s$/.test(text) || text === "" ? JSON.stringify(text) : text;
}

function yamlList(items: string[]): string {
  return `[${items.map((i) => (/^[\w.-]+$/.test(i) ? i : JSON.stringify(i))).join(", ")}]`;
}

/** The SKILL.md text as written; rebuilt from the fields only for a file that could not be read. */
export function skillMarkdown(skill: Skill): string {
  if (skill.content) return skill.content;
  const lines = ["---", `name: ${skill.name}`, `description: ${yamlString(skill.description)}`];
  if (skill.always) lines.push("always: true");
  const { bins, env } = skill.requires ?? { bins: [], env: [] };
  if (bins.length || env.length) {
    lines.push("requires:");
    if (bins.length) lines.push(`  bins: ${yamlList(bins)}`);
    if (env.length) lines.push(`  env: ${yamlList(env)}`);
  }
  lines.push("---", "");
  return `${lines.join("\n")}${skill.body.replace(/^\n+/, "")}`;
}

function template(name: string): string {
  return `---
name: ${name || "my-skill"}
description: What this skill does, and when to use it (the words a person would use to ask for it).
# always: false          # true: the whole body goes into every system prompt (short rules only)
# requires:
#   bins: [git]          # commands that must be on PATH
#   env: [SOME_TOKEN]    # environment variables that must be set
---

# ${name || "My skill"}

One sentence on the goal and what a good result looks like.

## Steps
1. First step, with the exact command or file to use.
2. Next step.
3. How to check the result.

## Output
The format to reply in, with a short example.
`;
}

function StatusBadge({ skill }: { skill: Skill }) {
  if (skill.available) {
    return (
      <span className="badge status-completed" data-testid="skill-status" data-available="true">
        available
      </span>
    );
  }
  const why = skill.error ?? `missing ${skill.missing.join(", ")}`;
  return (
    <span className="badge status-error" data-testid="skill-status" data-available="false" title={why}>
      unavailable: {why}
    </span>
  );
}

function shadowNote(skill: Skill): string | null {
  if (!skill.shadows?.length) return null;
  return `overrides the ${skill.shadows.map((s) => (s === "user" ? "personal" : SOURCE_LABEL[s])).join(" and ")} one`;
}

function SkillEditor({ skill, onSaved, onCancel }: { skill: Skill | null; onSaved: (s: Skill) => void; onCancel: () => void }) {
  const [name, setName] = useState(skill?.name ?? "");
  const [content, setContent] = useState(() => (skill ? skillMarkdown(skill) : template("")));
  const [touched, setTouched] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSaved(await api.saveSkill(skill?.name ?? name.trim(), content));
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="library-form" onSubmit={save} aria-label={skill ? `Edit skill ${skill.name}` : "New skill"} data-testid="skill-form">
      {skill ? (
        skill.source !== "user" && (
          <p className="muted small">
            Saving writes your own copy to the data folder, which overrides the {SOURCE_LABEL[skill.source]} one
            {skill.source === "workspace" ? " everywhere except in that workspace (its own copy wins there)" : ""}.
          </p>
        )
      ) : (
        <label>
          Name
          <input
            data-testid="skill-name"
            value={name}
            required
            spellCheck={false}
            placeholder="e.g. release-notes"
            onChange={(e) => {
              setName(e.target.value);
              // Keep the template's name line in step until the person edits the text.
              if (!touched) setContent(template(e.target.value.trim()));
            }}
          />
        </label>
      )}
      <label>
        SKILL.md
        <textarea
          data-testid="skill-content"
          className="mono"
          rows={20}
          spellCheck={false}
          value={content}
          onChange={(e) => {
            setContent(e.target.value);
            setTouched(true);
          }}
        />
      </label>
      {error && (
        <p className="error-text" role="alert" data-testid="skill-error">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="btn primary" data-testid="skill-save" disabled={busy || (!skill && !name.trim())}>
          {skill ? "Save" : "Create skill"}
        </button>
        <button type="button" className="btn subtle" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function SkillDetail({ skill, onEdit, onDeleted }: { skill: Skill; onEdit: () => void; onDeleted: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setError(null);
    try {
      await api.deleteSkill(skill.name);
      onDeleted();
    } catch (e) {
      setError(errorText(e));
      setConfirming(false);
    }
  };
  const note = shadowNote(skill);
  return (
    <div className="skill-detail" data-testid="skill-detail" data-skill={skill.name}>
      <div className="section-head">
        <h2>{skill.name}</h2>
        <StatusBadge skill={skill} />
      </div>
      <p>{skill.description}</p>
      <dl className="kv">
        <div className="kv-row">
          <dt>from</dt>
          <dd>
            {SOURCE_LABEL[skill.source]} {note && <span className="muted">({note})</span>}
          </dd>
        </div>
        <div className="kv-row">
          <dt>file</dt>
          <dd>
            <code>{skill.path}</code>
          </dd>
        </div>
        {skill.always && (
          <div className="kv-row">
            <dt>always</dt>
            <dd>its whole text is in every session's system prompt</dd>
          </div>
        )}
        {(skill.requires.bins.length > 0 || skill.requires.env.length > 0) && (
          <div className="kv-row">
            <dt>needs</dt>
            <dd>{[...skill.requires.bins.map((b) => `command ${b}`), ...skill.requires.env.map((e) => `${e} set`)].join(", ")}</dd>
          </div>
        )}
      </dl>
      <h3>SKILL.md</h3>
      <pre className="code skill-text" data-testid="skill-text">
        <code>{skill.error ? `(cannot be read: ${skill.error})` : skillMarkdown(skill)}</code>
      </pre>
      {error && (
        <p className="error-text" role="alert" data-testid="skill-error">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="button" className="btn" data-testid="skill-edit" onClick={onEdit}>
          {skill.source === "user" ? "Edit" : "Edit as your own copy"}
        </button>
        {skill.source === "user" &&
          (confirming ? (
            <>
              <button type="button" className="btn danger" data-testid="skill-delete-confirm" onClick={() => void remove()}>
                Delete for good
              </button>
              <button type="button" className="btn subtle" onClick={() => setConfirming(false)}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" className="btn subtle" data-testid="skill-delete" onClick={() => setConfirming(true)}>
              Delete
            </button>
          ))}
      </div>
    </div>
  );
}

export function SkillsView({ selected }: { selected: string | null }) {
  const { data: skills, setData: setSkills, error, reload: load } = useLoad<Skill[]>(() => api.skills());
  const [editing, setEditing] = useState<"new" | "current" | null>(null);

  useEffect(() => setEditing((e) => (e === "new" ? e : null)), [selected]);

  const current = skills?.find((s) => s.name === selected) ?? null;
  const saved = (skill: Skill) => {
    setEditing(null);
    setSkills((list) => [...(list ?? []).filter((s) => s.name !== skill.name), skill].sort((a, b) => a.name.localeCompare(b.name)));
    navigate(`#/skills/${encodeURIComponent(skill.name)}`);
    load();
  };

  return (
    <main className="main library" data-testid="skills-view" aria-label="Skills">
      <div className="section-head">
        <h1>Skills</h1>
        <button type="button" className="btn primary small" data-testid="skill-new" onClick={() => setEditing("new")}>
          New skill
        </button>
      </div>
      <p className="muted">
        A skill is a SKILL.md of instructions. Attach one to a message with <code>/name</code> at the start; an “always”
        skill is in every session's prompt. A workspace's own skills live in its <code>.overseer/skills/</code>.
      </p>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      <div className="library-grid">
        <section className="settings-section library-list" aria-label="All skills">
          {skills === null ? (
            <p className="muted">Loading…</p>
          ) : skills.length === 0 ? (
            <p className="muted">No skills yet.</p>
          ) : (
            <ul>
              {skills.map((s) => (
                <li key={s.name}>
                  <a
                    href={`#/skills/${encodeURIComponent(s.name)}`}
                    className={`library-row${s.name === selected && editing !== "new" ? " active" : ""}${s.available ? "" : " unavailable"}`}
                    aria-current={s.name === selected ? "page" : undefined}
                    data-testid="skill-row"
                    data-skill={s.name}
                  >
                    <span className="library-main">
                      <strong>{s.name}</strong>
                      <span className="muted small">{s.description || s.error}</span>
                      {shadowNote(s) && <span className="small muted" data-testid="skill-shadows">{shadowNote(s)}</span>}
                    </span>
                    <span className="library-badges">
                      <StatusBadge skill={s} />
                      <span className="badge" data-testid="skill-source">
                        {SOURCE_LABEL[s.source]}
                      </span>
                      {s.always && (
                        <span className="badge effect-ask" data-testid="skill-always">
                          always
                        </span>
                      )}
                    </span>
                  </a>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section className="settings-section library-detail" aria-label="Skill">
          {editing === "new" ? (
            <SkillEditor key="+new" skill={null} onSaved={saved} onCancel={() => setEditing(null)} />
          ) : current && editing === "current" ? (
            <SkillEditor key={current.name} skill={current} onSaved={saved} onCancel={() => setEditing(null)} />
          ) : current ? (
            <SkillDetail
              key={current.name}
              skill={current}
              onEdit={() => setEditing("current")}
              onDeleted={() => {
                navigate("#/skills");
                load();
              }}
            />
          ) : (
            <p className="muted">{selected && skills ? `No skill named “${selected}”.` : "Choose a skill to read it, or create a new one."}</p>
          )}
        </section>
      </div>
    </main>
  );
}
