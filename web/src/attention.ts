// Getting the person's attention while something waits: the tab title, the favicon dot and a
// browser notification per approval (only while the tab is hidden, tag = approval id, closed as
// soon as the approval is resolved anywhere).

import { approvalTitle } from "./format";
import { navigate } from "./router";
import { getState, requestFocus, subscribe } from "./store";

const BASE_TITLE = "Overseer";
const shown = new Map<string, Notification>();
const notified = new Set<string>();

function favicon(dot: boolean): string {
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">` +
    `<rect x="3" y="3" width="26" height="26" rx="7" fill="#1f2937"/>` +
    `<path d="M10 16.5l4 4 8-9" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round" stroke-linejoin="round"/>` +
    (dot ? `<circle cx="25" cy="7" r="6.5" fill="#f59e0b" stroke="#fff" stroke-width="1.5"/>` : "") +
    `</svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

function setFavicon(dot: boolean): void {
  const link = document.getElementById("favicon") as HTMLLinkElement | null;
  if (link) link.href = favicon(dot);
}

function canNotify(): boolean {
  return typeof Notification !== "undefined" && Notification.permission === "granted";
}

function update(): void {
  const { pending, auth } = getState();
  const ids = Object.keys(pending);
  const count = auth === "ok" ? ids.length : 0;
  document.title = count > 0 ? `(${count}) ● ${BASE_TITLE}` : BASE_TITLE;
  setFavicon(count > 0);

  for (const [id, notification] of shown) {
    if (!pending[id]) {
      notification.close();
      shown.delete(id);
    }
  }
  if (!document.hidden) {
    // Seen on screen: leaving the tab later must not announce these as new.
    ids.forEach((id) => notified.add(id));
    return;
  }
  if (!canNotify()) return;
  for (const approval of Object.values(pending)) {
    if (notified.has(approval.id)) continue;
    notified.add(approval.id);
    const title = approvalTitle(approval);
    const session = getState().sessions[approval.session_id];
    const notification = new Notification(`Approval needed: ${title}`, {
      tag: approval.id,
      body: session?.title ? `In “${session.title}”` : "A tool call is waiting for your decision.",
    });
    notification.onclick = () => {
      window.focus();
      requestFocus(approval.id);
      navigate("#/");
      notification.close();
    };
    shown.set(approval.id, notification);
  }
}

export function startAttention(): void {
  subscribe(update);
  document.addEventListener("visibilitychange", update);
  update();
}

/** Ask for notification permission; browsers require a click for it. */
export async function enableNotifications(): Promise<NotificationPermission> {
  if (typeof Notification === "undefined") return "denied";
  const permission = await Notification.requestPermission();
  update();
  return permission;
}
