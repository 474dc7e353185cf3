// A small line diff (longest common subsequence) for showing file edits as `+`/`-` lines.

export type DiffLine = { kind: "add" | "del" | "same"; text: string };

const MAX_CELLS = 250_000;

function lines(text: string): string[] {
  if (text === "") return [];
  const split = text.split("\n");
  if (split[split.length - 1] === "") split.pop();
  return split;
}

/** The lines of `before` and `after` as a unified sequence of kept, removed and added lines. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = lines(before);
  const b = lines(after);
  return diffSequences(a, b).map(({ kind, index }) => ({ kind, text: kind === "add" ? b[index] : a[index] }));
}

/** One step of a diff of two sequences: `index` is into the old sequence for kept and removed
 * items, into the new one for added items. */
export type DiffStep = { kind: "add" | "del" | "same"; index: number };

/**
 * The shortest edit of `a` into `b` (longest common subsequence), removals before additions in
 * each changed run. Past MAX_CELLS the changed middle is shown as all removed, then all added.
 */
export function diffSequences(a: readonly string[], b: readonly string[]): DiffStep[] {
  // Trim the common head and tail so the table only covers what changed.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const n = a.length - head - tail;
  const m = b.length - head - tail;
  const out: DiffStep[] = [];
  for (let i = 0; i < head; i++) out.push({ kind: "same", index: i });
  if (n * m > MAX_CELLS) {
    for (let i = 0; i < n; i++) out.push({ kind: "del", index: head + i });
    for (let j = 0; j < m; j++) out.push({ kind: "add", index: head + j });
  } else {
    const table: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i][j] = a[head + i] === b[head + j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[head + i] === b[head + j]) {
        out.push({ kind: "same", index: head + i });
        i++;
        j++;
      } else if (table[i + 1][j] >= table[i][j + 1]) {
        out.push({ kind: "del", index: head + i++ });
      } else {
        out.push({ kind: "add", index: head + j++ });
      }
    }
    while (i < n) out.push({ kind: "del", index: head + i++ });
    while (j < m) out.push({ kind: "add", index: head + j++ });
  }
  for (let i = a.length - tail; i < a.length; i++) out.push({ kind: "same", index: i });
  return out;
}

/** A whole new file: every line added. */
export function addedLines(content: string): DiffLine[] {
  return lines(content).map((text) => ({ kind: "add", text }));
}

/** A line of a diff as shown: a changed or kept line, or a gap standing for unchanged lines. */
export type ShownLine = DiffLine | { kind: "gap"; text: string } | { kind: "hunk"; text: string };

/**
 * The changes with `context` kept lines around each, as a pull request shows them: every run of
 * unchanged lines longer than twice the context becomes one gap row saying how many it hides,
 * headed by where the hunk after it starts (`@@ -12,7 +12,8 @@`).
 */
export function withContext(diff: DiffLine[], context = 3): ShownLine[] {
  const changed = diff.map((line) => line.kind !== "same");
  if (!changed.includes(true)) return diff;
  const keep = diff.map((_, i) => {
    for (let j = Math.max(0, i - context); j <= Math.min(diff.length - 1, i + context); j++) if (changed[j]) return true;
    return false;
  });
  const out: ShownLine[] = [];
  let oldNo = 1;
  let newNo = 1;
  let i = 0;
  while (i < diff.length) {
    if (!keep[i]) {
      let hidden = 0;
      while (i < diff.length && !keep[i]) {
        hidden++;
        oldNo++;
        newNo++;
        i++;
      }
      out.push({ kind: "gap", text: `⋯ ${hidden} unchanged line${hidden === 1 ? "" : "s"}` });
      continue;
    }
    if (i === 0 || !keep[i - 1]) out.push({ kind: "hunk", text: hunkHeader(diff, keep, i, oldNo, newNo) });
    const line = diff[i];
    if (line.kind !== "add") oldNo++;
    if (line.kind !== "del") newNo++;
    out.push(line);
    i++;
  }
  return out;
}

function hunkHeader(diff: DiffLine[], keep: boolean[], start: number, oldNo: number, newNo: number): string {
  let oldCount = 0;
  let newCount = 0;
  for (let i = start; i < diff.length && keep[i]; i++) {
    if (diff[i].kind !== "add") oldCount++;
    if (diff[i].kind !== "del") newCount++;
  }
  return `@@ -${oldNo},${oldCount} +${newNo},${newCount} @@`;
}

/** The file after replacing the one occurrence of `oldText`; `count` says how many there are
 * (the file server refuses anything but exactly one, so 0 or 2+ means the edit will fail). */
export function applyEdit(file: string, oldText: string, newText: string): { after: string | null; count: number } {
  if (!oldText) return { after: null, count: 0 };
  const count = file.split(oldText).length - 1;
  return { after: count === 1 ? file.replace(oldText, () => newText) : null, count };
}
