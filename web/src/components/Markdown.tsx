// Markdown for agent replies, plans and prompts: headings, paragraphs (a line break stays one),
// ordered and unordered lists, fenced code (its language as a `language-*` class and a label),
// GFM tables (a header row, a `---|:-:` delimiter row, alignment per column), block quotes, rules, `code`, **bold**, *italic*, [links](https://…) and <https://…>.
//
// Safe by construction: the output is React elements built from the text, never an HTML string,
// so `<script>` or `<img onerror=…>` in a reply shows as text. Links open only for http, https and
// mailto (anything else, `javascript:` included, stays text), in a new tab without an opener.
// Parsing is a pure function of the text, so a reply streaming in re-renders only what grew: an
// unclosed fence is code up to the end until it closes, an unclosed `**` text until it does.

import { useMemo, type ReactNode } from "react";
import "../markdown.css";

const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

/** The URL if it is absolute and of a scheme we open, else null. */
export function safeHref(url: string): string | null {
  try {
    const parsed = new URL(url);
    return SAFE_SCHEMES.has(parsed.protocol) ? parsed.href : null;
  } catch {
    return null; // relative or malformed: not a link
  }
}

const INLINE = new RegExp(
  [
    "(`+)([^`]|[^`][\\s\\S]*?[^`])\\1(?!`)", // 1-2: code span
    "\\[([^\\]\\n]+)\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"\\n]*\")?\\s*\\)", // 3-4: [text](url "title")
    "<((?:https?|mailto):[^>\\s]+)>", // 5: <autolink>
    "\\*\\*(?=\\S)([\\s\\S]*?\\S)\\*\\*", // 6: **bold**
    "(?<![\\w])__(?=\\S)([\\s\\S]*?\\S)__(?![\\w])", // 7: __bold__
    "\\*(?=[^\\s*])([^*\\n]*?[^\\s*])\\*", // 8: *italic*
    "(?<![\\w])_(?=[^\\s_])([^_\\n]*?[^\\s_])_(?![\\w])", // 9: _italic_
  ].join("|"),
  "g",
);

function link(href: string | null, label: ReactNode[], key: number, raw: string): ReactNode {
  if (href === null) return <span key={key}>{raw}</span>;
  return (
    <a key={key} href={href} target="_blank" rel="noopener noreferrer">
      {label}
    </a>
  );
}

/** Inline Markdown as React nodes; a line break in the text becomes <br>. */
function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  const plain = (chunk: string) => {
    chunk.split("\n").forEach((line, i) => {
      if (i > 0) out.push(<br key={`br${out.length}`} />);
      if (line) out.push(line);
    });
  };
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const start = match.index ?? 0;
    if (start > last) plain(text.slice(last, start));
    const [raw, , code, label, url, auto, bold1, bold2, em1, em2] = match;
    if (code !== undefined) {
      // One space each side is padding (so a span can start or end with a backtick).
      const body = /^ .* $/.test(code) && code.trim() ? code.slice(1, -1) : code;
      out.push(<code key={start}>{body}</code>);
    } else if (label !== undefined) out.push(link(safeHref(url), inline(label), start, raw));
    else if (auto !== undefined) out.push(link(safeHref(auto), [auto], start, raw));
    else if (bold1 !== undefined || bold2 !== undefined) out.push(<strong key={start}>{inline(bold1 ?? bold2)}</strong>);
    else out.push(<em key={start}>{inline(em1 ?? em2)}</em>);
    last = start + raw.length;
  }
  if (last < text.length) plain(text.slice(last));
  return out;
}

export type Block =
  | { kind: "heading"; level: number; text: string }
  | { kind: "list"; ordered: boolean; start: number; items: string[] }
  | { kind: "code"; lang: string; text: string }
  | { kind: "quote"; blocks: Block[] }
  | { kind: "rule" }
  | { kind: "table"; align: Align[]; head: string[]; rows: string[][] }
  | { kind: "para"; text: string };

export type Align = "left" | "center" | "right" | null;


const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const ITEM = /^\s{0,3}(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const TABLE_DELIMITER = /^\s{0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** A table row's cells: outer pipes optional, `\|` is a pipe inside a cell, and a code span's
 * pipes stay in the cell (as GFM reads them). */
export function tableCells(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let ticks = 0;
  const text = line.trim();
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\" && text[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (ch === "`") {
      let run = 0;
      while (text[i + run] === "`") run++;
      ticks = ticks === 0 ? run : ticks === run ? 0 : ticks;
      cell += "`".repeat(run);
      i += run - 1;
    } else if (ch === "|" && ticks === 0) {
      cells.push(cell);
      cell = "";
    } else cell += ch;
  }
  cells.push(cell);
  if (text.startsWith("|")) cells.shift();
  if (text.endsWith("|") && !text.endsWith("\\|") && cells.length > 0) cells.pop();
  return cells.map((c) => c.trim());
}

/** A header line and the delimiter line under it start a table when their cell counts agree. */
function tableStart(lines: string[], i: number): boolean {
  const head = lines[i];
  const delimiter = lines[i + 1];
  if (delimiter === undefined || !head.includes("|") || !TABLE_DELIMITER.test(delimiter)) return false;
  return tableCells(head).length === tableCells(delimiter).length;
}

function alignOf(cell: string): Align {
  const left = cell.startsWith(":");
  const right = cell.endsWith(":");
  return left && right ? "center" : right ? "right" : left ? "left" : null;
}

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || ITEM.test(line) || QUOTE.test(line) || RULE.test(line);
}

/** The block structure of Markdown text (exported for tests of the parser alone). */
export function blocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const out: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      const closing = new RegExp(`^\\s{0,3}${fence[1][0]}{${fence[1].length},}\\s*$`);
      const body: string[] = [];
      i++;
      while (i < lines.length && !closing.test(lines[i])) body.push(lines[i++]);
      i++; // the closing fence (or the end, while it streams)
      out.push({ kind: "code", lang: fence[2], text: body.join("\n") });
      continue;
    }
    if (RULE.test(line)) {
      out.push({ kind: "rule" });
      i++;
      continue;
    }
    if (tableStart(lines, i)) {
      const head = tableCells(line);
      const align = tableCells(lines[i + 1]).map(alignOf);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) {
        const cells = tableCells(lines[i++]);
        rows.push(head.map((_, c) => cells[c] ?? "")); // as many cells as the header: extra ones go
      }
      out.push({ kind: "table", align, head, rows });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      out.push({ kind: "heading", level: heading[1].length, text: heading[2] });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i])) body.push(QUOTE.exec(lines[i++])![1]);
      out.push({ kind: "quote", blocks: blocks(body.join("\n")) });
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      const ordered = item[2] !== undefined;
      const items: string[] = [];
      while (i < lines.length) {
        const next = ITEM.exec(lines[i]);
        if (next && (next[2] !== undefined) === ordered) items.push(next[3]);
        else if (items.length && /^\s{2,}\S/.test(lines[i])) items[items.length - 1] += `\n${lines[i].trim()}`;
        else break;
        i++;
      }
      out.push({ kind: "list", ordered, start: ordered ? Number(item[2]) : 1, items });
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i].trim() && !startsBlock(lines[i]) && !(para.length && tableStart(lines, i))) para.push(lines[i++]);
    out.push({ kind: "para", text: para.join("\n") });
  }
  return out;
}

function render(list: Block[]): ReactNode[] {
  return list.map((block, i) => {
    switch (block.kind) {
      case "heading": {
        // Inside a transcript or a card: a reply's `#` is a section, not the page's title.
        const Tag = `h${Math.min(6, block.level + 3)}` as "h4" | "h5" | "h6";
        return <Tag key={i}>{inline(block.text)}</Tag>;
      }
      case "list": {
        const items = block.items.map((item, j) => <li key={j}>{inline(item)}</li>);
        return block.ordered ? (
          <ol key={i} start={block.start === 1 ? undefined : block.start}>
            {items}
          </ol>
        ) : (
          <ul key={i}>{items}</ul>
        );
      }
      case "code":
        return (
          <div key={i} className="code-block">
            {block.lang && (
              <div className="code-lang" data-testid="code-lang">
                {block.lang}
              </div>
            )}
            <pre className="code">
              <code className={block.lang ? `language-${block.lang}` : undefined}>{block.text}</code>
            </pre>
          </div>
        );
      case "table":
        return (
          <div key={i} className="table-scroll">
            <table>
              <thead>
                <tr>
                  {block.head.map((cell, c) => (
                    <th key={c} style={block.align[c] ? { textAlign: block.align[c]! } : undefined}>
                      {inline(cell)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {block.rows.map((row, r) => (
                  <tr key={r}>
                    {row.map((cell, c) => (
                      <td key={c} style={block.align[c] ? { textAlign: block.align[c]! } : undefined}>
                        {inline(cell)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      case "quote":
        return <blockquote key={i}>{render(block.blocks)}</blockquote>;
      case "rule":
        return <hr key={i} />;
      case "para":
        return <p key={i}>{inline(block.text)}</p>;
    }
  });
}

export function Markdown({ text, testId }: { text: string; testId?: string }) {
  const rendered = useMemo(() => render(blocks(text)), [text]);
  return (
    <div className="markdown" data-testid={testId}>
      {rendered}
    </div>
  );
}
