// What "Always allow" would write and where, in words, shown on the card before anything is
// saved (issue 31, item 2). The server decides the same way (backend/app/approvals.py): a
// non-admin's rule is kept for the session's workspace (or named agent) only; an admin's goes
// to every session unless they keep it to this one.

import type { Approval, Me, Session } from "./types";

export type AlwaysScope = "workspace" | "agent" | "global";

const GLOBAL_LABEL = "every session (global policy)";
const WRITES = new Set(["mcp__file__write_file", "mcp__file__edit_file"]);
const READS = new Set(["mcp__file__read_file", "mcp__file__list_dir", "mcp__file__glob", "mcp__file__grep"]);

/** The session's own scope: the approval says it; an older approval falls back to its session. */
export function localScope(approval: Approval, session: Session | undefined): { kind: AlwaysScope; label: string } {
  const own = approval.always_scope;
  if (own && own.kind !== "global") return { kind: own.kind, label: own.label || `${own.kind} ${own.name}` };
  if (session && session.agent_id && session.agent_id !== "main") return { kind: "agent", label: `agent ${session.agent_id}` };
  return { kind: "workspace", label: `workspace ${session?.workspace ?? "of this session"}` };
}

/** Which scopes the person may choose, their default first: an admin may keep it local or make it global. */
export function scopeChoices(me: Me | null, local: { kind: AlwaysScope; label: string }): { kind: AlwaysScope; label: string }[] {
  const global = { kind: "global" as const, label: GLOBAL_LABEL };
  return me?.role === "admin" ? [global, local] : [local];
}

/** "writes", "commands", ...: what kind of call the rule lets through. */
export function callsOf(toolName: string): string {
  if (WRITES.has(toolName)) return "writes";
  if (READS.has(toolName)) return "reads";
  if (toolName === "mcp__shell__exec") return "commands";
  return `calls of ${toolName}`;
}

/** `Always allow writes: mcp__file__write_file(./notes.txt) in workspace ~/x`. */
export function alwaysSummary(toolName: string, rules: string[], scopeLabel: string): string {
  return `Always allow ${callsOf(toolName)}: ${rules.join(", ")} in ${scopeLabel}`;
}

/** The choices of rule an MCP tool's card offers (issue 34, item 4): the exact call's rule(s)
 * first, then one rule per short argument (`mcp__mail__send(to:ops@example.com)`), each with
 * words saying which later calls it lets through. */
export function ruleChoices(approval: Approval): { rules: string[]; label: string }[] {
  const choices: { rules: string[]; label: string }[] = [];
  if (approval.suggested_rules.length > 0) choices.push({ rules: approval.suggested_rules, label: "Exactly this call" });
  for (const rule of approval.argument_rules ?? []) {
    const inner = rule.slice(approval.tool_name.length + 1, -1);
    const at = inner.indexOf(":");
    const label = at < 0 ? rule : `Any call with ${inner.slice(0, at)} = ${inner.slice(at + 1)}`;
    choices.push({ rules: [rule], label });
  }
  return choices;
}
