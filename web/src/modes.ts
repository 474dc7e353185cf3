// The mode list, shared by the views that offer or show a mode (new session form, session
// header, schedules, workflows). Loaded once and reloaded after the Modes page saves.

import { useEffect, useSyncExternalStore } from "react";
import { api } from "./api";
import type { Mode } from "./types";

let modes: Mode[] | null = null;
let loading: Promise<void> | null = null;
const listeners = new Set<() => void>();

function set(next: Mode[]): void {
  modes = next;
  listeners.forEach((listener) => listener());
}

/** Fetch the list again (after a save or delete on the Modes page). */
export function reloadModes(): Promise<void> {
  loading = api
    .modes()
    .then(set)
    .catch(() => undefined)
    .finally(() => {
      loading = null;
    });
  return loading;
}

/** Put a list the caller already fetched into the cache. */
export function setModes(next: Mode[]): void {
  set(next);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Every mode, or null until the first load answers. */
export function useModes(): Mode[] | null {
  const current = useSyncExternalStore(subscribe, () => modes);
  useEffect(() => {
    if (modes === null && loading === null) void reloadModes();
  }, []);
  return current;
}

/** "🗺️ plan", or just the name when the mode has no icon (or is unknown). */
export function modeLabel(name: string, list: Mode[] | null): string {
  const icon = list?.find((m) => m.name === name)?.icon;
  return icon ? `${icon} ${name}` : name;
}
