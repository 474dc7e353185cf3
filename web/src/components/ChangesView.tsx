// A session's "Changes" tab (issue 32, issue 33 item 8): the session's net change (the workspace
// now against before its first step), then every step with the files it changed, each a diff, shell
// steps included, moves shown as "old → new", and a rewind from any of them. All of it is read from
// the checkpoints; a session without them says why instead of guessing from the calls' arguments.

import { formatTime, splitToolName, truncate, argumentSummary } from "../format";
import { lineCounts } from "../checkpoints";
import type { CheckpointFile, StepChanges, ToolCall } from "../types";
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

/** A session with no checkpoints: why nothing is shown (checkpoints off, or none could be taken). */
export function NoCheckpointsView({ enabled, failed }: { enabled: boolean | null; failed: number }) {
  if (enabled === false) {
    return (
      <p className="muted changes-empty" role="note" data-testid="changes-off">
        Checkpoints are off on this host: what this session's steps changed in the workspace was not recorded, so it
        cannot be shown here. They are turned on with <code>checkpoints: {"{enabled: true}"}</code> in the configuration.
      </p>
    );
  }
  if (failed > 0) {
    return (
      <p className="muted changes-empty" role="note" data-testid="changes-unrecorded">
        No checkpoint could be taken for {failed === 1 ? "the step" : `${failed} steps`} that may have changed the
        workspace: what {failed === 1 ? "it" : "they"} changed was not recorded. Each step says why.
      </p>
    );
  }
  return (
    <p className="muted changes-empty" data-testid="changes-empty">
      No step of this session has changed the workspace.
    </p>
  );
}
