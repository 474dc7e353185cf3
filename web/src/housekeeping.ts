// Session housekeeping: who may change a session, and a person's edits of it (rename, archive,
// auto-approve), sent to PATCH /api/sessions/{id}. The server checks the same rule; this one only
// decides what the dashboard offers.

import { api } from "./api";
import { upsertSession } from "./store";
import type { Me, Session, SessionEdit } from "./types";

/** Admins manage every session; an approver the sessions they created. */
export function canManage(me: Me | null, session: Session): boolean {
  if (!me) return false;
  if (me.role === "admin") return true;
  const owner = session.created_by;
  return me.role === "approver" && !!owner && owner.name === me.name && owner.kind === me.kind;
}

/** An active session is never hidden: it may still need someone to look. */
export function isActive(session: Session): boolean {
  return session.status === "running" || session.status === "waiting_approval";
}

/** Send an edit; the session as the server now has it replaces ours (other tabs hear the event). */
export async function editSession(id: string, body: SessionEdit): Promise<Session> {
  const session = await api.editSession(id, body);
  upsertSession(session);
  return session;
}
