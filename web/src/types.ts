// The API's wire shapes (backend/domain/models.py and backend/api/), as the dashboard reads them.

export type SessionStatus = "idle" | "running" | "waiting_approval" | "completed" | "stopped" | "error";
/** Why the last run ended short of its work (backend `StopReason`). */
export type StopReason = "denied" | "timed_out" | "budget";

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface Session {
  id: string;
  title: string;
  status: SessionStatus;
  mode: string;
  model: string;
  engine: string;
  workspace: string;
  /** The named agent it belongs to (issue 19); "main" when there is only one. */
  agent_id?: string;
  parent_id: string | null;
  origin?: "user" | "api" | "cron" | "agent" | "workflow" | "mcp";
  workflow_run_id?: string | null;
  instructions?: string;
  error: string | null;
  stop_reason?: StopReason | null;
  usage: Usage;
  session_rules: string[];
  /** Who created it through the API: its owner, who (with admins) may rename, archive and auto-approve it. */
  created_by?: Decider | null;
  archived?: boolean;
  /** Set while auto-approve is on: who turned it on, and since when. */
  auto_approve?: { by: Decider; since: string } | null;
  created_at: string;
  updated_at: string;
}

/** Who made a decision (or turned a switch on), and through which door. */
export interface Decider {
  name: string;
  kind: string;
  role?: string | null;
  via: string;
}

/** PATCH /api/sessions/{id}: what to change. */
export interface SessionEdit {
  title?: string;
  archived?: boolean;
  auto_approve?: boolean;
  approve_pending?: boolean;
}

export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type AttachmentKind = "file" | "directory" | "skill" | "image";

/** Something given along with a message (a file, a folder listing, a skill, an image). */
export interface Attachment {
  kind: AttachmentKind;
  name: string;
  text: string;
  data?: string | null;
  mime_type?: string | null;
}

/** An image or audio clip a tool returned, kept as a file of the session's media folder. */
export interface MediaFile {
  kind: "image" | "audio";
  name: string;
  mime_type: string;
  size: number;
}

export interface Message {
  idx: number;
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  tool_calls: ToolCallRequest[];
  tool_call_id: string | null;
  is_error: boolean;
  attachments?: Attachment[];
  media?: MediaFile[];
  /** An assistant message's reasoning, shown collapsed above it (never sent back to the model). */
  thinking?: string;
  created_at: string;
}

export type ToolCallStatus =
  | "pending"
  | "waiting_approval"
  | "running"
  | "done"
  | "error"
  | "denied"
  | "interrupted"
  | "stopped";

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  status: ToolCallStatus;
  decision: string | null;
  result: string | null;
  is_error: boolean;
  media?: MediaFile[];
  started_at: string | null;
  finished_at: string | null;
  /** The running tool's latest progress report (live only: progress events are not stored). */
  progress?: ToolProgress | null;
}

export interface ToolProgress {
  progress: number;
  total: number | null;
  message: string | null;
}

export interface SessionDetail extends Session {
  messages: Message[];
  tool_calls: ToolCall[];
  last_seq: number;
}

export interface ToolAnnotations {
  title?: string | null;
  readOnlyHint?: boolean | null;
  destructiveHint?: boolean | null;
  idempotentHint?: boolean | null;
  openWorldHint?: boolean | null;
}

export type DecisionKind = "allow_once" | "allow_session" | "allow_always" | "deny" | "cancel";
export type DecidedBy = "rule" | "policy" | "user" | "timeout" | "hook" | "stop";
export type ApprovalStatus = "pending" | "allowed" | "denied" | "expired" | "cancelled";

export interface Decision {
  kind: DecisionKind;
  message?: string | null;
  updated_arguments?: Record<string, unknown> | null;
  rules?: string[] | null;
}

/** What an approval gates: a tool call, a plan's switch to its next mode, a workflow's next step,
 * a server's question to the person (MCP elicitation), or its request to run the model (MCP sampling). */
export type ApprovalKind = "tool" | "mode_switch" | "workflow_step" | "elicitation" | "sampling" | "network" | "unconfined";

export interface Approval {
  id: string;
  session_id: string;
  kind?: ApprovalKind;
  tool_call_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  annotations: ToolAnnotations;
  reason: string;
  suggested_rules: string[];
  status: ApprovalStatus;
  created_at: string;
  expires_at: string;
  decision: Decision | DecisionKind | null;
  decided_by: DecidedBy | null;
}

/** The body of POST /api/approvals/{id}. */
export interface DecisionBody {
  decision: DecisionKind;
  message?: string;
  updated_arguments?: Record<string, unknown>;
  rules?: string[];
}

export type Policy = "always_allow" | "ask" | "deny";

export interface ServerTool {
  name: string;
  description: string;
  annotations: ToolAnnotations;
  policy: Policy | null;
  /** What a call no rule matches gets: the policy set, else the default. */
  effective_policy?: Policy;
}

export type ServerState = "starting" | "ready" | "error" | "stopped";

export interface ServerInfo {
  name: string;
  state: ServerState;
  error: string | null;
  tools: ServerTool[];
  restarts: number;
  last_restart: string | null;
  type?: "stdio" | "http" | "sse";
  url?: string | null;
  last_http_error?: string | null;
  builtin?: boolean;
  enabled?: boolean;
  /** A person's server from the config file: admins may edit, disable and remove it. */
  editable?: boolean;
  /** What confines it, in a sentence (the shell's sandbox, a `sandbox:` entry, or nothing). */
  confinement?: string;
}

/** A server as an `mcpServers` entry of the config file (literal env/header values hidden). */
export type ServerEntry = Record<string, unknown>;

/** What the WebSocket sends to a client that asked for servers: all of them, after any change. */
export interface ServersChanged {
  type: "servers.changed";
  changed: string[];
  servers: ServerInfo[];
}

export interface Permissions {
  allow: string[];
  ask: string[];
  deny: string[];
}

export interface AuditItem {
  id: number;
  session_id: string;
  tool_call_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  decision: "allow" | "deny";
  decided_by: DecidedBy;
  decider?: Decider;
  detail: string;
  latency_ms: number;
  created_at: string;
}

export interface AuditPage {
  items: AuditItem[];
  limit: number;
  offset: number;
  /** The title of each session the rows name ("" once deleted). */
  sessions?: Record<string, string>;
}

export type ScheduleKind = "cron" | "every" | "once";
export type ScheduleStatus = "active" | "paused" | "done";
export type ScheduleRunStatus = "running" | "completed" | "stopped" | "error" | "skipped" | "missed";

/** A cron job (backend/domain/schedules.py); times are UTC ISO strings. */
export interface Schedule {
  id: string;
  name: string;
  schedule: string;
  kind: ScheduleKind;
  timezone: string;
  prompt: string;
  mode: string;
  session_id: string | null;
  workspace: string | null;
  status: ScheduleStatus;
  next_run_at: string | null;
  last_run_at: string | null;
  last_session_id: string | null;
  last_status: ScheduleRunStatus | null;
  last_result: string | null;
  run_count: number;
  created_by_session: string | null;
  created_at: string;
  updated_at: string;
}

/** The body of POST /api/schedules. */
export interface ScheduleCreateBody {
  schedule: string;
  prompt: string;
  name?: string;
  mode?: string;
  timezone?: string;
  session_id?: string;
}

export interface Me {
  name: string;
  role: string;
  kind: string;
}

/** One event as the WebSocket delivers it. */
export interface LiveEvent {
  session_id: string;
  seq: number;
  part: number;
  ephemeral: boolean;
  type: string;
  data: Record<string, unknown>;
  created_at: string;
}

// ---- modes, skills, workflows (backend/modes, backend/skills, backend/workflows) ----

export interface Mode {
  name: string;
  description: string;
  /** "all", or patterns: a tool, a server, a glob, or the keyword "read-only". */
  tools: "all" | string[];
  policies: Record<string, Policy>;
  default_folder: string | null;
  next_mode: string | null;
  icon: string | null;
  prompt: string;
  source: "builtin" | "user";
  overrides_builtin: boolean;
}

/** The body of PUT /api/modes/{name}. */
export type ModeWrite = Omit<Mode, "name" | "source" | "overrides_builtin">;

export interface ModeRemoved {
  removed: "user" | "override";
  mode: Mode | null;
}

export type SkillSource = "workspace" | "user" | "builtin";

export interface Skill {
  name: string;
  description: string;
  always: boolean;
  requires: { bins: string[]; env: string[] };
  source: SkillSource;
  path: string;
  folder: string;
  body: string;
  content?: string;
  available: boolean;
  missing: string[];
  error: string | null;
  shadows: SkillSource[];
  status?: string;
}

export interface WorkflowStep {
  mode: string;
  prompt: string;
  approve: boolean;
}

export interface Workflow {
  name: string;
  description: string;
  steps: WorkflowStep[];
  source: "builtin" | "user";
  path?: string;
}

export type WorkflowRunStatus = "running" | "waiting_approval" | "completed" | "failed" | "denied" | "stopped";
export type StepRunStatus = "pending" | "running" | "completed" | "error" | "stopped" | "denied";

export interface StepRun {
  index: number;
  mode: string;
  template: string;
  approve: boolean;
  status: StepRunStatus;
  prompt: string | null;
  session_id: string | null;
  output: string | null;
  error: string | null;
  approval_id: string | null;
  prompt_edited: boolean;
  started_at: string | null;
  finished_at: string | null;
}

export interface WorkflowRun {
  id: string;
  workflow: string;
  description: string;
  input: string;
  workspace: string | null;
  status: WorkflowRunStatus;
  /** Index of the step running or waiting at its gate; the last step once the run ended. */
  current: number;
  steps: StepRun[];
  detail: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** Extras a message (or a new session's first prompt) may carry. */
export interface MessageExtras {
  attached_skills?: string[];
  context_paths?: string[];
  images?: { name: string; data: string; mime_type: string }[];
}

/** What POST /api/sessions/{id}/messages answers: a sent message (idx) or a command's effect. */
export interface ChatResult {
  idx: number | null;
  command: string | null;
  detail: string;
  attached_skills: string[];
}

/** `GET /api/health`: what the shell's sandbox is (a `warning` when commands run unconfined). */
export interface Health {
  status: string;
  version: string;
  sandbox?: { backend: string; confined: boolean; detail: string; warning: string | null };
}
