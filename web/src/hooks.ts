import { useEffect, useRef, useState } from "react";

/** The current time, re-read every `intervalMs` while `active`. */
export function useNow(active = true, intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(timer);
  }, [active, intervalMs]);
  return now;
}

/** True while focus is somewhere a key press is text, not a command. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag === "INPUT") {
    const type = (target as HTMLInputElement).type;
    return !["button", "submit", "reset", "checkbox", "radio", "range", "color", "file"].includes(type);
  }
  return false;
}

/** Keys that close whatever is open. They never decide anything (issue 12: Esc used to deny). */
const CLOSING_KEYS: ReadonlySet<string> = new Set(["Escape", "Esc"]);

/** What a card (tool approval or gate) does with the keyboard while it is the focused card. */
export interface CardKeys {
  /** Closes whatever the card has open (a panel, the raw JSON); false when nothing was open. */
  close: () => boolean;
  /** The decision or panel a key stands for, or null. Never asked about a closing key. */
  shortcut: (key: string, onControl: boolean) => (() => void) | null;
  /** A decision is on its way: shortcut keys are swallowed and do nothing. */
  busy: boolean;
}

/**
 * A card's keyboard shortcuts, live while `active`, ignored while the focus is in a text field.
 * A closing key (Esc) only ever closes: it is handled before, and apart from, the shortcuts, so
 * no card can map it to a decision.
 */
export function useCardKeys(active: boolean, keys: CardKeys): void {
  const latest = useRef(keys);
  latest.current = keys;
  useEffect(() => {
    if (!active) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      // Text fields keep their keys; the card's own fields close their panel themselves.
      if (isTypingTarget(event.target)) return;
      if (CLOSING_KEYS.has(event.key)) {
        if (latest.current.close()) event.preventDefault();
        return;
      }
      // A held key must not run through the queue: one press, one decision.
      if (event.repeat) return;
      const onControl = Boolean((event.target as HTMLElement | null)?.closest("button, a, summary, [role=button]"));
      const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
      const act = latest.current.shortcut(key, onControl);
      if (!act) return;
      event.preventDefault();
      if (!latest.current.busy) act();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [active]);
}
