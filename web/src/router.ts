// Hash routes, so the server needs no fallback for client-side paths:
// `#/` the inbox, `#/s/<id>` a session, `#/settings`, `#/schedules`, `#/modes[/<name>]`,
// `#/skills[/<name>]`, `#/workflows`, `#/servers`, `#/agents`.

import { useSyncExternalStore } from "react";

export type Route =
  | { name: "inbox" }
  | { name: "session"; id: string }
  | { name: "settings" }
  | { name: "schedules" }
  | { name: "modes"; item: string | null }
  | { name: "skills"; item: string | null }
  | { name: "workflows" }
  | { name: "servers" }
  | { name: "agents" };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/";
  const session = /^\/s\/([^/?#]+)/.exec(path);
  if (session) return { name: "session", id: decodeURIComponent(session[1]) };
  if (path.startsWith("/settings")) return { name: "settings" };
  if (path.startsWith("/schedules")) return { name: "schedules" };
  if (path.startsWith("/workflows")) return { name: "workflows" };
  if (path.startsWith("/servers")) return { name: "servers" };
  if (path.startsWith("/agents")) return { name: "agents" };
  const library = /^\/(modes|skills)(?:\/([^/?#]+))?/.exec(path);
  if (library) {
    const item = library[2] ? decodeURIComponent(library[2]) : null;
    return library[1] === "modes" ? { name: "modes", item } : { name: "skills", item };
  }
  return { name: "inbox" };
}

function subscribe(listener: () => void): () => void {
  window.addEventListener("hashchange", listener);
  return () => window.removeEventListener("hashchange", listener);
}

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseRoute(hash);
}

export function sessionHref(id: string): string {
  return `#/s/${encodeURIComponent(id)}`;
}

export function navigate(href: string): void {
  if (window.location.hash !== href) window.location.hash = href;
}
