// Untrusted content (issue 34, item 5). Two small marks:
// - OutsideTextTag: on a tool card whose result is text from outside (a web page, a fetched URL,
//   a server marked `trust: untrusted`). The model got it behind a line saying it is data, not
//   instructions; the tag tells the person the same, and where it came from.
// - ToolFlags: on the Servers page, a tool whose description or parameter descriptions read like
//   orders to the model, with each matched reason. The gateway does not re-export such a tool.

import type { ServerTool } from "../types";
import "../untrusted.css";

export function OutsideTextTag({ source }: { source?: string | null }) {
  if (!source) return null;
  return (
    <span
      className="chip outside-text"
      data-testid="outside-text"
      title={`Outside text from ${source}: the model was told to read it as data, not instructions`}
    >
      outside text
    </span>
  );
}

export function ToolFlagBadge({ tool }: { tool: ServerTool }) {
  const flags = tool.flags ?? [];
  if (flags.length === 0) return null;
  return (
    <span className="badge tool-flagged" data-testid="tool-flagged" title="Its text reads like instructions to the model">
      flagged
    </span>
  );
}

export function ToolFlags({ tool }: { tool: ServerTool }) {
  const flags = tool.flags ?? [];
  if (flags.length === 0) return null;
  return (
    <div className="tool-flags" data-testid="tool-flags">
      <p className="tool-flags-head">
        Its text reads like instructions to the model; the gateway does not offer this tool to outside clients.
      </p>
      <ul>
        {flags.map((flag, i) => (
          <li key={i} data-testid="tool-flag" data-kind={flag.kind}>
            <strong>{flag.where}</strong> {flag.reason}
            {flag.excerpt && (
              <>
                : <code>{flag.excerpt}</code>
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
