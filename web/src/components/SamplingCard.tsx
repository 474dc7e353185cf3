// The card for a server's request to run the model (MCP `sampling/createMessage`): the person reads
// the prompt the server wrote (its system prompt and messages; images are described), may edit its
// texts or lower the token limit, then runs it once or denies it with a reason the server receives.
// Roles, order and images cannot be changed: the host refuses such an edit, naming the field.

import { useState, type FormEvent } from "react";
import { useCardFocus, useNow } from "../hooks";
import { decide, useAppState } from "../store";
import type { Approval } from "../types";
import { CardMeta } from "./ApprovalCard";

interface PromptMessage {
  role: "user" | "assistant";
  type: string;
  text?: string;
  mime_type?: string;
  bytes?: number;
}

interface CardProps {
  approval: Approval;
  position: number;
  total: number;
}

function sizeText(bytes: number | undefined): string {
  if (bytes === undefined) return "";
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

export function SamplingCard({ approval, position, total }: CardProps) {
  const { sessions, submitting, errors } = useAppState();
  const args = approval.arguments;
  const server = String(args.server ?? "a server");
  const model = String(args.model ?? "the session's model");
  const asked = (args.messages ?? []) as PromptMessage[];
  const limit = Number(args.max_tokens ?? 0);
  const [system, setSystem] = useState(String(args.system_prompt ?? ""));
  const [texts, setTexts] = useState<string[]>(() => asked.map((m) => m.text ?? ""));
  const [maxTokens, setMaxTokens] = useState(String(limit));
  const [reason, setReason] = useState("");
  const busy = Boolean(submitting[approval.id]);
  const now = useNow(true, 15_000);
  const { ref: cardRef } = useCardFocus(approval.id);

  const edits = (): Record<string, unknown> | null => {
    const changed: Record<string, unknown> = {};
    if (system !== String(args.system_prompt ?? "")) changed.system_prompt = system;
    if (texts.some((text, i) => asked[i].type === "text" && text !== (asked[i].text ?? ""))) {
      changed.messages = asked.map((m, i) => (m.type === "text" ? { ...m, text: texts[i] } : m));
    }
    if (maxTokens !== String(limit)) changed.max_tokens = Number(maxTokens);
    return Object.keys(changed).length ? changed : null;
  };
  const run = (event: FormEvent) => {
    event.preventDefault();
    const changed = edits();
    void decide(approval, changed ? { decision: "allow_once", updated_arguments: changed } : { decision: "allow_once" });
  };
  const deny = () => void decide(approval, reason.trim() ? { decision: "deny", message: reason.trim() } : { decision: "deny" });
  const edited = edits() !== null;

  return (
    <article
      ref={cardRef}
      className="approval-card sampling-card"
      data-testid="approval-card"
      data-approval-id={approval.id}
      data-kind={approval.kind}
      aria-label={`Approval request ${position} of ${total}: ${server} asks to run the model`}
      tabIndex={-1}
      aria-busy={busy}
    >
      <header className="card-head">
        <CardMeta approval={approval} position={position} total={total} sessions={sessions} now={now} />
        <div className="card-title">
          <h3 data-testid="approval-title">{`${server} asks to run the model`}</h3>
          <span className="chip server-chip" title="The MCP server asking">
            {server}
          </span>
        </div>
      </header>
      <p className="why" data-testid="sampling-summary">
        While running <code>{approval.tool_name}</code>, {server} wants <strong>{model}</strong> to answer the prompt below
        (at most {limit} tokens{Number(args.asked_max_tokens) > limit ? `; it asked for ${String(args.asked_max_tokens)}` : ""}).
        Its answer goes back to the server, not into this conversation.
      </p>
      <p className="hint">The server wrote this prompt. You may edit its texts before it runs.</p>

      <form className="sampling-form" data-testid="sampling-form" onSubmit={run} aria-label="The server's prompt">
        <div className="elicitation-field">
          <label htmlFor={`sampling-${approval.id}-system`}>System prompt</label>
          <textarea
            id={`sampling-${approval.id}-system`}
            data-testid="sampling-system"
            rows={2}
            value={system}
            placeholder="(none)"
            onChange={(e) => setSystem(e.target.value)}
          />
        </div>
        {asked.map((message, i) => (
          <div className="elicitation-field" key={i} data-testid="sampling-message" data-role={message.role}>
            <label htmlFor={`sampling-${approval.id}-m${i}`}>{message.role === "user" ? "User" : "Assistant"}</label>
            {message.type === "text" ? (
              <textarea
                id={`sampling-${approval.id}-m${i}`}
                data-testid={`sampling-text-${i}`}
                rows={Math.min(8, Math.max(2, (texts[i] ?? "").split("\n").length))}
                value={texts[i]}
                onChange={(e) => setTexts((all) => all.map((t, j) => (j === i ? e.target.value : t)))}
              />
            ) : (
              <span className="chip" id={`sampling-${approval.id}-m${i}`} data-testid={`sampling-media-${i}`}>
                {message.type} {message.mime_type ?? ""} {sizeText(message.bytes)}
              </span>
            )}
          </div>
        ))}
        <div className="elicitation-field">
          <label htmlFor={`sampling-${approval.id}-max`}>Most tokens the model may write</label>
          <input
            id={`sampling-${approval.id}-max`}
            data-testid="sampling-max-tokens"
            type="number"
            min={1}
            max={limit}
            step={1}
            value={maxTokens}
            onChange={(e) => setMaxTokens(e.target.value)}
          />
        </div>
        <div className="elicitation-field">
          <label htmlFor={`sampling-${approval.id}-reason`}>Reason, if you deny (the server receives it)</label>
          <input
            id={`sampling-${approval.id}-reason`}
            data-testid="sampling-reason"
            type="text"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
        </div>
        <div className="actions decision-actions" role="group" aria-label="Answer" data-testid="approval-actions">
          <button type="submit" className="btn primary" data-testid="sampling-run" disabled={busy}>
            {edited ? "Run it once, as edited" : "Run it once"}
          </button>
          <button type="button" className="btn danger" data-testid="sampling-deny" disabled={busy} onClick={deny}>
            Deny
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
