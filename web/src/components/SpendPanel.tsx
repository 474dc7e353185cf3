// Settings → Spend: what the model calls cost today, this month, in total and by model, and the
// budgets in force (GET /api/spend), which an admin changes here (BudgetsForm).

import { request } from "../api";
import { formatCost, formatTokens } from "../format";
import { useLoad } from "../hooks";
import { useAppState } from "../store";
import type { Schemas, Sent } from "../types";
import { BudgetsForm } from "./BudgetsForm";

type Spend = Sent<Schemas["Spend"]>;

export function SpendPanel() {
  const { data: spend, error, setData } = useLoad(() => request<Spend>("GET", "/api/spend"));
  const admin = useAppState().me?.role === "admin";
  return (
    <section className="settings-section" aria-labelledby="spend-heading" data-testid="spend-section">
      <h2 id="spend-heading">Spend</h2>
      {error && <p className="error-text">{error}</p>}
      {spend && (
        <>
          <p>
            Today <strong data-testid="spend-today">{formatCost(spend.today_usd)}</strong>
            {spend.daily_usd !== null && <span className="muted"> of {formatCost(spend.daily_usd)} a day</span>} · this month{" "}
            <strong data-testid="spend-month">{formatCost(spend.month_usd)}</strong> · in total{" "}
            <strong data-testid="spend-total">{formatCost(spend.total_usd)}</strong>
            {spend.per_session_usd !== null && <span className="muted"> · each session up to {formatCost(spend.per_session_usd)}</span>}
          </p>
          {spend.by_model.length > 0 && (
            <table className="spend-table" data-testid="spend-by-model">
              <thead>
                <tr>
                  <th>Model</th>
                  <th>Sessions</th>
                  <th>Tokens in / out</th>
                  <th>Cost</th>
                </tr>
              </thead>
              <tbody>
                {spend.by_model.map((m) => (
                  <tr key={m.model} data-model={m.model}>
                    <td>{m.model}</td>
                    <td>{m.sessions}</td>
                    <td>
                      {formatTokens(m.input_tokens)} / {formatTokens(m.output_tokens)}
                    </td>
                    <td>{formatCost(m.cost_usd)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {spend.daily_usd === null && spend.per_session_usd === null && (
            <p className="muted small" data-testid="spend-no-budget">
              No budget set: runs are not stopped at any amount.
            </p>
          )}
          <BudgetsForm spend={spend} admin={admin} onSaved={setData} />
        </>
      )}
    </section>
  );
}
