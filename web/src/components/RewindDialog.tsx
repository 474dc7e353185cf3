// "Rewind to before this step": a modal that first says which files will change (the workspace
// now against the checkpoint before the step), lets the person keep some of them as they are, and
// offers to fork the conversation from that step. The rewind itself is checkpointed by the server,
// so it shows as a step of its own with "Undo rewind".

import { useEffect, useRef, useState, type FormEvent } from "react";
import { ApiError, api, errorText } from "../api";
import { fileLabel, lineCounts, statusWord } from "../checkpoints";
import type { CheckpointFile, RewindResult } from "../types";

/** A refusal in words: a 409 is the session running a step, which a rewind waits out. */
function rewindError(e: unknown): string {
  if (e instanceof ApiError && e.status === 409) {
    return `Not rewound: ${e.message || "the session is running a step"}. Stop it or wait until the step ends, then try again.`;
  }
  if (e instanceof ApiError && e.status === 403) return `Not rewound: ${e.message || "you may not rewind this session"}.`;
  return `Not rewound: ${errorText(e)}`;
}

export function RewindDialog({
  sessionId,
  step,
  undo = false,
  onClose,
  onRewound,
}: {
  sessionId: string;
  step: number;
  undo?: boolean;
  onClose: () => void;
  onRewound: (result: RewindResult) => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [files, setFiles] = useState<CheckpointFile[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [choose, setChoose] = useState(false);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [fork, setFork] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  useEffect(() => {
    let current = true;
    api.checkpointDiff(sessionId, step).then(
      (loaded) => {
        if (!current) return;
        setFiles(loaded);
        setChosen(new Set(loaded.map((f) => f.path)));
      },
      (e: unknown) => current && setLoadError(errorText(e)),
    );
    return () => {
      current = false;
    };
  }, [sessionId, step]);

  const toggle = (path: string) => {
    const next = new Set(chosen);
    if (next.has(path)) next.delete(path);
    else next.add(path);
    setChosen(next);
  };
  const count = choose ? chosen.size : (files?.length ?? 0);
  const nothing = files !== null && count === 0;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (busy || files === null || (nothing && !fork)) return;
    setBusy(true);
    setError(null);
    try {
      const paths = choose ? files.map((f) => f.path).filter((p) => chosen.has(p)) : null;
      const result = await api.rewind(sessionId, { step, files: paths, fork });
      onRewound(result);
    } catch (e) {
      setError(rewindError(e));
      setBusy(false);
    }
  };

  const title = undo ? `Undo the rewind (step ${step})` : `Rewind to before step ${step}`;
  return (
    <dialog
      ref={ref}
      className="rewind-dialog"
      aria-labelledby={`rewind-title-${step}`}
      data-testid="rewind-dialog"
      // The approval queue's shortcuts (Y allows, N denies) listen on the window: a key pressed in
      // this modal is the dialog's alone, never an answer to a card behind it.
      onKeyDown={(event) => event.stopPropagation()}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onClose();
      }}
    >
      <form onSubmit={(event) => void submit(event)}>
        <h2 id={`rewind-title-${step}`}>{title}</h2>
        <p className="muted small">
          {undo
            ? "Puts the workspace back as it was just before this rewind."
            : `Puts the workspace back as it was just before step ${step} ran.`}{" "}
          The rewind is kept as a step of its own, so it can be undone too.
        </p>
        {loadError && (
          <p className="error-text" role="alert" data-testid="rewind-load-error">
            Could not tell which files would change: {loadError}
          </p>
        )}
        {files === null && !loadError && <p className="muted">Finding the files that will change…</p>}
        {files !== null && files.length === 0 && (
          <p data-testid="rewind-nothing">No file differs: the workspace is already as it was then.</p>
        )}
        {files !== null && files.length > 0 && (
          <>
            <fieldset className="rewind-scope">
              <legend>
                {files.length} file{files.length === 1 ? "" : "s"} will change
              </legend>
              <label className="inline-check">
                <input type="radio" name="rewind-scope" checked={!choose} onChange={() => setChoose(false)} data-testid="rewind-all" />
                All of them
              </label>
              <label className="inline-check">
                <input type="radio" name="rewind-scope" checked={choose} onChange={() => setChoose(true)} data-testid="rewind-choose" />
                Only the files I choose
              </label>
            </fieldset>
            <ul className="rewind-files" data-testid="rewind-files" aria-label="Files that will change">
              {files.map((file) => {
                const { added, removed } = lineCounts(file);
                const what = `${statusWord(file.status)} since then`;
                return (
                  <li key={file.path} data-testid="rewind-file" data-path={file.path}>
                    {choose ? (
                      <label className="inline-check">
                        <input
                          type="checkbox"
                          checked={chosen.has(file.path)}
                          onChange={() => toggle(file.path)}
                          data-testid="rewind-file-check"
                          aria-label={`Restore ${file.path}`}
                        />
                        <code>{fileLabel(file)}</code>
                      </label>
                    ) : (
                      <code>{fileLabel(file)}</code>
                    )}{" "}
                    <span className={`file-status file-status-${file.status}`}>{what}</span>{" "}
                    {!file.binary && (
                      <span className="small">
                        <span className="diff-stat-add">+{added}</span> <span className="diff-stat-del">−{removed}</span>
                      </span>
                    )}
                  </li>
                );
              })}
            </ul>
          </>
        )}
        <label className="inline-check rewind-fork">
          <input type="checkbox" checked={fork} onChange={(e) => setFork(e.target.checked)} data-testid="rewind-fork" />
          <span>
            Also fork the conversation from here
            <span className="muted small"> (a new session whose transcript ends before this step)</span>
          </span>
        </label>
        {error && (
          <p className="error-text" role="alert" data-testid="rewind-error">
            {error}
          </p>
        )}
        <div className="rewind-actions">
          <button
            type="submit"
            className="btn primary"
            data-testid="rewind-confirm"
            disabled={busy || files === null || (nothing && !fork)}
          >
            {busy ? "Rewinding…" : undo ? "Undo rewind" : choose ? `Rewind ${count} file${count === 1 ? "" : "s"}` : "Rewind"}
          </button>
          <button type="button" className="btn" data-testid="rewind-cancel" disabled={busy} onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
