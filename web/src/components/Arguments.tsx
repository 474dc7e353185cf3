// How a tool call's arguments are shown: a shell command in full, a file edit as a diff, URLs
// with their host highlighted, anything else as key/value with a raw-JSON toggle.

import { useMemo, useState, type ReactNode } from "react";
import { addedLines, applyEdit, diffLines } from "../diff";
import { FILE_UNAVAILABLE, type FileOnDiskState } from "../fileOnDisk";
import { splitToolName } from "../format";
import { reviewOf, shownHunks } from "../hunks";
import { DiffView, type HunkChoice } from "./DiffView";

// The diff view lives in its own module; Changes and step diffs import it from here too.
export { DiffView };

const COLLAPSE_LINES = 12;
const URL_PATTERN = /https?:\/\/[^\s"'<>`)\]]+/g;

/** Text with every http(s) URL's host marked, so a look-alike or a user@ prefix stands out. */
export function UrlText({ text }: { text: string }): ReactNode {
  const out: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    const start = match.index ?? 0;
    if (start > last) out.push(text.slice(last, start));
    out.push(<UrlParts key={start} url={match[0]} />);
    last = start + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return <>{out}</>;
}

function UrlParts({ url }: { url: string }) {
  const schemeEnd = url.indexOf("//") + 2;
  const rest = url.slice(schemeEnd);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
  const path = authorityEnd === -1 ? "" : rest.slice(authorityEnd);
  const at = authority.lastIndexOf("@");
  const userinfo = at === -1 ? "" : authority.slice(0, at + 1);
  const host = at === -1 ? authority : authority.slice(at + 1);
  return (
    <span className="url" data-testid="url">
      <span className="url-dim">{url.slice(0, schemeEnd)}</span>
      {userinfo && (
        <span className="url-userinfo" title="Text before @ is not the host">
          {userinfo}
        </span>
      )}
      <mark className="url-host" data-testid="url-host" title="The host this call talks to">
        {host}
      </mark>
      <span className="url-dim">{path}</span>
    </span>
  );
}

function Collapsible({ lines, children }: { lines: number; children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const long = lines > COLLAPSE_LINES;
  return (
    <div className={`collapsible${long && !open ? " collapsed" : ""}`}>
      {children}
      {long && (
        <button type="button" className="link-button show-all" onClick={() => setOpen(!open)} aria-expanded={open}>
          {open ? "Show less" : `Show all (${lines} lines)`}
        </button>
      )}
    </div>
  );
}

/** Said where a diff against the file on disk cannot be computed (its request failed). */
export const DIFF_UNAVAILABLE = "the file on disk could not be read: diff unavailable";

/** A whole-file write: against the file on disk when it is known, else every line added. */
function WriteDiff(props: { path: string; content: string; onDisk?: FileOnDiskState; choice?: HunkChoice }) {
  const { path, content, onDisk, choice } = props;
  const known = onDisk === FILE_UNAVAILABLE ? null : onDisk;
  const review = useMemo(() => reviewOf("write_file", { path, content }, known), [path, content, known]);
  const shown = useMemo(() => (review ? shownHunks(review.hunks) : null), [review]);
  if (onDisk === FILE_UNAVAILABLE) {
    // Every line as added would hide what the write deletes: show the text sent, as no diff.
    const sent = addedLines(content).map((line) => ({ kind: "same" as const, text: line.text }));
    return <DiffView path={path} lines={sent} unavailable warning={`${DIFF_UNAVAILABLE}; the new content as sent:`} />;
  }
  if (onDisk === undefined || onDisk === null) {
    const note = onDisk === null ? "comparing with the file on disk…" : "whole file (created or replaced)";
    return <DiffView path={path} lines={addedLines(content)} note={note} />;
  }
  if (!onDisk.exists) return <DiffView path={path} lines={addedLines(content)} note="new file" />;
  if (onDisk.content === null || !review || !shown) {
    return <DiffView path={path} lines={addedLines(content)} note={`overwrites the existing file (${onDisk.note ?? "unreadable"}: not compared)`} />;
  }
  const same = review.hunks.count === 0;
  return (
    <DiffView
      path={path}
      lines={shown}
      note={same ? "overwrites the existing file with the same content" : "overwrites the existing file"}
      choice={choice && review.hunks.count > 1 ? choice : undefined}
    />
  );
}

/** An edit: in the context of the file on disk when its old text occurs there once. */
function EditDiff(props: { path: string; before: string; after: string; onDisk?: FileOnDiskState; choice?: HunkChoice }) {
  const { path, before, after, onDisk, choice } = props;
  const bare = useMemo(() => diffLines(before, after), [before, after]);
  const known = onDisk === FILE_UNAVAILABLE ? null : onDisk;
  const review = useMemo(() => reviewOf("edit_file", { path, old_text: before, new_text: after }, known), [path, before, after, known]);
  const shown = useMemo(() => (review ? shownHunks(review.hunks) : null), [review]);
  if (onDisk === FILE_UNAVAILABLE) {
    return <DiffView path={path} lines={bare} warning={`${DIFF_UNAVAILABLE} in its context; the replaced text alone:`} />;
  }
  if (!onDisk || onDisk.content === null) {
    const warning = onDisk && !onDisk.exists ? "The file does not exist: this edit will fail." : undefined;
    return <DiffView path={path} lines={bare} note={onDisk === null ? "finding it in the file…" : undefined} warning={warning} />;
  }
  if (!review || !shown) {
    const { count } = applyEdit(onDisk.content, before, after);
    const warning =
      count === 0
        ? "The old text is not in the file as it is now: this edit will fail."
        : `The old text occurs ${count} times in the file: this edit will fail (it must occur once).`;
    return <DiffView path={path} lines={bare} warning={warning} />;
  }
  return <DiffView path={path} lines={shown} note="in context" choice={choice && review.hunks.count > 1 ? choice : undefined} />;
}

function Value({ value }: { value: unknown }) {
  if (typeof value === "string") {
    if (value.includes("\n")) {
      return (
        <Collapsible lines={value.split("\n").length}>
          <pre className="code">
            <code>
              <UrlText text={value} />
            </code>
          </pre>
        </Collapsible>
      );
    }
    return (
      <span className="kv-string">
        <UrlText text={value} />
      </span>
    );
  }
  return <code className="kv-json">{JSON.stringify(value)}</code>;
}

function KeyValues({ args, skip = [] }: { args: Record<string, unknown>; skip?: string[] }) {
  const entries = Object.entries(args).filter(([key]) => !skip.includes(key));
  if (entries.length === 0) return null;
  return (
    <dl className="kv" data-testid="arg-kv">
      {entries.map(([key, value]) => (
        <div className="kv-row" key={key}>
          <dt>{key}</dt>
          <dd>
            <Value value={value} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

const SHELL_TOOLS = new Set(["exec", "bash", "Bash", "shell", "run_command"]);
const WRITE_TOOLS = new Set(["write_file", "Write"]);
const EDIT_TOOLS = new Set(["edit_file", "Edit"]);

interface ArgumentsViewProps {
  name: string;
  args: Record<string, unknown>;
  /** Whether the raw JSON shows, for a parent that closes it (the approval card's Esc). */
  raw?: boolean;
  /** The file a write or edit would change, as it is now (the approval card): undefined when
   * unknown, null while it loads, FILE_UNAVAILABLE when it could not be fetched. */
  onDisk?: FileOnDiskState;
  onRawChange?: (raw: boolean) => void;
  /** Checkboxes on a write's or edit's hunks, for a card that can allow part of the change. */
  choice?: HunkChoice;
}

export function ArgumentsView({ name, args, raw: rawProp, onRawChange, onDisk, choice }: ArgumentsViewProps) {
  const [rawState, setRawState] = useState(false);
  const raw = rawProp ?? rawState;
  const setRaw = onRawChange ?? setRawState;
  const tool = splitToolName(name).tool;
  let body: ReactNode;

  if (SHELL_TOOLS.has(tool) && typeof args.command === "string") {
    const command = args.command;
    body = (
      <>
        <Collapsible lines={command.split("\n").length}>
          <pre className="code shell" data-testid="arg-command" aria-label="Shell command">
            <code>
              <UrlText text={command} />
            </code>
          </pre>
        </Collapsible>
        <KeyValues args={args} skip={["command"]} />
      </>
    );
  } else if (WRITE_TOOLS.has(tool) && typeof args.path === "string" && typeof args.content === "string") {
    body = (
      <>
        <WriteDiff path={args.path} content={args.content} onDisk={onDisk} choice={choice} />
        <KeyValues args={args} skip={["path", "content"]} />
      </>
    );
  } else if (
    EDIT_TOOLS.has(tool) &&
    typeof args.path === "string" &&
    typeof (args.old_text ?? args.old_string) === "string" &&
    typeof (args.new_text ?? args.new_string) === "string"
  ) {
    const before = String(args.old_text ?? args.old_string);
    const after = String(args.new_text ?? args.new_string);
    body = (
      <>
        <EditDiff path={args.path} before={before} after={after} onDisk={onDisk} choice={choice} />
        <KeyValues args={args} skip={["path", "old_text", "new_text", "old_string", "new_string"]} />
      </>
    );
  } else if (Object.keys(args).length === 0) {
    body = <p className="muted">No arguments.</p>;
  } else {
    body = <KeyValues args={args} />;
  }

  return (
    <div className="arguments">
      {raw ? (
        <pre className="code raw-json" data-testid="arg-raw">
          <code>{JSON.stringify(args, null, 2)}</code>
        </pre>
      ) : (
        body
      )}
      <button
        type="button"
        className="link-button raw-toggle"
        aria-pressed={raw}
        data-testid="raw-toggle"
        onClick={() => setRaw(!raw)}
      >
        {raw ? "Formatted view" : "Raw JSON"}
      </button>
    </div>
  );
}
