import {
  useCallback,
  useEffect,
  useRef,
  useState,
  type DependencyList,
  type Dispatch,
  type KeyboardEvent as ReactKeyboardEvent,
  type RefObject,
  type SetStateAction,
} from "react";
import { errorText } from "./api";
import { isOnScreen, reveal, revealDecision } from "./reveal";

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

/** What useLoad gives a page: what it loaded, the error, and a way to load again. */
export interface Loaded<T> {
  /** null until the first load answers. */
  data: T | null;
  /** The last load's error (what was shown stays); a load that succeeds clears it. */
  error: string | null;
  /** Load again: a Refresh button, a timer, after a change. */
  reload: () => void;
  /** Change what is shown without asking the server (a saved row, a live message). */
  setData: Dispatch<SetStateAction<T | null>>;
  /** For a page whose actions report in the same place as its load. */
  setError: Dispatch<SetStateAction<string | null>>;
}

/**
 * Load something from the API when the page opens and whenever `deps` change, keeping the error
 * in words. `load` answers the data, or a function of what is shown (to keep it when a live
 * message came first). An answer to a load made for older `deps` is dropped.
 */
export function useLoad<T>(load: () => Promise<SetStateAction<T | null>>, deps: DependencyList = []): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);
  const reload = useCallback(() => {
    const asked = generation.current;
    latest.current().then(
      (next) => {
        if (generation.current !== asked) return;
        setData(next);
        setError(null);
      },
      (e: unknown) => {
        if (generation.current === asked) setError(errorText(e));
      },
    );
  }, []);
  useEffect(() => {
    reload();
    return () => {
      generation.current += 1;
    };
    // `load` is read through `latest`: its new closure on each render is no reason to load again.
  }, deps);
  return { data, error, reload, setData, setError };
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

/** What a key says when it found the card's buttons off screen and brought them into view. */
export const PRESS_AGAIN = "The request is now in view: press again to decide.";

/**
 * A card's keyboard shortcuts, live while `active`, ignored while the focus is in a text field.
 * A closing key (Esc) only ever closes: it is handled before, and apart from, the shortcuts, so
 * no card can map it to a decision. A shortcut acts only while the card's decision buttons are
 * wholly on screen and clear of the composer; otherwise the key scrolls them into view and
 * `onHidden` is told, so that nobody decides a request they could not see (issue 33, item 2).
 */
function useCardKeys(active: boolean, keys: CardKeys, card: RefObject<HTMLElement | null>, onHidden: (hidden: boolean) => void): void {
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
      if (latest.current.busy) return;
      const buttons = card.current?.querySelector<HTMLElement>(".decision-actions");
      if (!buttons || !isOnScreen(buttons)) {
        if (buttons) reveal(buttons);
        onHidden(true);
        return;
      }
      onHidden(false);
      act();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [active]);
}

const NO_KEYS: CardKeys = { close: () => false, shortcut: () => null, busy: false };

/** How an approval card uses the keyboard. A form card (a server's question or prompt) gives nothing. */
export interface CardFocusOptions {
  /** The shortcuts of a card with decision buttons, live while `active` (the focused card of the queue on screen). */
  keys?: CardKeys & { active: boolean };
  /** The open panel; "buttons" (the default) when none is. */
  panel?: string;
  /** Back to the buttons: what Esc in a panel's text field does. */
  closePanel?: () => void;
}

/** What useCardFocus gives the card. */
export interface CardFocus {
  /** The card's own element (`tabIndex={-1}`), which takes the keyboard focus. */
  ref: RefObject<HTMLElement | null>;
  /** onKeyDown of a panel's text field: Esc closes the panel, Enter submits (Ctrl/Cmd+Enter when
   * `needsModifier`, so that Enter breaks lines), Shift+Enter stays a line break. */
  fieldKeys: (event: ReactKeyboardEvent, submit: () => void, needsModifier?: boolean) => void;
  /** PRESS_AGAIN after a key found the buttons off screen and scrolled to them, else null. */
  notice: string | null;
}

/**
 * The focus and keys every approval card shares (tool, gate, question, prompt). A card takes the
 * keyboard focus when it becomes the focused card and when its panel closes, unless the person is
 * typing somewhere: then its shortcuts work at once, and a reply being written keeps its focus.
 */
export function useCardFocus(id: string, { keys, panel = "buttons", closePanel }: CardFocusOptions = {}): CardFocus {
  const ref = useRef<HTMLElement>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const onHidden = useCallback((hidden: boolean) => setNotice(hidden ? PRESS_AGAIN : null), []);
  useCardKeys(keys?.active ?? false, keys ?? NO_KEYS, ref, onHidden);
  // A new request on screen is brought into view, its buttons clear of the composer, without
  // taking the focus from a field being typed in (the focus effect above leaves it there).
  const active = keys?.active ?? false;
  useEffect(() => {
    if (active && ref.current) revealDecision(ref.current);
  }, [id, active]);
  // The notice shows below the buttons: bring it into view with them.
  useEffect(() => {
    const line = notice ? ref.current?.querySelector<HTMLElement>(".press-again") : null;
    if (line) reveal(line);
  }, [notice]);
  useEffect(() => {
    if (panel === "buttons" && !isTypingTarget(document.activeElement)) ref.current?.focus({ preventScroll: true });
  }, [id, panel]);
  const fieldKeys = (event: ReactKeyboardEvent, submit: () => void, needsModifier = false) => {
    if (event.key === "Escape") {
      event.preventDefault();
      closePanel?.();
    } else if (event.key === "Enter" && !event.shiftKey && (!needsModifier || event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submit();
    }
  };
  return { ref, fieldKeys, notice };
}
