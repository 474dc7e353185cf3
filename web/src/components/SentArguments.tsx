// A file write's or edit's arguments once the call has run (issue 33, item 8): the text it sent,
// not a diff. What the call changed on disk is its step's diff, read from the checkpoints (under
// the card); a diff computed from the arguments ("+13 −0 · whole file") would be a second, guessed
// answer to the same question. Before the call runs, the approval card shows the diff against
// the file on disk (Arguments.tsx): that is a preview, not a record.

import { splitToolName } from "../format";

const WRITE_TOOLS = new Set(["write_file", "Write"]);
const EDIT_TOOLS = new Set(["edit_file", "Edit"]);
const TEXT_KEYS = ["content", "old_text", "new_text", "old_string", "new_string"];
const LABEL: Record<string, string> = {
  content: "Content sent",
  old_text: "Text to replace",
  old_string: "Text to replace",
  new_text: "Replacement",
  new_string: "Replacement",
};

/** Whether a call of this tool shows its arguments as sent once it ran (a file write or edit). */
export function showsSentText(name: string): boolean {
  const tool = splitToolName(name).tool;
  return WRITE_TOOLS.has(tool) || EDIT_TOOLS.has(tool);
}

function lineCount(text: string): string {
  const n = text === "" ? 0 : text.replace(/\n$/, "").split("\n").length;
  return `${n} line${n === 1 ? "" : "s"}`;
}

/** A write's or edit's arguments as sent: the path, each text folded, any other field as JSON. */
export function SentArguments({ args, recorded }: { args: Record<string, unknown>; recorded: boolean }) {
  const texts = TEXT_KEYS.filter((key) => typeof args[key] === "string");
  const others = Object.entries(args).filter(([key]) => key !== "path" && !texts.includes(key));
  return (
    <div className="arguments sent-arguments" data-testid="sent-arguments">
      {typeof args.path === "string" && (
        <p>
          <code data-testid="sent-path">{args.path}</code>
        </p>
      )}
      {texts.map((key) => (
        <details key={key} className="sent-text" data-testid="sent-text" data-key={key}>
          <summary>
            {LABEL[key] ?? key} <span className="muted small">({lineCount(String(args[key]))})</span>
          </summary>
          <pre className="code">
            <code>{String(args[key])}</code>
          </pre>
        </details>
      ))}
      {others.length > 0 && (
        <dl className="kv">
          {others.map(([key, value]) => (
            <div className="kv-row" key={key}>
              <dt>{key}</dt>
              <dd>
                <code className="kv-json">{JSON.stringify(value)}</code>
              </dd>
            </div>
          ))}
        </dl>
      )}
      <p className="muted small" data-testid="sent-note">
        {recorded
          ? "What it changed on disk is its step's diff, read from the workspace's checkpoints."
          : "What it changed on disk was not recorded: it has no checkpoint."}
      </p>
    </div>
  );
}
