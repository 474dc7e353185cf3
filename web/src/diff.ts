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
  // Trim the common head and tail so the table only covers what changed.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ kind: "same", text }));
  if (midA.length * midB.length > MAX_CELLS) {
    midA.forEach((text) => out.push({ kind: "del", text }));
    midB.forEach((text) => out.push({ kind: "add", text }));
  } else {
    const n = midA.length;
    const m = midB.length;
    const table: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i][j] = midA[i] === midB[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (midA[i] === midB[j]) {
        out.push({ kind: "same", text: midA[i] });
        i++;
        j++;
      } else if (table[i + 1][j] >= table[i][j + 1]) {
        out.push({ kind: "del", text: midA[i++] });
      } else {
        out.push({ kind: "add", text: midB[j++] });
      }
    }
    while (i < n) out.push({ kind: "del", text: midA[i++] });
    while (j < m) out.push({ kind: "add", text: midB[j++] });
  }
  a.slice(a.length - tail).forEach((text) => out.push({ kind: "same", text }));
  return out;
}

/** A whole new file: every line added. */
export function addedLines(content: string): DiffLine[] {
  return lines(content).map((text) => ({ kind: "add", text }));
}
