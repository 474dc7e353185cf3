// A session's checkpoints (issue 32): the workspace kept before every step that may change it, so
// the dashboard shows what each step really changed (shell steps included, read from the shadow
// repository, not guessed from the arguments) and can rewind the workspace to before any step.
//
// The list is loaded from GET /api/sessions/{id}/checkpoints and loaded again when the session
// says something changed (a checkpoint made, a step finished, a run ended): the last step's diff
// is against the workspace as it is now, so it grows while the step runs.

import { useCallback, useEffect, useState } from "react";
import { api, errorText, request } from "./api";
import { live } from "./live";
import type { ShownLine } from "./diff";
import type { CheckpointFile, LiveEvent, Schemas, Sent, StepChanges } from "./types";

/** GET /api/sessions/{id}/checkpoints/status: whether the session's steps get checkpoints. */
export type CheckpointStatus = Sent<Schemas["CheckpointStatus"]>;

/** Events after which the list may have changed. */
const RELOAD_ON = new Set(["checkpoint.created", "checkpoint.rewound", "tool.result", "session.status"]);
/** The events that say what the list cannot: a checkpoint that failed, a rewind's target. */
const CHECKPOINT_EVENTS = ["checkpoint.created", "checkpoint.rewound"];
/** Events come in bursts (a result, a status): one load for a burst. */
const RELOAD_DELAY_MS = 150;

export interface CheckpointsState {
  /** null until the first load answers. */
  steps: StepChanges[] | null;
  /** Why a step has no checkpoint (it could not be taken), by tool call id. */
  failed: Map<string, string>;
  /** The step a rewind went back to before, by the rewind's own step. */
  rewoundTo: Map<number, number>;
  error: string | null;
  reload: () => void;
}

interface FromEvents {
  failed: Map<string, string>;
  rewoundTo: Map<number, number>;
}

const NO_EVENTS: FromEvents = { failed: new Map(), rewoundTo: new Map() };

/** What `checkpoint.created` (commit null: none was taken, and why) and `checkpoint.rewound` say. */
export function fromEvents(events: readonly LiveEvent[]): FromEvents {
  const failed = new Map<string, string>();
  const rewoundTo = new Map<number, number>();
  for (const event of events) {
    const data = event.data ?? {};
    if (event.type === "checkpoint.created" && data.commit == null && typeof data.id === "string") {
      failed.set(data.id, typeof data.error === "string" && data.error ? data.error : "it could not be taken");
    } else if (event.type === "checkpoint.rewound" && typeof data.checkpoint_step === "number" && typeof data.step === "number") {
      rewoundTo.set(data.checkpoint_step, data.step);
    }
  }
  return { failed, rewoundTo };
}

/** The session's steps with their changed files, kept current. */
export function useCheckpoints(sessionId: string, epoch = 0): CheckpointsState {
  const [steps, setSteps] = useState<StepChanges[] | null>(null);
  const [events, setEvents] = useState<FromEvents>(NO_EVENTS);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    setSteps(null);
    setEvents(NO_EVENTS);
    setError(null);
  }, [sessionId]);
  useEffect(() => {
    let current = true;
    Promise.all([api.checkpoints(sessionId), api.sessionEvents(sessionId, 0, CHECKPOINT_EVENTS)]).then(
      ([loaded, told]) => {
        if (!current) return;
        setSteps(loaded);
        setEvents(fromEvents(told));
        setError(null);
      },
      (e: unknown) => current && setError(errorText(e)),
    );
    return () => {
      current = false;
    };
  }, [sessionId, epoch, asked]);
  useEffect(() => {
    let timer: number | undefined;
    const off = live.onEvent((event) => {
      if (event.session_id !== sessionId || !RELOAD_ON.has(event.type)) return;
      window.clearTimeout(timer);
      timer = window.setTimeout(() => setAsked((n) => n + 1), RELOAD_DELAY_MS);
    });
    return () => {
      off();
      window.clearTimeout(timer);
    };
  }, [sessionId]);
  const reload = useCallback(() => setAsked((n) => n + 1), []);
  return { steps, failed: events.failed, rewoundTo: events.rewoundTo, error, reload };
}

/**
 * The session's net change: the workspace now against before its first step (what rewinding to
 * step 1 would undo). Loaded while `active` (the Changes tab is open), again whenever the steps do.
 */
export function useNetChange(
  sessionId: string,
  steps: readonly StepChanges[] | null,
  active: boolean,
): { files: CheckpointFile[] | null; error: string | null } {
  const [files, setFiles] = useState<CheckpointFile[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const first = steps && steps.length > 0 ? steps[0].step : null;
  useEffect(() => {
    if (!active || first === null) return;
    let current = true;
    api.checkpointDiff(sessionId, first).then(
      (loaded) => {
        if (!current) return;
        setFiles(loaded);
        setError(null);
      },
      (e: unknown) => current && setError(`The net change could not be loaded: ${errorText(e)}`),
    );
    return () => {
      current = false;
    };
  }, [sessionId, steps, active, first]);
  return { files, error };
}

/** A unified diff (git's, headers and all) as the lines the dashboard's diff view shows. */
export function parseUnifiedDiff(diff: string): ShownLine[] {
  const out: ShownLine[] = [];
  let inHunk = false;
  const lines = diff.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) {
    if (line.startsWith("diff --git ")) {
      inHunk = false; // a second section (a file turned into a link is a deletion and a creation)
    } else if (line.startsWith("@@")) {
      inHunk = true;
      out.push({ kind: "hunk", text: line });
    } else if (!inHunk) {
      continue; // diff --git, index, ---/+++, new file mode: the file row says it all
    } else if (line.startsWith("+")) {
      out.push({ kind: "add", text: line.slice(1) });
    } else if (line.startsWith("-")) {
      out.push({ kind: "del", text: line.slice(1) });
    } else if (line.startsWith("\\")) {
      out.push({ kind: "gap", text: line.slice(2) }); // "No newline at end of file"
    } else {
      out.push({ kind: "same", text: line.slice(1) });
    }
  }
  return out;
}

/** Lines added and removed in a file's change, as the host counted them in git's diff (an
 * overwrite of six lines by three others is +3 −6). */
export function lineCounts(file: CheckpointFile): { added: number; removed: number } {
  return { added: file.added, removed: file.removed };
}

const STATUS_WORD: Record<CheckpointFile["status"], string> = {
  added: "added",
  modified: "modified",
  deleted: "deleted",
  mode: "mode changed",
  renamed: "moved",
};

/** "added", "modified", "deleted", "mode changed", "moved". */
export function statusWord(status: CheckpointFile["status"]): string {
  return STATUS_WORD[status] ?? status;
}

/** A file as a person names it: its path, or "old → new" for a move. */
export function fileLabel(file: CheckpointFile): string {
  return file.status === "renamed" && file.old_path ? `${file.old_path} → ${file.path}` : file.path;
}

/** A move's similarity in words: "unchanged" at 100%, else "87% alike". */
export function similarityWords(file: CheckpointFile): string | null {
  if (file.status !== "renamed" || file.similarity === null) return null;
  return file.similarity >= 100 ? "unchanged" : `${file.similarity}% alike`;
}

/** Whether checkpoints are kept for the session's steps; null until known (or if it could not be told). */
export function useCheckpointStatus(sessionId: string, epoch = 0): CheckpointStatus | null {
  const [status, setStatus] = useState<CheckpointStatus | null>(null);
  useEffect(() => {
    let current = true;
    setStatus(null);
    request<CheckpointStatus>("GET", `/api/sessions/${encodeURIComponent(sessionId)}/checkpoints/status`).then(
      (loaded) => current && setStatus(loaded),
      () => undefined, // unknown: nothing is said either way rather than a guess
    );
    return () => {
      current = false;
    };
  }, [sessionId, epoch]);
  return status;
}

/** The built-in tools that always change the workspace: with checkpoints off, a call of one that
 * ran says its change was not recorded (a third-party tool's may have read only). */
const WRITERS = new Set([
  "mcp__file__write_file",
  "mcp__file__edit_file",
  "mcp__shell__exec",
  "mcp__memory__memory_save",
  "mcp__memory__memory_forget",
]);

/** Whether a call of this tool changes the workspace whatever it is asked (the host's WRITERS). */
export function writesWorkspace(toolName: string): boolean {
  return WRITERS.has(toolName);
}

/**
 * What a checkpoint left out, in words: "2 files over 5 MB were not kept". `skipped` holds
 * "path: reason" strings; files that share a reason are counted together.
 */
export function skippedSummary(skipped: readonly string[]): string[] {
  const byReason = new Map<string, number>();
  for (const entry of skipped) {
    const cut = entry.lastIndexOf(": ");
    const reason = cut === -1 ? "left out" : entry.slice(cut + 2);
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
  return [...byReason].map(([reason, n]) => `${n} file${n === 1 ? "" : "s"} ${reason} ${n === 1 ? "was" : "were"} not kept`);
}

/** A size on disk: "512 bytes", "3.4 KB", "12.0 MB", "1.20 GB". */
export function formatDisk(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

/** The step whose checkpoint was made before the tool call `callId`, by call id. */
export function stepsByCall(steps: readonly StepChanges[] | null): Map<string, StepChanges> {
  const map = new Map<string, StepChanges>();
  for (const step of steps ?? []) if (step.tool_call_id) map.set(step.tool_call_id, step);
  return map;
}
