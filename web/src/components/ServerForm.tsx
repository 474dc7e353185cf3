// Adding or editing a person's MCP server: the fields of an `mcpServers` entry, as Claude Code's
// .mcp.json has them. The server validates the entry as the config file would and names a bad
// field (422); keys this form does not show (start_timeout, ...) are kept as they were.

import { useEffect, useState, type FormEvent } from "react";
import { api } from "../api";
import type { ServerEntry, ServerInfo } from "../types";

type Transport = "stdio" | "http" | "sse";
const FORM_KEYS = ["type", "command", "args", "env", "cwd", "url", "headers"];

interface Fields {
  name: string;
  type: Transport;
  command: string;
  args: string;
  env: string;
  cwd: string;
  url: string;
  headers: string;
}

const EMPTY: Fields = { name: "", type: "stdio", command: "", args: "", env: "", cwd: "", url: "", headers: "" };

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function asLines(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join("\n") : "";
}

function asPairs(value: unknown, separator: string): string {
  if (!value || typeof value !== "object") return "";
  return Object.entries(value as Record<string, unknown>)
    .map(([key, item]) => `${key}${separator}${String(item)}`)
    .join("\n");
}

function fieldsOf(name: string, entry: ServerEntry): Fields {
  const type = entry.type === "http" || entry.type === "sse" ? entry.type : "stdio";
  return {
    name,
    type,
    command: typeof entry.command === "string" ? entry.command : "",
    args: asLines(entry.args),
    env: asPairs(entry.env, "="),
    cwd: typeof entry.cwd === "string" ? entry.cwd : "",
    url: typeof entry.url === "string" ? entry.url : "",
    headers: asPairs(entry.headers, ": "),
  };
}

/** `KEY=value` (or `Name: value`) lines as a mapping; a line without the separator is an error. */
function parsePairs(text: string, separator: string, what: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  text.split("\n").forEach((line, index) => {
    if (!line.trim()) return;
    const at = line.indexOf(separator);
    if (at <= 0) throw new Error(`${what} line ${index + 1}: write it as NAME${separator.trim()}value`);
    pairs[line.slice(0, at).trim()] = line.slice(at + separator.length).trim();
  });
  return pairs;
}

function entryOf(fields: Fields, kept: ServerEntry): ServerEntry {
  const entry: ServerEntry = { ...kept };
  if (fields.type === "stdio") {
    if (kept.type === "stdio") entry.type = "stdio";
    entry.command = fields.command.trim();
    const args = fields.args.split("\n").filter((line) => line.trim() !== "");
    if (args.length > 0) entry.args = args;
    const env = parsePairs(fields.env, "=", "Environment");
    if (Object.keys(env).length > 0) entry.env = env;
    if (fields.cwd.trim()) entry.cwd = fields.cwd.trim();
  } else {
    entry.type = fields.type;
    entry.url = fields.url.trim();
    const headers = parsePairs(fields.headers, ":", "Headers");
    if (Object.keys(headers).length > 0) entry.headers = headers;
  }
  return entry;
}

export function ServerForm({
  editing,
  onSaved,
  onCancel,
}: {
  /** The server being edited, or null to add one. */
  editing: ServerInfo | null;
  onSaved: (server: ServerInfo) => void;
  onCancel: () => void;
}) {
  const [fields, setFields] = useState<Fields>(EMPTY);
  const [kept, setKept] = useState<ServerEntry>({});
  const [loading, setLoading] = useState(editing !== null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (editing === null) return;
    api
      .serverEntry(editing.name)
      .then(({ entry }) => {
        setFields(fieldsOf(editing.name, entry));
        setKept(Object.fromEntries(Object.entries(entry).filter(([key]) => !FORM_KEYS.includes(key))));
      })
      .catch((e: unknown) => setError(errorText(e)))
      .finally(() => setLoading(false));
  }, [editing]);

  const set = (key: keyof Fields) => (event: { target: { value: string } }) =>
    setFields((current) => ({ ...current, [key]: event.target.value }));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const entry = entryOf(fields, kept);
      const saved = editing ? await api.updateServer(editing.name, entry) : await api.addServer(fields.name.trim(), entry);
      onSaved(saved);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  const remote = fields.type !== "stdio";
  return (
    <form
      className="server-form"
      onSubmit={submit}
      aria-label={editing ? `Edit ${editing.name}` : "Add a server"}
      data-testid="server-form"
    >
      <div className="server-form-grid">
        <label>
          Name
          <input
            data-testid="server-form-name"
            value={fields.name}
            disabled={editing !== null}
            required
            spellCheck={false}
            placeholder="github"
            onChange={set("name")}
          />
        </label>
        <label>
          Type
          <select data-testid="server-form-type" value={fields.type} onChange={set("type")}>
            <option value="stdio">stdio (a command)</option>
            <option value="http">http (Streamable HTTP)</option>
            <option value="sse">sse (older HTTP)</option>
          </select>
        </label>
        {remote ? (
          <label className="wide">
            URL
            <input data-testid="server-form-url" value={fields.url} spellCheck={false} placeholder="https://mcp.example.com/mcp" onChange={set("url")} />
          </label>
        ) : (
          <>
            <label className="wide">
              Command
              <input data-testid="server-form-command" value={fields.command} spellCheck={false} placeholder="npx" onChange={set("command")} />
            </label>
            <label>
              Working folder
              <input data-testid="server-form-cwd" value={fields.cwd} spellCheck={false} placeholder="(optional)" onChange={set("cwd")} />
            </label>
          </>
        )}
      </div>
      {remote ? (
        <label>
          Headers <span className="muted small">one per line, Name: value; ${"{VAR}"} reads the environment</span>
          <textarea data-testid="server-form-headers" rows={2} value={fields.headers} spellCheck={false} onChange={set("headers")} />
        </label>
      ) : (
        <div className="server-form-grid">
          <label>
            Arguments <span className="muted small">one per line</span>
            <textarea data-testid="server-form-args" rows={3} value={fields.args} spellCheck={false} onChange={set("args")} />
          </label>
          <label>
            Environment <span className="muted small">KEY=value per line; ${"{VAR}"} reads Overseer's</span>
            <textarea data-testid="server-form-env" rows={3} value={fields.env} spellCheck={false} onChange={set("env")} />
          </label>
        </div>
      )}
      {editing && <p className="muted small">Values shown as ******** are kept as they are unless you type new ones.</p>}
      {error && (
        <p className="error-text" role="alert" data-testid="server-form-error">
          {error}
        </p>
      )}
      <div className="server-actions">
        <button type="submit" className="btn primary" data-testid="server-form-save" disabled={busy || loading}>
          {editing ? "Save and restart" : "Add and start"}
        </button>
        <button type="button" className="btn" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}
