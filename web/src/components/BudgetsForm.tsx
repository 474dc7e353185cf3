// Settings → Spend → Budgets: an admin sets the per-session and daily limits here instead of in
// the config file (PUT /api/spend/budgets writes them there, comments kept, and they apply to the
// next model call). Empty means no limit.

import { useEffect, useState } from "react";
import { request } from "../api";
import type { Schemas, Sent } from "../types";
import "../budgets.css";

type Spend = Sent<Schemas["Spend"]>;
type BudgetsIn = Schemas["BudgetsIn"];

const MAX_BUDGET_USD = 1_000_000;

/** A limit as the field shows it: cents as cents (0.5 → "0.50"), finer amounts as they are. */
function shown(usd: number | null): string {
  if (usd === null) return "";
  return Number.isInteger(Math.round(usd * 100 * 1e6) / 1e6) ? usd.toFixed(2) : String(usd);
}

/** The field's text as a limit: null for none, a string for what is wrong with it. */
function parsed(text: string): number | null | string {
  const trimmed = text.trim().replace(/^\$/, "");
  if (!trimmed) return null;
  const usd = Number(trimmed);
  if (!Number.isFinite(usd) || usd <= 0) return "An amount in dollars above 0, or empty for no limit.";
  if (usd > MAX_BUDGET_USD) return `At most $${MAX_BUDGET_USD.toLocaleString("en")}.`;
  return usd;
}

/** One limit's field: a dollar amount, and what is wrong with it under it. `value`: the text as parsed. */
function BudgetField({
  label,
  testId,
  text,
  value,
  admin,
  onChange,
}: {
  label: string;
  testId: string;
  text: string;
  value: number | null | string;
  admin: boolean;
  onChange: (text: string) => void;
}) {
  const problem = typeof value === "string" ? value : null;
  return (
    <label>
      {label}
      <span className="budget-input">
        <span aria-hidden="true">$</span>
        <input
          data-testid={testId}
          inputMode="decimal"
          autoComplete="off"
          placeholder="no limit"
          value={text}
          disabled={!admin}
          aria-invalid={problem !== null}
          aria-describedby={problem !== null ? `${testId}-error` : undefined}
          onChange={(e) => onChange(e.target.value)}
        />
      </span>
      {problem !== null && (
        <span className="error-text small" id={`${testId}-error`} data-testid={`${testId}-error`}>
          {problem}
        </span>
      )}
    </label>
  );
}

export function BudgetsForm({ spend, admin, onSaved }: { spend: Spend; admin: boolean; onSaved: (spend: Spend) => void }) {
  const [session, setSession] = useState(shown(spend.per_session_usd));
  const [daily, setDaily] = useState(shown(spend.daily_usd));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => {
    setSession(shown(spend.per_session_usd));
    setDaily(shown(spend.daily_usd));
  }, [spend.per_session_usd, spend.daily_usd]);

  const sessionValue = parsed(session);
  const dailyValue = parsed(daily);
  const invalid = typeof sessionValue === "string" || typeof dailyValue === "string";
  const unchanged = sessionValue === spend.per_session_usd && dailyValue === spend.daily_usd;

  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    if (invalid) return;
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const body: BudgetsIn = { per_session_usd: sessionValue as number | null, daily_usd: dailyValue as number | null };
      const next = await request<Spend>("PUT", "/api/spend/budgets", body);
      onSaved(next);
      setSaved(`Saved to ${next.config_file ?? "the configuration"}; in force from the next model call.`);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="budgets-form" onSubmit={(e) => void save(e)} aria-label="Budgets" data-testid="budgets-form">
      <h3>Budgets</h3>
      <p className="muted small">
        A session stops before a model call it cannot pay for; a call whose answer could pass the budget is asked for a shorter
        one. Empty: no limit.
      </p>
      <div className="budgets-grid">
        <BudgetField label="Each session, up to" testId="budget-per-session" text={session} value={sessionValue} admin={admin} onChange={setSession} />
        <BudgetField label="Each day, all sessions (UTC), up to" testId="budget-daily" text={daily} value={dailyValue} admin={admin} onChange={setDaily} />
      </div>
      {!admin && <p className="muted small">Only an admin can change the budgets.</p>}
      {error && (
        <p className="error-text" role="alert" data-testid="budgets-error">
          {error}
        </p>
      )}
      {saved && (
        <p className="muted small" role="status" data-testid="budgets-saved">
          {saved}
        </p>
      )}
      {admin && (
        <div className="actions">
          <button type="submit" className="btn primary" data-testid="budgets-save" disabled={busy || invalid || unchanged}>
            {busy ? "Saving…" : "Save budgets"}
          </button>
        </div>
      )}
    </form>
  );
}
