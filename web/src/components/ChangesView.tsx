// A session's "Changes" tab. With checkpoints (issue 32): the session's net change (the workspace
// now against before its first step), then every step with the files it changed, each a diff,
// shell steps included, and a rewind from any of them. A session without checkpoints (kept off,
// or from before them) shows what its write_file and edit_file calls changed, read from their
// arguments (issue 16; see changes.ts for what is exact and what is not).

import { formatTime, splitToolName, truncate, argumentSummary } from "../format";
import type { FileChanges } from "../changes";
import { lineCounts } from "../checkpoints";
import type { CheckpointFile, StepChanges, ToolCall } from "../types";
import { DiffView } from "./Arguments";
import { ChangedFile, RewindButton, SkippedNote, StepFiles, rewindWords } from "./StepChanges";
import "../person.css";
import "../checkpoints.css";

function totals(files: readonly CheckpointFile[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const file of files) {
    const counts = lineCounts(file);
    added += counts.added;
    removed += counts.removed;
  }
  return { added, removed };
}

function Summary({ files, testId }: { files: readonly CheckpointFile[]; testId: string }) {
  const { added, removed } = totals(files);
  return (
    <p className="changes-summary" data-testid={testId}>
      {files.length} file{files.length === 1 ? "" : "s"} changed · <span className="diff-stat-add">+{added}</span>{" "}
      <span className="diff-stat-del">−{removed}</span>
    </p>
  );
}

/** What a step was, in one line: the tool and its arguments, or who rewound. */
function stepLabel(step: StepChanges, call: ToolCall | undefined, to: number | undefined): string {
  if (step.kind === "rewind") return `${rewindWords(to)}${step.by ? ` by ${step.by.name} (via ${step.by.via})` : ""}`;
  const tool = splitToolName(step.tool_name ?? call?.name ?? "").tool || "step";
  return call ? `${tool} ${truncate(argumentSummary(call.arguments), 80)}` : tool;
}

export function CheckpointChanges({
  sessionId,
  steps,
  net,
  netError,
  toolCalls,
  rewoundTo,
  onRewound,
}: {
  sessionId: string;
  steps: StepChanges[];
  /** The workspace now against before the first step; null while it loads. */
  net: CheckpointFile[] | null;
  netError: string | null;
  toolCalls: Record<string, ToolCall>;
  rewoundTo: Map<number, number>;
  onRewound: () => void;
}) {
  return (
    <section className="changes" aria-label="Changes to the workspace" data-testid="changes">
      <section className="changes-net" aria-labelledby="changes-net-title" data-testid="changes-net">
        <h2 id="changes-net-title">Net change of the session</h2>
        {netError && (
          <p className="error-text" role="alert">
            {netError}
          </p>
        )}
        {net === null && !netError && <p className="muted">Comparing the workspace with before the first step…</p>}
        {net !== null && net.length === 0 && (
          <p className="muted" data-testid="changes-net-none">
            The workspace is as it was before the session's first step.
          </p>
        )}
        {net !== null && net.length > 0 && (
          <>
            <Summary files={net} testId="changes-net-summary" />
            {net.map((file) => (
              <ChangedFile key={file.path} file={file} />
            ))}
          </>
        )}
      </section>
      <section className="changes-steps" aria-labelledby="changes-steps-title">
        <h2 id="changes-steps-title">
          {steps.length} step{steps.length === 1 ? "" : "s"}
        </h2>
        {steps.map((step) => (
          <section
            key={step.step}
            className="changes-step"
            data-testid="changes-step"
            data-step={step.step}
            data-kind={step.kind}
            aria-label={`Step ${step.step}`}
          >
            <div className="step-changes-head">
              <span className="step-number">Step {step.step}</span>
              <span className="changes-step-tool">{stepLabel(step, step.tool_call_id ? toolCalls[step.tool_call_id] : undefined, rewoundTo.get(step.step))}</span>
              <span className="muted small">{formatTime(step.created_at)}</span>
              <RewindButton sessionId={sessionId} step={step.step} undo={step.kind === "rewind"} onRewound={onRewound} />
            </div>
            <SkippedNote skipped={step.skipped} />
            {step.files.length > 0 && <Summary files={step.files} testId="changes-step-summary" />}
            <StepFiles step={step} open />
          </section>
        ))}
      </section>
    </section>
  );
}

/** Without checkpoints: the files the session's write and edit calls changed (issue 16). */
export function ChangesView({ files }: { files: FileChanges[] }) {
  if (files.length === 0) {
    return (
      <p className="muted changes-empty" data-testid="changes-empty">
        This session has not written or edited any file.
      </p>
    );
  }
  const added = files.reduce((n, f) => n + f.added, 0);
  const removed = files.reduce((n, f) => n + f.removed, 0);
  return (
    <section className="changes" aria-label="Files changed" data-testid="changes">
      <p className="changes-summary" data-testid="changes-summary">
        {files.length} file{files.length === 1 ? "" : "s"} changed · <span className="diff-stat-add">+{added}</span>{" "}
        <span className="diff-stat-del">−{removed}</span>
      </p>
      {files.map((file) => (
        <details key={file.path} className="changes-file" data-testid="changes-file" data-path={file.path} open>
          <summary>
            <code>{file.path}</code>{" "}
            <span className="muted small">
              {file.changes.length} change{file.changes.length === 1 ? "" : "s"} · <span className="diff-stat-add">+{file.added}</span>{" "}
              <span className="diff-stat-del">−{file.removed}</span>
            </span>
          </summary>
          {file.changes.map((change) => (
            <div key={change.callId} className="changes-change" data-testid="changes-change" data-kind={change.kind}>
              <DiffView
                path={file.path}
                lines={change.lines}
                note={change.at ? `${change.note} at ${formatTime(change.at)}` : change.note}
              />
            </div>
          ))}
        </details>
      ))}
    </section>
  );
}
