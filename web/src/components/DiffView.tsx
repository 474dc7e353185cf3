// A file's diff as a code editor shows it: every line (a long diff scrolls inside its own region,
// never cut), syntax colouring from the file's extension, the hunk count and +/- totals above it,
// and, where the caller lets a person accept part of the change, a checkbox on each hunk.
// Reusable wherever a diff is shown: it takes a path and the rows (ShownLine[]) of any diff.

import { useMemo, type KeyboardEvent } from "react";
import type { ShownLine } from "../diff";
import { highlightDiff, type Token } from "../highlight";
import type { HunkShownLine } from "../hunks";
import "highlight.js/styles/github-dark.css";
import "../diffview.css";

/** Which hunks a person chose, for a diff whose hunks can be accepted one by one. */
export interface HunkChoice {
  chosen: ReadonlySet<number>;
  count: number;
  toggle: (hunk: number) => void;
}

export interface DiffViewProps {
  path: string;
  lines: ShownLine[] | HunkShownLine[];
  note?: string;
  warning?: string;
  /** No diff could be computed: no counts are shown ("+13 −0" would read as a file created whole). */
  unavailable?: boolean;
  choice?: HunkChoice;
}

const SIGN: Record<ShownLine["kind"], string> = { add: "+", del: "-", same: " ", gap: "", hunk: "" };

function Tokens({ tokens }: { tokens: Token[] }) {
  return (
    <>
      {tokens.map((token, i) =>
        token.className ? (
          <span key={i} className={token.className}>
            {token.text}
          </span>
        ) : (
          token.text
        ),
      )}
    </>
  );
}

function HunkBox({ hunk, path, choice }: { hunk: number; path: string; choice: HunkChoice }) {
  const checked = choice.chosen.has(hunk);
  // Enter toggles too, and never reaches the card's Enter (allow once): a key on a checkbox is about the checkbox.
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    choice.toggle(hunk);
  };
  return (
    <input
      type="checkbox"
      className="hunk-check"
      data-testid="hunk-check"
      data-hunk={hunk}
      checked={checked}
      aria-label={`Accept hunk ${hunk + 1} of ${choice.count} in ${path}`}
      onChange={() => choice.toggle(hunk)}
      onKeyDown={onKeyDown}
    />
  );
}

export function DiffView({ path, lines, note, warning, unavailable = false, choice }: DiffViewProps) {
  const rows = lines as HunkShownLine[];
  const added = rows.filter((l) => l.kind === "add").length;
  const removed = rows.filter((l) => l.kind === "del").length;
  const hunkCount = choice?.count ?? rows.filter((l) => l.kind === "hunk").length;
  const tokens = useMemo(() => (unavailable ? null : highlightDiff(path, rows)), [path, rows, unavailable]);
  const language = tokens ? "highlighted" : "plain";
  return (
    <div className="args-diff" data-testid="arg-diff" data-diff={unavailable ? "unavailable" : "shown"}>
      <div className="diff-file">
        <code>{path}</code>
        {unavailable ? (
          <span className="diff-stat muted" data-testid="diff-note">
            {" "}
            · diff unavailable
          </span>
        ) : (
          <span className="diff-stat" data-testid="diff-stat">
            <span className="diff-stat-add">+{added}</span> <span className="diff-stat-del">−{removed}</span>
            {hunkCount > 0 && (
              <span className="muted" data-testid="diff-hunks">
                {" "}
                · {hunkCount} hunk{hunkCount === 1 ? "" : "s"}
              </span>
            )}
            {note && (
              <span className="muted" data-testid="diff-note">
                {" "}
                · {note}
              </span>
            )}
          </span>
        )}
      </div>
      {warning && (
        <p className="diff-warning" role="note" data-testid="diff-warning">
          {warning}
        </p>
      )}
      {/* Focusable so a keyboard can scroll a long diff; it holds every line, none hidden. */}
      <div className="diff-scroll" role="region" aria-label={`Changes to ${path}`} tabIndex={0} data-testid="diff-scroll">
        <pre className="code diff" data-colouring={language}>
          <code>
            {rows.map((line, i) => {
              const hunk = line.kind === "hunk" && choice && line.hunk !== undefined && line.hunk >= 0 ? line.hunk : null;
              const off = choice !== undefined && line.hunk !== undefined && !choice.chosen.has(line.hunk);
              const lineTokens = tokens?.[i];
              return (
                <span
                  key={i}
                  className={`diff-line diff-${line.kind}${line.noEol ? " no-eol" : ""}${off ? " hunk-off" : ""}`}
                  data-testid={line.kind === "same" ? "diff-context" : `diff-${line.kind}`}
                >
                  {hunk !== null && choice && <HunkBox hunk={hunk} path={path} choice={choice} />}
                  {SIGN[line.kind]}
                  {lineTokens ? <Tokens tokens={lineTokens} /> : line.text}
                  {"\n"}
                </span>
              );
            })}
          </code>
        </pre>
      </div>
    </div>
  );
}
