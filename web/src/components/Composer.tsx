// The chat box. A `/` at the start offers the commands (/new, /help, /mode) and the skills the
// session's workspace can use; choosing one inserts it. A command's answer is shown under the
// box (the timeline shows it too, as a notice); a refused message keeps its text and says why.

import { useEffect, useMemo, useState, type FormEvent, type KeyboardEvent } from "react";
import { api } from "../api";
import { truncate } from "../format";
import { useModes } from "../modes";
import type { Session, Skill } from "../types";

interface Suggestion {
  /** What the word is when typed out in full, e.g. "/help". */
  value: string;
  /** What choosing it puts in the box. */
  insert: string;
  hint: string;
}

const COMMANDS: Suggestion[] = [
  { value: "/new", insert: "/new", hint: "clear the conversation; the agent starts afresh" },
  { value: "/help", insert: "/help", hint: "list the commands, modes and skills" },
  { value: "/mode", insert: "/mode ", hint: "switch this session to another mode" },
];

function useSkills(workspace: string): Skill[] {
  const [skills, setSkills] = useState<Skill[]>([]);
  useEffect(() => {
    let cancelled = false;
    api
      .skills(workspace)
      .then((list) => !cancelled && setSkills(list))
      .catch(() => !cancelled && setSkills([]));
    return () => {
      cancelled = true;
    };
  }, [workspace]);
  return skills;
}

export function Composer({ session }: { session: Session }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [detail, setDetail] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [highlight, setHighlight] = useState(0);
  const [dismissed, setDismissed] = useState(false);
  const skills = useSkills(session.workspace);
  const modes = useModes();

  const suggestions = useMemo<Suggestion[]>(() => {
    if (dismissed) return [];
    const modeArg = /^\/mode\s+(\S*)$/.exec(text);
    if (modeArg) {
      return (modes ?? [])
        .filter((m) => m.name.startsWith(modeArg[1]) && m.name !== session.mode)
        .map((m) => ({ value: `/mode ${m.name}`, insert: `/mode ${m.name}`, hint: `${m.icon ? `${m.icon} ` : ""}${m.description}` }));
    }
    const word = /^\/([\w-]*)$/.exec(text);
    if (!word) return [];
    const skillItems = skills
      .filter((s) => s.available)
      .map((s) => ({ value: `/${s.name}`, insert: `/${s.name} `, hint: `skill: ${truncate(s.description, 70)}` }));
    return [...COMMANDS, ...skillItems].filter((s) => s.value.slice(1).startsWith(word[1]));
  }, [text, dismissed, skills, modes, session.mode]);
  const open = suggestions.length > 0;
  const active = Math.min(highlight, suggestions.length - 1);

  const choose = (s: Suggestion) => {
    setText(s.insert);
    setHighlight(0);
    setDismissed(false);
  };

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    const content = text.trim();
    if (!content) return;
    setBusy(true);
    setError(null);
    try {
      const result = await api.sendMessage(session.id, content);
      setText("");
      setDetail(result?.command ? result.detail : null);
    } catch (err) {
      // The server lists the commands and skills there are; the typed text stays to be fixed.
      setError(err instanceof Error ? err.message : String(err));
      setDetail(null);
    } finally {
      setBusy(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      setHighlight((active + step + suggestions.length) % suggestions.length);
      return;
    }
    if (open && e.key === "Escape") {
      e.preventDefault();
      setDismissed(true);
      return;
    }
    const chosen = open ? suggestions[active] : null;
    // Enter on a word already typed out in full sends it; otherwise it completes the word.
    if (chosen && (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && text.trim() !== chosen.value))) {
      e.preventDefault();
      choose(chosen);
      return;
    }
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      void submit();
    }
  };

  return (
    <form className="composer" onSubmit={submit} aria-label="Message the agent">
      {open && (
        <ul className="slash-menu" role="listbox" aria-label="Commands and skills" data-testid="composer-suggestions">
          {suggestions.map((s, i) => (
            <li
              key={s.value}
              role="option"
              aria-selected={i === active}
              className={i === active ? "active" : undefined}
              data-testid="composer-suggestion"
              data-value={s.value}
              onMouseDown={(e) => {
                e.preventDefault(); // keep the focus in the box
                choose(s);
              }}
            >
              <code>{s.value}</code> <span className="muted small">{s.hint}</span>
            </li>
          ))}
        </ul>
      )}
      <textarea
        data-testid="composer"
        aria-label="Message"
        aria-autocomplete="list"
        aria-expanded={open}
        rows={2}
        value={text}
        placeholder="Send a message (Enter sends, Shift+Enter for a new line, / for commands and skills)"
        onChange={(e) => {
          setText(e.target.value);
          setDismissed(false);
          setHighlight(0);
          setError(null);
        }}
        onKeyDown={onKeyDown}
      />
      <button type="submit" className="btn primary" data-testid="composer-send" disabled={busy || !text.trim()}>
        Send
      </button>
      {error && (
        <p className="error-text" role="alert" data-testid="composer-error">
          {error}
        </p>
      )}
      {detail && (
        <p className="composer-detail" role="status" data-testid="composer-detail">
          {detail}
        </p>
      )}
    </form>
  );
}
