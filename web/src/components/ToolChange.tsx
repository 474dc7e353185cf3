// A tool whose definition changed since it was pinned (issue 34, item 3): what changed, as a
// line diff of the old and new definitions (description, input schema, annotations), and for
// admins the button that accepts the new definition. Shown on the approval card of a changed
// tool's call and on the Servers page. Every call of the tool asks until it is accepted.

import { useState } from "react";
import { api, errorText } from "../api";
import { diffLines, withContext } from "../diff";
import type { ToolChange } from "../types";
import "../toolpins.css";

const FIELD_WORDS: Record<ToolChange["fields"][number], string> = {
  name: "name",
  title: "title",
  description: "description",
  input_schema: "input schema",
  annotations: "annotations",
};

/** "description and annotations" */
export function changedFields(change: ToolChange): string {
  const words = change.fields.map((f) => FIELD_WORDS[f]);
  if (words.length === 0) return "definition (it could not be checked)";
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

export function ToolChangeView(props: { change: ToolChange; admin: boolean; onAccepted?: () => void }) {
  const { change, admin, onAccepted } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [accepted, setAccepted] = useState(false);
  // Two lines of context around each change: a schema's unchanged lines would bury a one-word edit.
  const lines = withContext(diffLines(change.before, change.after), 2).filter((line) => line.kind !== "hunk");
  const accept = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.acceptToolDefinition(change.server, change.tool);
      setAccepted(true);
      onAccepted?.();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="tool-change" data-testid="tool-change" aria-label="The tool changed since it was pinned">
      <p className="tool-change-head">
        <strong>This tool changed since it was first trusted</strong>: its {changedFields(change)}. Read what it says
        now: a rule that allowed the old tool does not allow this one, and every call asks until an admin accepts the
        new definition.
      </p>
      {change.identity_before && (
        <p className="muted small" data-testid="tool-change-identity">
          The server also runs another command: <code>{change.identity_before}</code> → <code>{change.identity_after}</code>
        </p>
      )}
      <pre className="code diff tool-change-diff" aria-label="Old and new definition" data-testid="tool-change-diff">
        <code>
          {lines.map((line, i) => (
            <span key={i} className={`diff-line diff-${line.kind === "gap" ? "same tool-change-gap" : line.kind}`} data-testid={line.kind === "same" ? "diff-context" : `diff-${line.kind}`}>
              {line.kind === "add" ? "+" : line.kind === "del" ? "-" : " "}
              {line.text}
              {"\n"}
            </span>
          ))}
        </code>
      </pre>
      {admin && !accepted && (
        <button type="button" className="btn small" data-testid="accept-tool-definition" disabled={busy} onClick={() => void accept()}>
          Accept new definition
        </button>
      )}
      {accepted && (
        <p className="muted small" role="status" data-testid="tool-definition-accepted">
          Accepted: the rules decide this tool's calls again.
        </p>
      )}
      {error && (
        <p className="error-text" role="alert" data-testid="accept-tool-error">
          {error}
        </p>
      )}
    </section>
  );
}
