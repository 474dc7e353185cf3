// The session's standing rules (what runs without asking) and the live state of the MCP servers,
// for the strip above the composer and the cold-start progress.

import { useEffect, useState } from "react";
import { request } from "./api";
import { live } from "./live";
import { useAppState } from "./store";
import type { Schemas, Sent, ServerInfo } from "./types";

export type StandingRules = Sent<Schemas["StandingRules"]>;

export const standingApi = {
  get: (id: string) => request<StandingRules>("GET", `/api/sessions/${encodeURIComponent(id)}/standing-rules`),
};

/** Every MCP server as the WebSocket last said (`servers.changed`), or null before it has. */
export function useServers(): ServerInfo[] | null {
  const [servers, setServers] = useState<ServerInfo[] | null>(null);
  useEffect(() => live.onServers((message) => setServers(message.servers)), []);
  return servers;
}

/** The standing rules of a session, read again when its mode or the servers' tools change, and
 * after every reconnect of the live connection (what was read before may be stale). */
export function useStandingRules(sessionId: string, mode: string, toolCount: number): StandingRules | null {
  const [rules, setRules] = useState<StandingRules | null>(null);
  const { liveEpoch } = useAppState();
  useEffect(() => {
    let cancelled = false;
    standingApi
      .get(sessionId)
      .then((found) => !cancelled && setRules(found))
      .catch(() => !cancelled && setRules(null));
    return () => {
      cancelled = true;
    };
  }, [sessionId, mode, toolCount, liveEpoch]);
  return rules;
}
