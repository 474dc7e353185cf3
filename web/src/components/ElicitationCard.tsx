// The card for a server's question (MCP `elicitation/create`): the server asks the person to fill
// in a form built from its requested schema (a flat object of strings, numbers, integers,
// booleans, and multi-selects shown as checkboxes). Accept sends the content (the host checks it against the schema; a bad value comes
// back as an error naming the field), Decline refuses, Cancel dismisses without a decision.

import { useState, type FormEvent } from "react";
import { useCardFocus, useNow } from "../hooks";
import { decide, useAppState } from "../store";
import type { Approval } from "../types";
import { CardMeta } from "./ApprovalCard";

/** One field of a requested schema, as the spec allows it. */
interface FieldSchema {
  type?: "string" | "number" | "integer" | "boolean" | "array";
  title?: string;
  description?: string;
  format?: string;
  enum?: string[];
  enumNames?: string[];
  oneOf?: { const: string; title?: string }[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  /** A multi-select's options (2025-11-25): plain values, or values with titles. */
  items?: { enum?: string[]; anyOf?: { const: string; title?: string }[] };
  minItems?: number;
  maxItems?: number;
}

interface FormSchema {
  properties?: Record<string, FieldSchema>;
  required?: string[];
}

interface CardProps {
  approval: Approval;
  position: number;
  total: number;
}

type Values = Record<string, string | boolean | string[]>;

const INPUT_TYPES: Record<string, string> = { email: "email", uri: "url", date: "date" };

function choicesOf(field: FieldSchema): { value: string; label: string }[] | null {
  if (field.enum) return field.enum.map((value, i) => ({ value, label: field.enumNames?.[i] ?? value }));
  if (field.oneOf) return field.oneOf.map((o) => ({ value: o.const, label: o.title ?? o.const }));
  return null;
}

function multiChoicesOf(field: FieldSchema): { value: string; label: string }[] {
  if (field.items?.enum) return field.items.enum.map((value) => ({ value, label: value }));
  return (field.items?.anyOf ?? []).map((o) => ({ value: o.const, label: o.title ?? o.const }));
}

/** What a multi-select asks of the person, in words: "choose 1 to 3". */
function countHint(field: FieldSchema): string | null {
  const { minItems: min, maxItems: max } = field;
  if (min !== undefined && max !== undefined) return min === max ? `choose ${min}` : `choose ${min} to ${max}`;
  if (min !== undefined) return `choose at least ${min}`;
  if (max !== undefined) return `choose at most ${max}`;
  return null;
}

function initialValues(schema: FormSchema): Values {
  const values: Values = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    if (field.type === "boolean") values[name] = field.default === true;
    else if (field.type === "array") values[name] = Array.isArray(field.default) ? field.default.map(String) : [];
    else values[name] = field.default === undefined || field.default === null ? "" : String(field.default);
  }
  return values;
}

/** The content to send: empty optional fields left out, numbers as numbers. */
function contentOf(schema: FormSchema, values: Values): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const value = values[name];
    if (field.type === "boolean") content[name] = Boolean(value);
    else if (field.type === "array") content[name] = Array.isArray(value) ? value : [];
    else if (value === "" || value === undefined) continue;
    else if (field.type === "number" || field.type === "integer") content[name] = Number(value);
    else content[name] = value;
  }
  return content;
}

export function ElicitationCard({ approval, position, total }: CardProps) {
  const { sessions, submitting, errors } = useAppState();
  const schema = (approval.arguments.schema ?? {}) as FormSchema;
  const server = String(approval.arguments.server ?? "a server");
  const message = String(approval.arguments.message ?? approval.reason ?? "");
  const required = new Set(schema.required ?? []);
  const [values, setValues] = useState<Values>(() => initialValues(schema));
  const busy = Boolean(submitting[approval.id]);
  const now = useNow(true, 15_000);
  const { ref: cardRef } = useCardFocus(approval.id);

  const set = (name: string, value: string | boolean | string[]) => setValues((v) => ({ ...v, [name]: value }));
  // A multi-select's answer lists its choices in the schema's order, whatever order they were ticked in.
  const toggle = (name: string, field: FieldSchema, choice: string, on: boolean) =>
    setValues((v) => {
      const chosen = Array.isArray(v[name]) ? (v[name] as string[]) : [];
      const options = multiChoicesOf(field).map((c) => c.value);
      return { ...v, [name]: options.filter((c) => (c === choice ? on : chosen.includes(c))) };
    });
  const accept = (event: FormEvent) => {
    event.preventDefault();
    void decide(approval, { decision: "allow_once", updated_arguments: contentOf(schema, values) });
  };
  const decline = () => void decide(approval, { decision: "deny" });
  const cancel = () => void decide(approval, { decision: "cancel" });

  return (
    <article
      ref={cardRef}
      className="approval-card elicitation-card"
      data-testid="approval-card"
      data-approval-id={approval.id}
      data-kind={approval.kind}
      aria-label={`Approval request ${position} of ${total}: ${server} asks`}
      tabIndex={-1}
      aria-busy={busy}
    >
      <header className="card-head">
        <CardMeta approval={approval} position={position} total={total} sessions={sessions} now={now} />
        <div className="card-title">
          <h3 data-testid="approval-title">{`${server} asks`}</h3>
          <span className="chip server-chip" title="The MCP server asking">
            {server}
          </span>
        </div>
      </header>
      <p className="why" data-testid="elicitation-message">
        {message}
      </p>
      <p className="hint">The server wrote this question; what you fill in goes back to it.</p>

      <form className="elicitation-form" data-testid="elicitation-form" onSubmit={accept} aria-label="The server's form">
        {Object.entries(schema.properties ?? {}).map(([name, field]) => {
          const id = `elicit-${approval.id}-${name}`;
          const label = field.title || name;
          const choices = choicesOf(field);
          const isRequired = required.has(name);
          const hint = field.description && field.description !== label ? field.description : null;
          if (field.type === "array") {
            const chosen = Array.isArray(values[name]) ? (values[name] as string[]) : [];
            const count = countHint(field);
            return (
              <fieldset className="elicitation-field multi-select" key={name} data-testid={`elicit-field-${name}`}>
                <legend>
                  {label}
                  {isRequired && <span aria-hidden="true"> *</span>}
                  {count && <small className="hint"> ({count})</small>}
                </legend>
                {multiChoicesOf(field).map((choice) => (
                  <label key={choice.value} className="checkbox">
                    <input
                      type="checkbox"
                      value={choice.value}
                      checked={chosen.includes(choice.value)}
                      onChange={(e) => toggle(name, field, choice.value, e.target.checked)}
                    />{" "}
                    {choice.label}
                  </label>
                ))}
                {hint && <small className="hint">{hint}</small>}
              </fieldset>
            );
          }
          if (field.type === "boolean") {
            return (
              <div className="elicitation-field checkbox" key={name}>
                <label htmlFor={id}>
                  <input
                    id={id}
                    type="checkbox"
                    data-testid={`elicit-field-${name}`}
                    checked={Boolean(values[name])}
                    onChange={(e) => set(name, e.target.checked)}
                  />{" "}
                  {label}
                </label>
                {hint && <small className="hint">{hint}</small>}
              </div>
            );
          }
          return (
            <div className="elicitation-field" key={name}>
              <label htmlFor={id}>
                {label}
                {isRequired && <span aria-hidden="true"> *</span>}
              </label>
              {choices ? (
                <select
                  id={id}
                  data-testid={`elicit-field-${name}`}
                  required={isRequired}
                  value={String(values[name] ?? "")}
                  onChange={(e) => set(name, e.target.value)}
                >
                  <option value="">—</option>
                  {choices.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  id={id}
                  data-testid={`elicit-field-${name}`}
                  type={field.type === "number" || field.type === "integer" ? "number" : INPUT_TYPES[field.format ?? ""] ?? "text"}
                  step={field.type === "integer" ? 1 : field.type === "number" ? "any" : undefined}
                  required={isRequired}
                  value={String(values[name] ?? "")}
                  onChange={(e) => set(name, e.target.value)}
                />
              )}
              {hint && <small className="hint">{hint}</small>}
            </div>
          );
        })}
        <div className="actions decision-actions" role="group" aria-label="Answer" data-testid="approval-actions">
          <button type="submit" className="btn primary" data-testid="elicit-accept" disabled={busy}>
            Accept
          </button>
          <button type="button" className="btn" data-testid="elicit-decline" disabled={busy} onClick={decline}>
            Decline
          </button>
          <button type="button" className="btn" data-testid="elicit-cancel" disabled={busy} onClick={cancel}>
            Cancel
          </button>
        </div>
      </form>
      {errors[approval.id] && (
        <p className="error-text" role="alert" data-testid="approval-error">
          {errors[approval.id]}
        </p>
      )}
    </article>
  );
}
