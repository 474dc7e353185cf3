// The REST client. Auth rides on the HttpOnly `overseer_session` cookie the server sets at login,
// so no token ever lives in JavaScript; a 401 anywhere switches the app to its login form.

import type {
  Health,
  Approval,
  AuditPage,
  ChatResult,
  CreateSessionBody,
  LiveEvent,
  MessageExtras,
  Mode,
  WorkspaceChoice,
  ModeRemoved,
  ModeWrite,
  Skill,
  Workflow,
  WorkflowRun,
  DecisionBody,
  Me,
  Permissions,
  Policies,
  Policy,
  Schedule,
  ScheduleCreateBody,
  ServerEntry,
  ServerEntryView,
  ServerInfo,
  ServerLog,
  RewindBody,
  RewindResult,
  Session,
  SessionDetail,
  SessionEdit,
  CheckpointFile,
  CheckpointUsage,
  StepChanges,
} from "./types";
import type { ModelSettings, ModelSettingsBody, ModelTest } from "./modelSettings";
import type { FileOnDisk } from "./fileOnDisk";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** An error a request (or anything) threw, in words for the page. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called whenever a request comes back 401 (or the WebSocket closes with 4001). */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function reportUnauthorized(): void {
  unauthorizedListeners.forEach((listener) => listener());
}

/** A readable message from an error body: FastAPI's `detail` as a string or a validation list. */
function detailOf(body: unknown, fallback: string): string {
  if (body && typeof body === "object" && "detail" in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) {
      return detail
        .map((d) => (d && typeof d === "object" && "msg" in d ? String((d as { msg: unknown }).msg) : String(d)))
        .join("; ");
    }
  }
  return fallback;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: body === undefined ? { Accept: "application/json" } : { "Content-Type": "application/json", Accept: "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401 && path !== "/api/auth/login") reportUnauthorized();
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    throw new ApiError(response.status, detailOf(parsed, `${response.status} ${response.statusText}`.trim()));
  }
  return parsed as T;
}

/** How `retryingNetwork` retries: 4 attempts, 0.3 s before the second, doubling after. */
export const NETWORK_RETRY = { attempts: 4, firstDelayMs: 300 };

/** `send()`, sent again when the network failed it (fetch's TypeError: a dropped connection, a
 * response lost on the way), a bounded number of times with a growing pause; an HTTP error (an
 * ApiError) is the server's answer and is never retried. Only for requests safe to repeat: an
 * answer to an approval is (the same answer again gets the approval as decided). */
export async function retryingNetwork<T>(send: () => Promise<T>, retry = NETWORK_RETRY): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof TypeError) || attempt >= retry.attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, retry.firstDelayMs * 2 ** (attempt - 1)));
    }
  }
}

export const api = {
  me: () => request<Me>("GET", "/api/me"),
  login: (username: string, password: string) =>
    request<{ token: string }>("POST", "/api/auth/login", { username, password }),
  logout: () => request<void>("POST", "/api/auth/logout"),

  sessions: () => request<Session[]>("GET", "/api/sessions"),
  session: (id: string) => request<SessionDetail>("GET", `/api/sessions/${encodeURIComponent(id)}`),
  createSession: (body: CreateSessionBody) => request<Session>("POST", "/api/sessions", body),
  deleteSession: (id: string) => request<void>("DELETE", `/api/sessions/${encodeURIComponent(id)}`),
  sendMessage: (id: string, content: string, extras: MessageExtras = {}) =>
    request<ChatResult>("POST", `/api/sessions/${encodeURIComponent(id)}/messages`, { content, ...extras }),
  sessionEvents: (id: string, since = 0, types?: string[]) =>
    request<LiveEvent[]>(
      "GET",
      `/api/sessions/${encodeURIComponent(id)}/events?since=${since}` +
        (types ? `&types=${encodeURIComponent(types.join(","))}` : ""),
    ),
  stopSession: (id: string) => request<Session>("POST", `/api/sessions/${encodeURIComponent(id)}/stop`),
  editSession: (id: string, body: SessionEdit) =>
    request<Session>("PATCH", `/api/sessions/${encodeURIComponent(id)}`, body),
  /** Sessions whose title or messages hold `q` (any case, taken literally). */
  searchSessions: (q: string) => request<Session[]>("GET", `/api/sessions?limit=200&q=${encodeURIComponent(q)}`),

  /** The session's steps that changed (or may have changed) the workspace, each with its files. */
  checkpoints: (id: string) => request<StepChanges[]>("GET", `/api/sessions/${encodeURIComponent(id)}/checkpoints`),
  /** What rewinding to before `step` would change: the files that differ from the workspace now. */
  checkpointDiff: (id: string, step: number) =>
    request<CheckpointFile[]>("GET", `/api/sessions/${encodeURIComponent(id)}/checkpoints/${step}/diff`),
  /** Restore the workspace (or `files` of it) to before `step`; 409 while the session runs a step. */
  rewind: (id: string, body: RewindBody) =>
    request<RewindResult>("POST", `/api/sessions/${encodeURIComponent(id)}/rewind`, body),

  pendingApprovals: () => request<Approval[]>("GET", "/api/approvals?status=pending"),
  approval: (id: string) => request<Approval>("GET", `/api/approvals/${encodeURIComponent(id)}`),
  fileOnDisk: (id: string) => request<FileOnDisk>("GET", `/api/approvals/${encodeURIComponent(id)}/file`),
  /** Sent again on a dropped connection: a lost response must not lose the answer (issue 31, item 12). */
  decide: (id: string, body: DecisionBody) =>
    retryingNetwork(() => request<Approval>("POST", `/api/approvals/${encodeURIComponent(id)}`, body)),

  servers: () => request<ServerInfo[]>("GET", "/api/servers"),
  serverLog: (name: string, lines = 100) =>
    request<ServerLog>("GET", `/api/servers/${encodeURIComponent(name)}/log?lines=${lines}`),
  serverEntry: (name: string) =>
    request<ServerEntryView>("GET", `/api/servers/${encodeURIComponent(name)}/config`),
  addServer: (name: string, entry: ServerEntry) => request<ServerInfo>("POST", "/api/servers", { name, entry }),
  updateServer: (name: string, entry: ServerEntry) =>
    request<ServerInfo>("PUT", `/api/servers/${encodeURIComponent(name)}`, { entry }),
  setServerEnabled: (name: string, enabled: boolean) =>
    request<ServerInfo>("POST", `/api/servers/${encodeURIComponent(name)}/${enabled ? "enable" : "disable"}`),
  restartServer: (name: string) => request<ServerInfo>("POST", `/api/servers/${encodeURIComponent(name)}/restart`),
  /** An admin accepts a changed tool's new definition (issue 34): its calls are decided by the rules again. */
  acceptToolDefinition: (server: string, tool: string) =>
    request<ServerInfo>("POST", `/api/servers/${encodeURIComponent(server)}/tools/${encodeURIComponent(tool)}/accept`),
  removeServer: (name: string) => request<void>("DELETE", `/api/servers/${encodeURIComponent(name)}`),
  setPolicies: (policies: Record<string, Policy>) =>
    request<Policies>("PUT", "/api/policies", { policies }),
  permissions: () => request<Permissions>("GET", "/api/permissions"),
  setPermissions: (permissions: Permissions) => request<Permissions>("PUT", "/api/permissions", permissions),
  audit: (limit: number, offset: number) => request<AuditPage>("GET", `/api/audit?limit=${limit}&offset=${offset}`),
  /** A filtered page; `query` is built by the audit view (see auditQuery in components/AuditLog.tsx). */
  auditPage: (query: URLSearchParams) => request<AuditPage>("GET", `/api/audit?${query}`),
  /** The disk checkpoints take, in all and per workspace (an admin's: it names the host's folders). */
  checkpointsUsage: () => request<CheckpointUsage>("GET", "/api/settings/checkpoints"),
  modelSettings: () => request<ModelSettings>("GET", "/api/settings/model"),
  health: () => request<Health>("GET", "/api/health"),
  saveModelSettings: (body: ModelSettingsBody) => request<ModelSettings>("PUT", "/api/settings/model", body),
  testModel: (body: ModelSettingsBody) => request<ModelTest>("POST", "/api/settings/model/test", body),

  schedules: () => request<Schedule[]>("GET", "/api/schedules"),
  createSchedule: (body: ScheduleCreateBody) => request<Schedule>("POST", "/api/schedules", body),
  pauseSchedule: (id: string) => request<Schedule>("POST", `/api/schedules/${encodeURIComponent(id)}/pause`),
  resumeSchedule: (id: string) => request<Schedule>("POST", `/api/schedules/${encodeURIComponent(id)}/resume`),
  deleteSchedule: (id: string) => request<void>("DELETE", `/api/schedules/${encodeURIComponent(id)}`),

  modes: () => request<Mode[]>("GET", "/api/modes"),
  /** The workspaces anyone may choose for a new session (an admin may also name a folder under one). */
  workspaces: () => request<WorkspaceChoice[]>("GET", "/api/workspaces"),
  saveMode: (name: string, body: ModeWrite) => request<Mode>("PUT", `/api/modes/${encodeURIComponent(name)}`, body),
  deleteMode: (name: string) => request<ModeRemoved>("DELETE", `/api/modes/${encodeURIComponent(name)}`),

  skills: (workspace?: string) =>
    request<Skill[]>("GET", workspace ? `/api/skills?workspace=${encodeURIComponent(workspace)}` : "/api/skills"),
  saveSkill: (name: string, content: string) =>
    request<Skill>("PUT", `/api/skills/${encodeURIComponent(name)}`, { content }),
  deleteSkill: (name: string) => request<void>("DELETE", `/api/skills/${encodeURIComponent(name)}`),

  workflows: () => request<Workflow[]>("GET", "/api/workflows"),
  startWorkflow: (name: string, input: string) =>
    request<WorkflowRun>("POST", `/api/workflows/${encodeURIComponent(name)}/runs`, { input }),
  workflowRuns: (limit = 50) => request<WorkflowRun[]>("GET", `/api/workflow-runs?limit=${limit}`),
  stopWorkflowRun: (id: string) => request<WorkflowRun>("POST", `/api/workflow-runs/${encodeURIComponent(id)}/stop`),
};
