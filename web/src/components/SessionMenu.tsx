// A sidebar row's housekeeping: rename in place (double-click the title, or the ⋯ menu) and
// archive / unarchive. Only the session's owner and admins are offered them (the server checks too).
//
// What a row has open lives in the sidebar (`RowUi`), not in the row: a session that starts or
// stops waiting moves between "Waiting for you" and the list and its row is drawn anew there, and
// an open menu, its error or a title being typed must not vanish under the person's pointer.

import { useEffect, useRef, useState } from "react";
import { editSession } from "../housekeeping";
import type { Session } from "../types";
import "../housekeeping.css";

/** The one row with something open: its ⋯ menu (and the error of its last action) or its title field. */
export type RowUi =
  | { id: string; open: "menu"; error: string | null }
  | { id: string; open: "rename"; draft: string };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The title as an input: Enter or leaving the field saves, Esc puts the old title back. */
export function RenameField({
  session,
  value,
  setValue,
  onDone,
}: {
  session: Session;
  value: string;
  setValue: (value: string) => void;
  onDone: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const cancelled = useRef(false);

  const save = async () => {
    if (cancelled.current || saving) return;
    const title = value.trim();
    if (title === session.title.trim()) return onDone();
    setSaving(true);
    try {
      await editSession(session.id, { title });
      onDone();
    } catch (e) {
      setError(messageOf(e));
      setSaving(false);
    }
  };

  return (
    <div className="rename-field">
      <input
        autoFocus
        onFocus={(e) => e.currentTarget.select()}
        aria-label="Session title"
        data-testid="rename-input"
        maxLength={200}
        value={value}
        disabled={saving}
        aria-invalid={error ? true : undefined}
        onChange={(e) => {
          setValue(e.target.value);
          setError(null);
        }}
        onKeyDown={(e) => {
          e.stopPropagation(); // the approval shortcuts never see a title being typed
          if (e.key === "Enter") {
            e.preventDefault();
            void save();
          } else if (e.key === "Escape") {
            e.preventDefault();
            cancelled.current = true;
            onDone();
          }
        }}
        onBlur={() => void save()}
      />
      {error && (
        <p className="error-text small" role="alert" data-testid="rename-error">
          {error}
        </p>
      )}
    </div>
  );
}

/** The ⋯ button and its menu: Rename, Archive or Unarchive. `open` and `error` are the sidebar's. */
export function SessionMenu({
  session,
  open,
  error,
  setMenu,
  onRename,
}: {
  session: Session;
  open: boolean;
  error: string | null;
  setMenu: (open: boolean, error?: string | null) => void;
  onRename: () => void;
}) {
  const root = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) setMenu(false);
    };
    document.addEventListener("mousedown", close);
    return () => document.removeEventListener("mousedown", close);
  }, [open, setMenu]);

  const archive = async (archived: boolean) => {
    try {
      await editSession(session.id, { archived });
      setMenu(false);
    } catch (e) {
      setMenu(true, messageOf(e));
    }
  };

  const label = session.title || session.id.slice(0, 8);
  return (
    <div className="session-menu" ref={root}>
      <button
        type="button"
        className="btn subtle small session-menu-button"
        aria-label={`More for ${label}`}
        aria-haspopup="menu"
        aria-expanded={open}
        data-testid="session-menu"
        onClick={() => setMenu(!open)}
      >
        ⋯
      </button>
      {open && (
        <div
          className="session-menu-list"
          role="menu"
          onKeyDown={(e) => {
            if (e.key === "Escape") setMenu(false);
          }}
        >
          <button
            type="button"
            role="menuitem"
            autoFocus
            data-testid="session-rename"
            onClick={onRename}
          >
            Rename
          </button>
          <button
            type="button"
            role="menuitem"
            data-testid={session.archived ? "session-unarchive" : "session-archive"}
            onClick={() => void archive(!session.archived)}
          >
            {session.archived ? "Unarchive" : "Archive"}
          </button>
          {error && (
            <p className="error-text small" role="alert" data-testid="session-menu-error">
              {error}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
