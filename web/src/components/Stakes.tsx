// What a waiting call puts at stake (issue 34, item 4): its rank by the tool's annotations
// (destructive, open-world, read-only, in words), and each argument that carries text from an
// earlier tool result of the session (a secret read a moment ago going out in a `body`).

import type { Approval } from "../types";
import "../stakes.css";

type StakeKind = NonNullable<Approval["stakes"]>[number]["kind"];

const STAKE_CLASS: Record<StakeKind, string> = {
  destructive: "stake-destructive",
  open_world: "stake-open-world",
  read_only: "stake-read-only",
};

/** The stakes line and the result-text flags; nothing for a call with neither. */
export function Stakes({ approval }: { approval: Approval }) {
  const stakes = approval.stakes ?? [];
  const carried = approval.carried_results ?? [];
  if (stakes.length === 0 && carried.length === 0) return null;
  return (
    <div className="stakes" data-testid="stakes">
      {carried.map((flag) => (
        <p key={`${flag.argument}:${flag.tool_call_id}`} className="carried-flag" role="alert" data-testid="carried-flag">
          <strong>
            <code>{flag.argument}</code>: {flag.text}.
          </strong>{" "}
          {flag.looks_secret
            ? "It looks like a credential: check where this call sends it before you allow it."
            : "Check that it belongs here."}
        </p>
      ))}
      {stakes.length > 0 && (
        <ul className="stake-list" aria-label="What is at stake (the server says)">
          {stakes.map((stake) => (
            <li
              key={stake.kind}
              className={`stake ${STAKE_CLASS[stake.kind]}`}
              data-testid="stake"
              data-kind={stake.kind}
              title="From the tool's annotations: a hint from its server, not verified"
            >
              {stake.text}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
