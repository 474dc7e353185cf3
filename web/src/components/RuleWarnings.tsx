// Rules that name a server or tool that does not exist here (issue 35, item 12), above the rules
// table: a rule left naming a renamed server covers nothing, and a deny among them silently stops
// denying. Read again whenever the rules change; the host checks them against the servers' tools now.

import { useEffect, useState } from "react";
import { request } from "../api";
import type { Schemas, Sent } from "../types";
import "../ruleWarnings.css";

export type RuleWarning = Sent<Schemas["RuleWarning"]>;

/** GET /api/settings/rule-warnings; an empty list when it cannot be read (the start checked them too). */
export function useRuleWarnings(version: unknown): RuleWarning[] {
  const [warnings, setWarnings] = useState<RuleWarning[]>([]);
  useEffect(() => {
    let cancelled = false;
    request<RuleWarning[]>("GET", "/api/settings/rule-warnings")
      .then((found) => !cancelled && setWarnings(found))
      .catch(() => !cancelled && setWarnings([]));
    return () => {
      cancelled = true;
    };
  }, [version]);
  return warnings;
}

/** The list, errors first; nothing when every rule covers some tool. */
export function RuleWarnings({ version }: { version: unknown }) {
  const warnings = useRuleWarnings(version);
  if (warnings.length === 0) return null;
  const errors = warnings.filter((w) => w.level === "error").length;
  return (
    <div className="rule-warnings" role="status" aria-label="Rules that cover nothing" data-testid="rule-warnings">
      <p className="rule-warnings-title">
        {warnings.length === 1 ? "1 rule covers" : `${warnings.length} rules cover`} no tool here
        {errors > 0 && ` (${errors} deny ${errors === 1 ? "rule" : "rules"}: nothing is denied by ${errors === 1 ? "it" : "them"})`}
      </p>
      <ul>
        {warnings.map((w) => (
          <li key={`${w.source}-${w.effect}-${w.rule}`} className={`rule-warning level-${w.level}`} data-testid="rule-warning" data-level={w.level}>
            <span className={`badge rule-warning-level level-${w.level}`}>{w.level === "error" ? "Error" : "Warning"}</span>
            <span className="rule-warning-text">{w.message}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
