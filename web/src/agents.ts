// Named agents (issue 19): the list every view that offers or shows an agent shares (new-session
// form, sidebar, Agents page), loaded once and reloaded after the Agents page saves.

import { useEffect, useSyncExternalStore } from "react";
import { request } from "./api";
import type { Schemas, Sent } from "./types";

export type AgentRules = Sent<Schemas["PermissionsConfig"]>;

/** GET /api/agents: an agent's settings and the workspace they resolve to. */
export type Agent = Sent<Schemas["AgentView"]>;

/** POST/PUT /api/agents: what an admin writes to `agents:` in the config file. */
export type AgentWrite = Schemas["AgentConfig"];

export const agentsApi = {
  list: () => request<Agent[]>("GET", "/api/agents"),
  create: (body: AgentWrite) => request<Agent>("POST", "/api/agents", body),
  update: (body: AgentWrite) => request<Agent>("PUT", `/api/agents/${encodeURIComponent(body.id)}`, body),
};

let agents: Agent[] | null = null;
let loading: Promise<void> | null = null;
const listeners = new Set<() => void>();

/** Fetch the list again (after a save on the Agents page). */
export function reloadAgents(): Promise<void> {
  loading = agentsApi
    .list()
    .then((next) => {
      agents = next;
      listeners.forEach((listener) => listener());
    })
    .catch(() => undefined)
    .finally(() => {
      loading = null;
    });
  return loading;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Every agent (main first), or null until the first load answers. */
export function useAgents(): Agent[] | null {
  const current = useSyncExternalStore(subscribe, () => agents);
  useEffect(() => {
    if (agents === null && loading === null) void reloadAgents();
  }, []);
  return current;
}
