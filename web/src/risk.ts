// How risky a waiting call looks, and whether a person could judge it from its one-line row.
// The card's High-risk banner and the inbox's batch buttons read the same rules.

import { argumentSummary } from "./format";
import type { Approval } from "./types";

const HIGH_RISK_COMMAND =
  /(\brm\s+-[a-zA-Z]*[rf]|\bsudo\b|\bchmod\s+-R\b|\bchown\b|\bmkfs|\bdd\s+if=|\b(curl|wget)\b[^|;&]*\|\s*(ba|z)?sh\b|\bgit\s+push\b[^;&|]*(--force|-f\b)|>\s*\/dev\/sd)/;

/** Calls whose effect is a diff (shown on the card, never in a row). */
export const FILE_TOOLS = new Set(["mcp__file__write_file", "mcp__file__edit_file"]);

/** The longest argument summary a compact row shows whole (it truncates at 90 characters). */
export const ROW_SUMMARY_LIMIT = 90;

/** The card's High-risk warning, or null when the call does not look dangerous. */
export function riskOf(approval: Approval): string | null {
  const command = approval.arguments.command;
  if (typeof command === "string" && HIGH_RISK_COMMAND.test(command)) {
    return "High risk: this command can delete data, change permissions or run code fetched from the network.";
  }
  // An argument carrying credential-like text from an earlier result (issue 34): never batch-allowed.
  if ((approval.carried_results ?? []).some((c) => c.looks_secret)) {
    return "High risk: an argument carries text from an earlier tool result that looks like a credential.";
  }
  if (/sensitive/i.test(approval.reason)) return `High risk: ${approval.reason}`;
  return null;
}

/** Whether a batch "Allow … once" may cover this call: a plain tool call, not High risk (the
 * card's banner), not a file change (its diff is never in the row), and whose arguments the row
 * shows whole. Anything else needs its own decision on its card. (Every shell command carries
 * destructiveHint, so the hint alone cannot tell a risky command from `echo`.) */
export function batchAllowable(approval: Approval): boolean {
  if ((approval.kind ?? "tool") !== "tool") return false;
  if (riskOf(approval) !== null) return false;
  if (FILE_TOOLS.has(approval.tool_name)) return false;
  return argumentSummary(approval.arguments ?? {}).length <= ROW_SUMMARY_LIMIT;
}

/** What a tool's annotations put at stake, in the card's words (issue 34, item 4). Must say the
 * same as STAKE_TEXT in backend/rules/risk.py (tests/rules/test_risk.py checks). */
export const STAKE_TEXT = {
  destructive: "Deletes or overwrites data",
  open_world: "Reaches outside systems",
  read_only: "Only reads, changes nothing",
} as const;

/** Between an ask's reason and its stakes (backend/rules/risk.py, STAKES_JOINER). */
export const STAKES_JOINER = " · At stake: ";

/** The reason without the stakes the server wrote after it (the card shows them on their own). */
export function reasonWithoutStakes(reason: string): string {
  const at = reason.indexOf(STAKES_JOINER);
  return at < 0 ? reason : reason.slice(0, at);
}
