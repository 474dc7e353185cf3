// The API's wire shapes, named. Each comes from the OpenAPI document (api.gen.ts, generated from
// the FastAPI app: `npm run types`; `make test` fails while it is stale) wherever the document has
// the shape. Hand-written below, each saying why: what the document cannot describe (WebSocket
// messages, live-only fields) and the few routes that answer an untyped dict.

import type { components } from "./api.gen";

/** Every schema of the OpenAPI document, by name. */
export type Schemas = components["schemas"];

/**
 * A body as the server sends it. The document marks a field with a default as optional, since a
 * request may leave it out; a response (or an event) carries every field: pydantic writes them all.
 */
export type Sent<T> = T extends readonly (infer Item)[]
  ? Sent<Item>[]
  : T extends object
    ? { [K in keyof T]-?: Sent<Exclude<T[K], undefined>> }
    : T;

// ---- sessions ----

export type Session = Sent<Schemas["Session"]>;
export type SessionStatus = Session["status"];
/** Why the last run ended short of its work (backend `StopReason`). */
export type StopReason = NonNullable<Session["stop_reason"]>;
export type Usage = Sent<Schemas["Usage"]>;
/** Who made a decision (or turned a switch on), and through which door. */
export type Decider = Sent<Schemas["Decider"]>;
/** PATCH /api/sessions/{id}: what to change. */
export type SessionEdit = Schemas["EditSession"];

export type ToolCallRequest = Sent<Schemas["ToolCallRequest"]>;
/** Something given along with a message (a file, a folder listing, a skill, an image). */
export type Attachment = Sent<Schemas["Attachment"]>;
export type AttachmentKind = Attachment["kind"];
/** An image or audio clip a tool returned, kept as a file of the session's media folder. */
export type MediaFile = Sent<Schemas["MediaFile"]>;
export type Message = Sent<Schemas["Message"]>;

/** Live only (from `tool.progress` events, which are not stored): a running tool's latest report. */
export interface ToolProgress {
  progress: number;
  total: number | null;
  message: string | null;
}

export type ToolCall = Sent<Schemas["ToolCallRecord"]> & {
  /** The running tool's latest progress report (live only: progress events are not stored). */
  progress?: ToolProgress | null;
};
export type ToolCallStatus = ToolCall["status"];

export type SessionDetail = Omit<Sent<Schemas["SessionDetail"]>, "tool_calls"> & { tool_calls: ToolCall[] };

/** Extras a message (or a new session's first prompt) may carry. */
export type MessageExtras = Omit<Schemas["SendMessage"], "content">;
/** POST /api/sessions. */
export type CreateSessionBody = Schemas["CreateSession"];
/** What POST /api/sessions/{id}/messages answers: a sent message (idx) or a command's effect. */
export type ChatResult = Sent<Schemas["ChatResult"]>;

/** One stored event, as GET /api/sessions/{id}/events and the WebSocket deliver it. */
export type LiveEvent = Sent<Schemas["Event"]>;

// ---- checkpoints and rewind (issue 32) ----

/** One file a step changed (or a rewind would change), read from the shadow repository. */
export type CheckpointFile = Sent<Schemas["CheckpointFile"]>;
/** A step that changed (or may have changed) the workspace, with the files it changed: a tool
 * call's (`kind` "step") or a rewind's own (`kind` "rewind", `by` who asked). */
export type StepChanges = Sent<Schemas["StepChanges"]>;
/** POST /api/sessions/{id}/rewind. */
export type RewindBody = Schemas["RewindBody"];
export type RewindResult = Sent<Schemas["RewindResult"]>;
/** GET /api/settings/checkpoints (an admin's): the disk checkpoints take, and their retention. */
export type CheckpointUsage = Sent<Schemas["CheckpointUsage"]>;

// ---- approvals ----

/** The server's hints about a tool (all optional: a parameter accepts any source of them). */
export type ToolAnnotations = Schemas["ToolAnnotations"];
export type Decision = Schemas["Decision"];
export type DecisionKind = Decision["kind"];
/** `decision` as sent, or as the dashboard writes it down before the server's word arrives (a local
 * timeout, a 409), with only its kind. */
export type Approval = Omit<Sent<Schemas["Approval"]>, "decision"> & { decision: Decision | null };
/** What an approval gates: a tool call, a plan's switch to its next mode, a workflow's next step,
 * a server's question to the person (MCP elicitation), or its request to run the model (MCP sampling). */
export type ApprovalKind = Approval["kind"];
export type ApprovalStatus = Approval["status"];
export type DecidedBy = NonNullable<Approval["decided_by"]>;
/** The body of POST /api/approvals/{id}. */
export type DecisionBody = Schemas["AnswerApproval"];

// ---- servers, policies, permissions ----

export type Policy = NonNullable<Schemas["ToolView"]["effective_policy"]>;

/** A server's tool. The route types `annotations` as a plain object; they are a ToolAnnotations. */
/** How a tool's definition differs from the one pinned (issue 34): on a tool and on its calls' approvals. */
export type ToolChange = Sent<Schemas["ToolChange"]>;
export type ServerTool = Omit<Sent<Schemas["ToolView"]>, "annotations"> & { annotations: ToolAnnotations };

export type ServerInfo = Omit<Sent<Schemas["ServerView"]>, "tools"> & { tools: ServerTool[] };
export type ServerState = ServerInfo["state"];
/** A server as an `mcpServers` entry of the config file (literal env/header values hidden). */
export type ServerEntry = Schemas["ServerEntryView"]["entry"];
export type ServerEntryView = Sent<Schemas["ServerEntryView"]>;
export type ServerLog = Sent<Schemas["ServerLogView"]>;

/** WebSocket only (the document describes REST): all servers, sent after any change to one. */
export interface ServersChanged {
  type: "servers.changed";
  changed: string[];
  servers: ServerInfo[];
}

export type Permissions = Sent<Schemas["PermissionsConfig"]>;
export type Policies = Sent<Schemas["PoliciesBody"]>;

/** Hand-written: GET /api/audit declares `items: list[Any]` (backend/api/schemas.py `AuditPage`). */
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

/** Hand-written: GET /api/audit documents its page inline, with rows of any shape (see AuditItem). */
export interface AuditPage {
  items: AuditItem[];
  limit: number;
  offset: number;
  /** The title of each session the rows name ("" once deleted). */
  sessions?: Record<string, string>;
}

// ---- schedules ----

/** A cron job (backend/domain/schedules.py); times are UTC ISO strings. */
export type Schedule = Sent<Schemas["Schedule"]>;
export type ScheduleKind = Schedule["kind"];
export type ScheduleStatus = Schedule["status"];
export type ScheduleRunStatus = NonNullable<Schedule["last_status"]>;
/** The body of POST /api/schedules. */
export type ScheduleCreateBody = Schemas["ScheduleCreate"];

// ---- the person, the host ----

/** Hand-written: GET /api/me answers an untyped `dict[str, str]`. */
export interface Me {
  name: string;
  role: string;
  kind: string;
}

/** Hand-written: GET /api/health answers an untyped dict. What the shell's sandbox is (a `warning`
 * when commands run unconfined). */
export interface Health {
  status: string;
  /** What the login page asks for: the access token alone (single-user) or a username and password. */
  sign_in?: "token" | "password";
  version: string;
  sandbox?: { backend: string; confined: boolean; detail: string; warning: string | null };
}

// ---- modes, skills, workflows (backend/modes, backend/skills, backend/workflows) ----

export type Mode = Sent<Schemas["Mode"]>;
export type WorkspaceChoice = Sent<Schemas["WorkspaceChoice"]>;
/** The body of PUT /api/modes/{name}. */
export type ModeWrite = Schemas["ModeWrite"];
export type ModeRemoved = Sent<Schemas["ModeRemoved"]>;

export type Skill = Sent<Schemas["Skill"]>;
export type SkillSource = Skill["source"];

export type WorkflowStep = Sent<Schemas["WorkflowStep"]>;
export type Workflow = Sent<Schemas["Workflow"]>;
export type StepRun = Sent<Schemas["StepRun"]>;
export type StepRunStatus = StepRun["status"];
export type WorkflowRun = Sent<Schemas["WorkflowRun"]>;
export type WorkflowRunStatus = WorkflowRun["status"];
