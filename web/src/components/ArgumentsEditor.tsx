// Editing a call's arguments as a person would: one field per argument, text as text (a file's
// content is edited as the file, not as an escaped JSON string), other values as JSON with the
// error next to their field; or the whole object as JSON for those who prefer it.

import { useEffect, useState, type KeyboardEvent } from "react";

type Kind = "text" | "json";
interface Field {
  key: string;
  kind: Kind;
  text: string;
}

export interface EditedArguments {
  /** The arguments to send, or null while any field is wrong. */
  args: Record<string, unknown> | null;
}

function fieldsOf(args: Record<string, unknown>): Field[] {
  return Object.entries(args).map(([key, value]) =>
    typeof value === "string" ? { key, kind: "text", text: value } : { key, kind: "json", text: JSON.stringify(value, null, 2) },
  );
}

function parseField(field: Field): { value?: unknown; error?: string } {
  if (field.kind === "text") return { value: field.text };
  try {
    return { value: JSON.parse(field.text) as unknown };
  } catch (error) {
    return { error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function parseWhole(text: string): { value?: Record<string, unknown>; error?: string } {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return { value: parsed as Record<string, unknown> };
    return { error: "The arguments must be a JSON object." };
  } catch (error) {
    return { error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function rowsFor(text: string, min: number): number {
  return Math.min(10, Math.max(min, text.split("\n").length + (text.includes("\n") ? 1 : 0)));
}

export function ArgumentsEditor(props: {
  id: string;
  args: Record<string, unknown>;
  onChange: (edited: EditedArguments) => void;
  onKeyDown: (event: KeyboardEvent) => void;
}) {
  const { id, args, onChange, onKeyDown } = props;
  const [fields, setFields] = useState<Field[]>(() => fieldsOf(args));
  const [whole, setWhole] = useState<string | null>(null);
  const [switchError, setSwitchError] = useState<string | null>(null);

  const parsedFields = fields.map(parseField);
  const wholeParsed = whole === null ? null : parseWhole(whole);
  const result: Record<string, unknown> | null =
    wholeParsed !== null
      ? wholeParsed.value ?? null
      : parsedFields.some((p) => p.error)
        ? null
        : Object.fromEntries(fields.map((f, i) => [f.key, parsedFields[i].value]));
  const signature = JSON.stringify(result);
  // Told when the result changes, not on every keystroke that leaves it as it was.
  useEffect(() => onChange({ args: result }), [signature]);

  const toWhole = () => {
    setSwitchError(null);
    setWhole(JSON.stringify(result ?? args, null, 2));
  };
  const toFields = () => {
    if (!wholeParsed?.value) {
      setSwitchError("Fix the JSON first.");
      return;
    }
    setSwitchError(null);
    setFields(fieldsOf(wholeParsed.value));
    setWhole(null);
  };

  return (
    <div className="args-editor" data-testid="edit-arguments">
      {whole === null ? (
        fields.length === 0 ? (
          <p className="muted">This call has no arguments to edit.</p>
        ) : (
          fields.map((field, i) => {
            const fieldId = `edit-${id}-${field.key}`;
            const error = parsedFields[i].error;
            return (
              <div className="edit-field" key={field.key}>
                <label htmlFor={fieldId}>
                  <code>{field.key}</code>
                  {field.kind === "json" && <span className="muted small"> JSON</span>}
                </label>
                <textarea
                  id={fieldId}
                  className={field.kind === "json" ? "json-editor" : "text-editor"}
                  data-testid="edit-field"
                  data-field={field.key}
                  rows={rowsFor(field.text, field.kind === "json" ? 2 : 1)}
                  autoFocus={i === 0}
                  spellCheck={false}
                  value={field.text}
                  aria-invalid={error !== undefined}
                  aria-describedby={error ? `${fieldId}-error` : undefined}
                  onChange={(e) => setFields(fields.map((f, j) => (j === i ? { ...f, text: e.target.value } : f)))}
                  onKeyDown={onKeyDown}
                />
                {error && (
                  <p id={`${fieldId}-error`} className="error-text field-error" data-testid="edit-error" role="status">
                    {error}
                  </p>
                )}
              </div>
            );
          })
        )
      ) : (
        <div className="edit-field">
          <label htmlFor={`edit-${id}-json`}>All arguments (JSON)</label>
          <textarea
            id={`edit-${id}-json`}
            className="json-editor"
            data-testid="edit-arguments-json"
            rows={rowsFor(whole, 4)}
            autoFocus
            spellCheck={false}
            value={whole}
            aria-invalid={wholeParsed?.error !== undefined}
            onChange={(e) => setWhole(e.target.value)}
            onKeyDown={onKeyDown}
          />
          {wholeParsed?.error && (
            <p className="error-text field-error" data-testid="edit-error" role="status">
              {wholeParsed.error}
            </p>
          )}
        </div>
      )}
      <button type="button" className="link-button" data-testid="edit-mode-toggle" onClick={whole === null ? toWhole : toFields}>
        {whole === null ? "Edit as JSON" : "Edit field by field"}
      </button>
      {switchError && (
        <p className="error-text" role="status">
          {switchError}
        </p>
      )}
    </div>
  );
}
