// What one step changed in the workspace (issue 32), under its tool call in the transcript and in
// the Changes tab: each file with its status and line counts, its diff a click away, what the
// checkpoint left out, and "Rewind to before this step".

import { useState } from "react";
import { fileLabel, lineCounts, parseUnifiedDiff, similarityWords, skippedSummary, statusWord } from "../checkpoints";
import { formatTime } from "../format";
import { sessionHref } from "../router";
import type { CheckpointFile, RewindResult, StepChanges } from "../types";
import { DiffView } from "./Arguments";
import { RewindDialog } from "./RewindDialog";
import "../checkpoints.css";

/** What a file's row says when its diff has no lines to show. */
function noLines(file: CheckpointFile): string {
  if (file.status === "renamed") return "Moved without a change to its content.";
  if (file.status === "mode") return "Only its mode changed.";
  return "No line changes.";
}

/** One changed file: a row (status, path or "old → new", +/−) that opens onto its diff. The counts
 * are the host's, from git's diff of the checkpoints: an overwrite says every line it removed. */
export function ChangedFile({ file, open = false }: { file: CheckpointFile; open?: boolean }) {
  const { added, removed } = lineCounts(file);
  const lines = parseUnifiedDiff(file.diff);
  const alike = similarityWords(file);
  return (
    <details
      className="step-file"
      data-testid="step-file"
      data-path={file.path}
      data-old-path={file.old_path ?? undefined}
      data-status={file.status}
      open={open || undefined}
    >
      <summary>
        <span className={`file-status file-status-${file.status}`} data-testid="step-file-status">
          {statusWord(file.status)}
        </span>{" "}
        {file.status === "renamed" && file.old_path ? (
          <span className="step-file-move" data-testid="step-file-move" aria-label={`moved from ${file.old_path} to ${file.path}`}>
            <code>{file.old_path}</code> → <code>{file.path}</code>
          </span>
        ) : (
          <code data-testid="step-file-path">{file.path}</code>
        )}{" "}
        {alike && (
          <span className="muted small" data-testid="step-file-similarity" title="How alike the file is before and after the move (git's similarity index)">
            ({alike})
          </span>
        )}{" "}
        {file.binary ? (
          <span className="muted small">binary</span>
        ) : (
          <span className="small" aria-label={`${added} lines added, ${removed} removed`} data-testid="step-file-lines">
            <span className="diff-stat-add">+{added}</span> <span className="diff-stat-del">−{removed}</span>
          </span>
        )}
      </summary>
      {file.binary ? (
        <p className="muted small">A binary file: no line diff.</p>
      ) : lines.length > 0 ? (
        <DiffView path={fileLabel(file)} lines={lines} note={statusWord(file.status)} />
      ) : (
        <p className="muted small">{noLines(file)}</p>
      )}
    </details>
  );
}

/** The files a step changed, or a line saying it changed none. */
export function StepFiles({ step, open = false }: { step: StepChanges; open?: boolean }) {
  if (step.files.length === 0) {
    return (
      <p className="muted small step-no-change" data-testid="step-no-change">
        Changed no files.
      </p>
    );
  }
  return (
    <div className="step-files" data-testid="step-files">
      {step.files.map((file) => (
        <ChangedFile key={file.path} file={file} open={open} />
      ))}
    </div>
  );
}

/** What the checkpoint did not keep ("2 files over 5 MB were not kept"): those cannot be rewound. */
export function SkippedNote({ skipped }: { skipped: readonly string[] }) {
  if (skipped.length === 0) return null;
  return (
    <p className="step-skipped" role="note" data-testid="step-skipped" title={skipped.join("\n")}>
      {skippedSummary(skipped).join("; ")}.
    </p>
  );
}

/** The button that opens the confirm dialog, and the dialog. */
export function RewindButton({
  sessionId,
  step,
  undo = false,
  onRewound,
}: {
  sessionId: string;
  step: number;
  /** The button of a rewind's own step: it takes that rewind back. */
  undo?: boolean;
  onRewound: () => void;
}) {
  const [open, setOpen] = useState(false);
  const [done, setDone] = useState<RewindResult | null>(null);
  const rewound = (result: RewindResult) => {
    setOpen(false);
    setDone(result);
    onRewound();
  };
  return (
    <>
      <button
        type="button"
        className="btn subtle rewind-button"
        data-testid={undo ? "undo-rewind" : "rewind-button"}
        data-step={step}
        aria-haspopup="dialog"
        aria-label={undo ? `Undo rewind (step ${step})` : `Rewind to before step ${step}`}
        onClick={() => setOpen(true)}
      >
        {undo ? "Undo rewind" : "Rewind to before this step"}
      </button>
      {done && (
        <span className="small rewind-done" role="status" data-testid="rewind-done">
          {done.restored.length === 0 ? "Nothing needed restoring" : `Restored ${done.restored.length} file${done.restored.length === 1 ? "" : "s"}`}
          {done.forked_session_id && (
            <>
              {"; the conversation was forked: "}
              <a href={sessionHref(done.forked_session_id)} data-testid="rewind-fork-link">
                open the new session
              </a>
            </>
          )}
          .
        </span>
      )}
      {open && <RewindDialog sessionId={sessionId} step={step} undo={undo} onClose={() => setOpen(false)} onRewound={rewound} />}
    </>
  );
}

/** Under a tool call: what its step changed, and the way back. */
export function StepChangesPanel({ step, sessionId, onRewound }: { step: StepChanges; sessionId: string; onRewound: () => void }) {
  return (
    <section className="step-changes" data-testid="step-changes" data-step={step.step} aria-label={`Step ${step.step}: changes to the workspace`}>
      <div className="step-changes-head">
        <span className="step-number" data-testid="step-number">
          Step {step.step}
        </span>
        <span className="muted small">
          {step.files.length === 0 ? "no files changed" : `${step.files.length} file${step.files.length === 1 ? "" : "s"} changed`}
        </span>
        <RewindButton sessionId={sessionId} step={step.step} onRewound={onRewound} />
      </div>
      <SkippedNote skipped={step.skipped} />
      {step.files.length > 0 && <StepFiles step={step} />}
    </section>
  );
}

/** "Rewound to before step 3", or "Rewound" when the target is not known. */
export function rewindWords(to?: number): string {
  return to === undefined ? "Rewound" : `Rewound to before step ${to}`;
}

/** A rewind, shown as a step of its own: who did it, what it changed, and "Undo rewind". */
export function RewindEntry({
  step,
  to,
  sessionId,
  onRewound,
}: {
  step: StepChanges;
  /** The step it went back to before, when known (its `checkpoint.rewound` event). */
  to?: number;
  sessionId: string;
  onRewound: () => void;
}) {
  const who = step.by ? `${step.by.name} (via ${step.by.via})` : "someone";
  const what = rewindWords(to);
  return (
    <section className="step-changes rewind-entry" data-testid="rewind-entry" data-step={step.step} aria-label={`Step ${step.step}: a rewind`}>
      <div className="step-changes-head">
        <span className="step-number">Step {step.step}</span>
        <span data-testid="rewind-entry-text">
          {what} by {who} at {formatTime(step.created_at)}: {step.files.length} file{step.files.length === 1 ? "" : "s"} changed
        </span>
        <RewindButton sessionId={sessionId} step={step.step} undo onRewound={onRewound} />
      </div>
      {step.files.length > 0 && <StepFiles step={step} />}
    </section>
  );
}

/** Said of a step that ran with checkpoints off on the host. */
export const CHECKPOINTS_OFF = "checkpoints are off on this host, so what this step changed was not recorded";

/** A step with no checkpoint (it failed, or checkpoints are off): its change is not shown, since
 * it is not known, and cannot be rewound; the person is told why rather than shown a guess. */
export function NoCheckpoint({ reason }: { reason: string }) {
  // The event says "no checkpoint: <why>": say it once.
  const why = reason.replace(/^no checkpoint:\s*/i, "");
  return (
    <p className="step-skipped" role="note" data-testid="step-no-checkpoint">
      <span data-testid="step-no-checkpoint-text">No checkpoint: {why}</span>{" "}
      <span className="muted small">(there is no rewinding to just before this step)</span>
    </p>
  );
}
