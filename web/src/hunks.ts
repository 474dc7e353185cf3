// Accepting part of a proposed file change: the change cut into hunks (the `@@` blocks a diff
// shows), the file that results from applying only the chosen ones, and an edit_file call that
// makes exactly that file. Pure: no React, no DOM, so it is tested on its own (tests/web).

import { applyEdit, diffSequences, type ShownLine } from "./diff";

/** One line of the change, `raw` with its line ending ("\n", "\r\n" or none at the file's end);
 * `hunk` is the index of the hunk a removed or added line belongs to, null for a kept line. */
export type HunkLine = { kind: "add" | "del" | "same"; raw: string; hunk: number | null };

/** A change from one file text to another, cut into `count` hunks. */
export interface FileHunks {
  lines: HunkLine[];
  count: number;
}

/** A diff row as shown, with the hunk a header row stands for and whether a line lacks its
 * final newline (so "x" against "x\n" reads as a change, not as two equal lines). */
export type HunkShownLine = ShownLine & { hunk?: number; noEol?: boolean };

/** Kept lines shown around each change, as `withContext` shows them. */
export const CONTEXT = 3;

/** The lines of `text`, each with its ending: "a\nb" is ["a\n", "b"]; "" is []. */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf("\n", start);
    const stop = end === -1 ? text.length : end + 1;
    out.push(text.slice(start, stop));
    start = stop;
  }
  return out;
}

/**
 * The change from `before` to `after`, line by line, in hunks. Two runs of changed lines are one
 * hunk when at most 2 × `context` kept lines lie between them: then their context overlaps and a
 * diff shows them under one `@@` header, so each header shown is one hunk to choose.
 */
export function fileHunks(before: string, after: string, context = CONTEXT): FileHunks {
  const a = splitLines(before);
  const b = splitLines(after);
  const lines: HunkLine[] = diffSequences(a, b).map(({ kind, index }) => ({
    kind,
    raw: kind === "add" ? b[index] : a[index],
    hunk: null,
  }));
  let count = 0;
  let keptSince = Infinity; // kept lines since the last changed one
  for (const line of lines) {
    if (line.kind === "same") {
      keptSince++;
      continue;
    }
    if (keptSince > 2 * context) count++;
    line.hunk = count - 1;
    keptSince = 0;
  }
  return { lines, count };
}

/** The file with only the `chosen` hunks applied: every hunk gives `after`, none gives `before`. */
export function applyHunks(hunks: FileHunks, chosen: ReadonlySet<number>): string {
  let out = "";
  for (const line of hunks.lines) {
    if (line.kind === "same") out += line.raw;
    else if (line.kind === "del" && !chosen.has(line.hunk ?? -1)) out += line.raw;
    else if (line.kind === "add" && chosen.has(line.hunk ?? -1)) out += line.raw;
  }
  return out;
}

/**
 * The change as a diff shows it: each hunk under its `@@ -old,n +new,n @@` header (carrying the
 * hunk's index), `context` kept lines around it, and the kept lines between hunks folded into one
 * gap row saying how many there are.
 */
export function shownHunks(hunks: FileHunks, context = CONTEXT): HunkShownLine[] {
  const { lines } = hunks;
  const shownAs = (line: HunkLine): HunkShownLine => {
    const eol = line.raw.endsWith("\n");
    const text = eol ? line.raw.slice(0, -1) : line.raw;
    const shown: HunkShownLine = { kind: line.kind, text };
    if (!eol) shown.noEol = true;
    if (line.hunk !== null) shown.hunk = line.hunk;
    return shown;
  };
  if (hunks.count === 0) return lines.map(shownAs);
  // Which lines show: within `context` of a changed line.
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((line, i) => {
    if (line.kind === "same") return;
    for (let j = Math.max(0, i - context); j <= Math.min(lines.length - 1, i + context); j++) keep[j] = true;
  });
  const out: HunkShownLine[] = [];
  let oldNo = 1;
  let newNo = 1;
  let i = 0;
  while (i < lines.length) {
    if (!keep[i]) {
      let hidden = 0;
      for (; i < lines.length && !keep[i]; i++) hidden++;
      oldNo += hidden;
      newNo += hidden;
      out.push({ kind: "gap", text: `⋯ ${hidden} unchanged line${hidden === 1 ? "" : "s"}` });
      continue;
    }
    if (i === 0 || !keep[i - 1]) {
      let oldCount = 0;
      let newCount = 0;
      let hunk = -1;
      for (let j = i; j < lines.length && keep[j]; j++) {
        if (lines[j].kind !== "add") oldCount++;
        if (lines[j].kind !== "del") newCount++;
        if (hunk === -1 && lines[j].hunk !== null) hunk = lines[j].hunk as number;
      }
      out.push({ kind: "hunk", text: `@@ -${oldNo},${oldCount} +${newNo},${newCount} @@`, hunk });
    }
    const line = lines[i];
    if (line.kind !== "add") oldNo++;
    if (line.kind !== "del") newNo++;
    out.push(shownAs(line));
    i++;
  }
  return out;
}

/** `old_text`/`new_text` for the file server's edit_file (old_text must occur exactly once). */
export interface EditArguments {
  old_text: string;
  new_text: string;
}

/**
 * An edit that turns `before` into `result`: the whole lines that differ (the lines both share at
 * the start and at the end left out), widened a line at a time on both sides until the old text
 * occurs in `before` exactly once (overlapping occurrences included, so the one the server finds
 * is this one). Null when there is nothing to change or no such text exists (an empty file).
 */
export function editBetween(before: string, result: string): EditArguments | null {
  if (before === result) return null;
  const a = splitLines(before);
  const b = splitLines(result);
  const shortest = Math.min(a.length, b.length);
  let head = 0;
  while (head < shortest && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < shortest - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  for (;;) {
    const oldText = a.slice(head, a.length - tail).join("");
    if (oldText) {
      const start = a.slice(0, head).join("").length;
      if (before.indexOf(oldText) === start && before.indexOf(oldText, start + 1) === -1) break;
    }
    if (head === 0 && tail === 0) return null;
    if (head > 0) head--;
    if (tail > 0) tail--;
  }
  const edit = { old_text: a.slice(head, a.length - tail).join(""), new_text: b.slice(head, b.length - tail).join("") };
  // Never send an edit that would not make `result`: better no partial allow than a wrong one.
  const made = a.slice(0, head).join("") + edit.new_text + a.slice(a.length - tail).join("");
  return made === result ? edit : null;
}

/** A write or edit of the file server whose change can be accepted in part: the file as it is,
 * the change in hunks, and how the accepted part is sent (as the same tool, never another). */
export interface HunkReview {
  tool: "write_file" | "edit_file";
  before: string;
  hunks: FileHunks;
}

/** The file a write or edit changes, as the card knows it (fileOnDisk.ts). */
export interface KnownFile {
  exists: boolean;
  content: string | null;
}

/** The review of a `write_file` (path, content) or `edit_file` (path, old_text, new_text) call
 * against the file on disk, or null when the change cannot be cut: other tools, an unknown or
 * unreadable file, an edit whose old text does not occur exactly once. */
export function reviewOf(tool: string, args: Record<string, unknown>, file: KnownFile | null | undefined): HunkReview | null {
  if (!file || typeof args.path !== "string") return null;
  if (tool === "write_file" && typeof args.content === "string") {
    if (file.exists && file.content === null) return null;
    const before = file.content ?? "";
    return { tool, before, hunks: fileHunks(before, args.content) };
  }
  if (tool === "edit_file" && typeof args.old_text === "string" && typeof args.new_text === "string") {
    if (file.content === null) return null;
    const { after } = applyEdit(file.content, args.old_text, args.new_text);
    return after === null ? null : { tool, before: file.content, hunks: fileHunks(file.content, after) };
  }
  return null;
}

/** The call's arguments with only the `chosen` hunks: a write's content, or an edit's old and new
 * text, made so that the tool leaves exactly `applyHunks(chosen)` on disk. Null when no hunk is
 * chosen (nothing would change) or no edit can say it. */
export function chosenArguments(review: HunkReview, args: Record<string, unknown>, chosen: ReadonlySet<number>): Record<string, unknown> | null {
  const result = applyHunks(review.hunks, chosen);
  if (result === review.before) return null;
  if (review.tool === "write_file") return { ...args, content: result };
  const edit = editBetween(review.before, result);
  return edit && { ...args, ...edit };
}
