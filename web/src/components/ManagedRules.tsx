// The managed policy's rules in the Settings rules table: locked, with the file they come from, and
// no Remove button (the host refuses any change to them with a 403 naming the setting).

import { useManagedPolicy, type ManagedPolicy } from "../managed";
import "../managed.css";

/** A padlock drawn inline: an emoji lock is a blank box where no emoji font is installed. */
function Padlock() {
  return (
    <svg className="padlock" aria-hidden="true" viewBox="0 0 16 16" width="12" height="12">
      <rect x="3" y="7" width="10" height="8" rx="1.5" fill="currentColor" />
      <path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" strokeWidth="1.6" />
    </svg>
  );
}

const SWITCH_TEXT: [keyof ManagedPolicy, string][] = [
  ["disable_allow_always", "“Always allow” is turned off"],
  ["disable_auto_approve", "Auto-approve is turned off"],
  ["disable_approve_all", "--approve all is turned off"],
  ["disable_unsandboxed", "Commands never run outside the sandbox"],
];

/** Table rows for the managed rules (placed first: they are evaluated before every other rule). */
export function ManagedRuleRows({ policy }: { policy: ManagedPolicy | null }) {
  if (!policy) return null;
  return (
    <>
      {policy.rules.map((r) => (
        <tr key={`managed-${r.effect}-${r.rule}`} data-testid="managed-rule-row" data-effect={r.effect} className="managed-row">
          <td>
            <span className={`badge effect-${r.effect}`}>{r.effect}</span>
          </td>
          <td>
            <code className="rule-text">{r.rule}</code>
            <span className="managed-source" data-testid="managed-rule-source">
              managed policy: {policy.source}
            </span>
          </td>
          <td>
            <span className="badge locked-badge" data-testid="managed-lock" title={`Locked by the managed policy (${policy.source}: ${r.setting}); no one here can change it`}>
              <Padlock /> Locked
            </span>
          </td>
        </tr>
      ))}
    </>
  );
}

/** What the managed policy turns off, in words, under the rules table. */
export function ManagedSwitches({ policy }: { policy: ManagedPolicy | null }) {
  if (!policy) return null;
  const on = SWITCH_TEXT.filter(([key]) => policy[key] === true).map(([, text]) => text);
  if (on.length === 0 && policy.blocked_servers.length === 0) return null;
  return (
    <p className="managed-switches muted" data-testid="managed-switches">
      <Padlock /> Managed policy ({policy.source}): {[...on, ...policy.blocked_servers.map((s) => `server ${s.name} is not allowed`)].join(" · ")}
    </p>
  );
}

export { useManagedPolicy };
