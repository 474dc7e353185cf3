// How a session's last run ended short (a person denied its last step, an approval timed out, a
// budget), and Retry: the calls a person refused, and asking one again.

import { useEffect, useState } from "react";
import { request } from "./api";
import type { Session, StopReason } from "./types";
import "./outcome.css";

export const stepsApi = {
  /** The session's calls a person denied or let time out: the ones Retry can ask again. */
  refusedCalls: (id: string) =>
    request<Record<string, StopReason>>("GET", `/api/sessions/${encodeURIComponent(id)}/refused-calls`),
  /** Propose a refused call again: the session runs and the call asks for approval again. */
  retry: (id: string, callId: string) =>
    request<Session>("POST", `/api/sessions/${encodeURIComponent(id)}/tool-calls/${encodeURIComponent(callId)}/retry`),
};

const SHORT: Record<StopReason, string> = { denied: "denied", timed_out: "timed out", budget: "budget reached" };

/** "Stopped: denied" for a session that ended short of its work; null for one that did not. */
export function stoppedShort(session: Session): string | null {
  const ended = session.status === "completed" || session.status === "stopped";
  return ended && session.stop_reason ? `Stopped: ${SHORT[session.stop_reason]}` : null;
}

/** One sentence on why the session stopped and what the person can do. */
export function stopNote(session: Session): string | null {
  if (!stoppedShort(session)) return null;
  switch (session.stop_reason) {
    case "denied":
      return "Stopped at a step you denied. Retry it from its card, or tell the agent what to do instead.";
    case "timed_out":
      return "Stopped at a step nobody answered in time. Retry it from its card, or send a message.";
    case "budget":
      return session.error ?? "Stopped: the spending budget was reached.";
    default:
      return null;
  }
}

/** The session's refused calls (id -> reason), read again whenever the session settles. */
export function useRefusedCalls(session: Session | undefined, deniedCount: number): Record<string, StopReason> {
  const [refused, setRefused] = useState<Record<string, StopReason>>({});
  const id = session?.id;
  const status = session?.status;
  useEffect(() => {
    if (!id || deniedCount === 0 || status === "running" || status === "waiting_approval") {
      setRefused({});
      return;
    }
    let cancelled = false;
    stepsApi
      .refusedCalls(id)
      .then((found) => !cancelled && setRefused(found))
      .catch(() => !cancelled && setRefused({}));
    return () => {
      cancelled = true;
    };
  }, [id, status, deniedCount]);
  return refused;
}
