// A session's changes to files, as a pull request's Files tab shows them: every file its
// write_file and edit_file calls changed (those that ran and succeeded), each change a diff.
//
// Only the calls are recorded, not the files before them, so a diff is exact where the content
// before is known from the session itself (an earlier write, and edits on top of it); a first
// edit shows the text it replaced, and a first write its whole content.

import { addedLines, applyEdit, diffLines, withContext, type ShownLine } from "./diff";
import type { Message, ToolCall } from "./types";

const WRITE = "mcp__file__write_file";
const EDIT = "mcp__file__edit_file";

export interface FileChange {
  callId: string;
  kind: "write" | "edit";
  lines: ShownLine[];
  note: string;
  at: string | null;
}

export interface FileChanges {
  path: string;
  changes: FileChange[];
  added: number;
  removed: number;
}

/** The session's tool calls in transcript order, each as recorded (the arguments that ran). */
export function callsInOrder(messages: Message[], toolCalls: Record<string, ToolCall>): ToolCall[] {
  const seen = new Set<string>();
  const out: ToolCall[] = [];
  for (const message of messages) {
    for (const requested of message.tool_calls ?? []) {
      const call = toolCalls[requested.id];
      if (call && !seen.has(call.id)) {
        seen.add(call.id);
        out.push(call);
      }
    }
  }
  for (const call of Object.values(toolCalls)) if (!seen.has(call.id)) out.push(call);
  return out;
}

function normal(path: string): string {
  return path.replace(/^(\.\/)+/, "");
}

export function sessionChanges(calls: ToolCall[]): FileChanges[] {
  const files = new Map<string, FileChanges>();
  const known = new Map<string, string>();
  for (const call of calls) {
    if ((call.name !== WRITE && call.name !== EDIT) || call.status !== "done" || call.is_error) continue;
    const args = call.arguments;
    if (typeof args.path !== "string") continue;
    const path = normal(args.path);
    const before = known.get(path);
    let change: FileChange | null = null;
    if (call.name === WRITE && typeof args.content === "string") {
      const lines = before === undefined ? addedLines(args.content) : withContext(diffLines(before, args.content));
      const note = before === undefined ? "written in full" : "rewritten";
      change = { callId: call.id, kind: "write", lines, note, at: call.finished_at };
      known.set(path, args.content);
    } else if (call.name === EDIT) {
      const oldText = String(args.old_text ?? args.old_string ?? "");
      const newText = String(args.new_text ?? args.new_string ?? "");
      const edited = before === undefined ? null : applyEdit(before, oldText, newText).after;
      const lines = edited === null || before === undefined ? diffLines(oldText, newText) : withContext(diffLines(before, edited));
      change = { callId: call.id, kind: "edit", lines, note: "edited", at: call.finished_at };
      if (edited !== null) known.set(path, edited);
      else known.delete(path);
    }
    if (!change) continue;
    const file = files.get(path) ?? { path, changes: [], added: 0, removed: 0 };
    file.changes.push(change);
    file.added += change.lines.filter((l) => l.kind === "add").length;
    file.removed += change.lines.filter((l) => l.kind === "del").length;
    files.set(path, file);
  }
  return [...files.values()];
}
