// Small display helpers shared by the views.

import type { Approval, ApprovalStatus, DecidedBy, Decision, DecisionKind, SessionStatus } from "./types";

/** `mcp__shell__exec` -> { server: "shell", tool: "exec" }; other names have no server. */
export function splitToolName(name: string): { server: string | null; tool: string } {
  if (!name.startsWith("mcp__")) return { server: null, tool: name };
  const cut = name.indexOf("__", 5);
  if (cut <= 5 || cut + 2 >= name.length) return { server: null, tool: name };
  return { server: name.slice(5, cut), tool: name.slice(cut + 2) };
}

export function toolTitle(name: string, title?: string | null): string {
  return title?.trim() || name;
}

export function statusLabel(status: SessionStatus, waiting = 0): string {
  switch (status) {
    case "running":
      return "Running";
    case "waiting_approval":
      return `Waiting for you (${Math.max(waiting, 1)})`;
    case "completed":
      return "Done";
    case "stopped":
      return "Stopped";
    case "error":
      return "Error";
    case "idle":
      return "Idle";
  }
}

export function formatCost(usd: number): string {
  if (!usd) return "$0.00";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function formatTokens(n: number): string {
  return new Intl.NumberFormat("en").format(n || 0);
}

/** `9:41` for 581 s; `1:02:03` past an hour. */
export function formatClock(totalSeconds: number): string {
  const s = Math.max(0, Math.ceil(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = String(s % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return formatClock(ms / 1000);
}

export function formatAge(fromIso: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(fromIso)) / 1000));
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ago`;
  return new Date(fromIso).toLocaleDateString();
}

export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function decisionKind(decision: Approval["decision"]): DecisionKind | null {
  if (!decision) return null;
  return typeof decision === "string" ? decision : (decision as Decision).kind;
}

/** How a decided approval reads in its one-line row: "allowed once", "auto-approved" (the
 * session's switch, in its owner's name), "Timed out – denied", ... */
export function outcomeLabel(
  status: ApprovalStatus,
  decision: Approval["decision"],
  decidedBy: DecidedBy | null,
  decider: Approval["decider"] | null = null,
): string {
  if (decisionKind(decision) === "cancel") return "cancelled";
  if (status === "expired" || decidedBy === "timeout") return "Timed out – denied";
  if (status === "cancelled" || decidedBy === "stop") return "cancelled (session stopped)";
  const kind = decisionKind(decision);
  const message = decision && typeof decision === "object" ? decision.message : null;
  const edited = decision && typeof decision === "object" && decision.updated_arguments;
  if (decidedBy === "rule" && kind !== "deny") return "allowed by a new rule";
  if (decider?.via === "auto" && kind === "allow_once") return "auto-approved";
  switch (kind) {
    case "allow_once":
      return edited ? "allowed with edits" : "allowed once";
    case "allow_session":
      return "allowed for this session";
    case "allow_always":
      return "always allowed";
    case "deny":
      return message ? `denied: “${message}”` : "denied";
    default:
      return status === "allowed" ? "allowed" : status === "denied" ? "denied" : status;
  }
}

/** A one-line summary of a tool call's arguments for compact rows. */
export function argumentSummary(args: Record<string, unknown>): string {
  if (typeof args.command === "string") return args.command;
  if (typeof args.url === "string") return args.url;
  if (typeof args.path === "string") return args.path;
  const text = JSON.stringify(args);
  return text === "{}" ? "" : text;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Whether an approval is a gate between modes or workflow steps rather than a tool call. */
export function isGate(approval: Approval): boolean {
  return approval.kind === "mode_switch" || approval.kind === "workflow_step";
}

/** Whether an approval is a server's question (MCP elicitation), answered with a form. */
export function isElicitation(approval: Approval): boolean {
  return approval.kind === "elicitation";
}

/** Whether an approval is a server's request to run the model (MCP sampling), reviewed as a prompt. */
export function isSampling(approval: Approval): boolean {
  return approval.kind === "sampling";
}

/** A server's question's outcome in its own words: "answered", "declined", "cancelled". */
export function elicitationOutcome(outcome: string): string {
  if (outcome.startsWith("allowed")) return "answered";
  if (outcome.startsWith("denied")) return "declined";
  if (outcome.startsWith("Timed out")) return "Timed out – cancelled";
  return outcome.startsWith("cancelled") ? "cancelled" : outcome;
}

/** The question a card asks: a gate's decision about the work, or the tool's title. */
export function approvalTitle(approval: Approval): string {
  const args = approval.arguments ?? {};
  if (approval.kind === "mode_switch") return `Switch to ${String(args.mode ?? "the next")} mode and carry out this plan?`;
  if (approval.kind === "workflow_step") return `Start step ${String(args.step ?? "?")} of ${String(args.of ?? "?")} (${String(args.mode ?? "?")})?`;
  if (approval.kind === "elicitation") return `${String(args.server ?? "A server")} asks`;
  if (approval.kind === "sampling") return `${String(args.server ?? "A server")} asks to run the model`;
  if (approval.kind === "network") return `A command wants to connect to ${String(args.host ?? "?")}:${String(args.port ?? "?")}`;
  if (approval.kind === "unconfined") return "Run a command OUTSIDE the sandbox";
  return toolTitle(approval.tool_name, approval.annotations?.title);
}

/** A short name for a decided row: the tool, or what the gate was about. */
export function approvalSubject(approval: Approval): string {
  const args = approval.arguments ?? {};
  if (approval.kind === "mode_switch") return `plan → ${String(args.mode ?? "next")} mode`;
  if (approval.kind === "workflow_step") return `${String(args.workflow ?? "workflow")} step ${String(args.step ?? "?")}`;
  if (approval.kind === "elicitation") return `question from ${String(args.server ?? "a server")}`;
  if (approval.kind === "sampling") return `model run for ${String(args.server ?? "a server")}`;
  if (approval.kind === "network") return `network: ${String(args.host ?? "?")}:${String(args.port ?? "?")}`;
  if (approval.kind === "unconfined") return "command outside the sandbox";
  return toolTitle(approval.tool_name, approval.annotations?.title);
}

/** A gate's outcome in its own words: "approved", "approved with edits", not "allowed once". */
export function gateOutcome(outcome: string): string {
  if (outcome === "allowed with edits") return "approved with edits";
  if (outcome === "allowed once" || outcome === "allowed") return "approved";
  return outcome;
}

// What the built-in tools do, as the subject of a sentence ("Writing files asks ...").
const TOOL_GERUNDS: Record<string, string> = {
  mcp__file__read_file: "Reading files",
  mcp__file__write_file: "Writing files",
  mcp__file__edit_file: "Editing files",
  mcp__file__list_dir: "Listing folders",
  mcp__file__glob: "Finding files",
  mcp__file__grep: "Searching in files",
  mcp__shell__exec: "Running commands",
};

const POLICY_VERBS: Record<string, string> = { ask: "asks", deny: "is denied", always_allow: "runs without asking" };

/** Why a call asks, in words: "policy mcp__file__write_file = ask (config)" reads "Writing files
 * asks by default (policy in config)". Reasons naming a rule are kept: the rule is what to read. */
export function reasonInWords(reason: string, toolName: string, title?: string | null): string {
  const subject = TOOL_GERUNDS[toolName] ?? `“${toolTitle(toolName, title)}”`;
  const plan = /^(.*), but plan mode never auto-approves a write: ask$/.exec(reason);
  if (plan) return `Plan mode asks before any change, even one that is otherwise allowed (${reasonInWords(plan[1], toolName, title)})`;
  const policy = /^policy (\S+) = (ask|deny|always_allow) \(([^)]*)\)$/.exec(reason);
  if (policy) {
    const [, key, value, source] = policy;
    const server = splitToolName(toolName).server;
    const what = key === toolName ? subject : server && (key === server || key === `mcp__${server}__*`) ? `Tools of ${server}` : `Tools matching ${key}`;
    const where = source === "default" ? "built-in policy" : source.startsWith("mode:") ? `policy of ${source.slice(5)} mode` : `policy in ${source}`;
    return `${what} ${POLICY_VERBS[value]} by default (${where})`;
  }
  if (!reason || reason.startsWith("no rule or policy matched")) return `${subject} asks: no rule or policy allows it`;
  return reason;
}

/** A session's name for rows that point at it: its title, else its short id. */
export function sessionName(session: { id: string; title?: string | null } | undefined, id: string): string {
  return session?.title?.trim() || `Session ${id.slice(0, 8)}`;
}
