// Which standing rule "Always allow" writes for an MCP tool (issue 34, item 4): the exact call,
// or one narrowed by a single argument (`send(to:ops@example.com)`: later sends to that address,
// whatever their body). Shown in the card's Always panel when there is more than one choice.

import { ruleChoices } from "../alwaysRule";
import type { Approval } from "../types";

export function RuleChoices(props: {
  approval: Approval;
  chosen: string[];
  onChoose: (rules: string[]) => void;
  fieldKeys: (e: React.KeyboardEvent, onEnter: () => void) => void;
  onEnter: () => void;
}) {
  const { approval, chosen, onChoose, fieldKeys, onEnter } = props;
  const choices = ruleChoices(approval);
  if (choices.length < 2) return null;
  const same = (rules: string[]) => rules.length === chosen.length && rules.every((r, i) => r === chosen[i]);
  return (
    <fieldset className="scope" data-testid="rule-choices">
      <legend>Which later calls</legend>
      {choices.map((choice, i) => (
        <label key={choice.rules.join(",")}>
          <input
            type="radio"
            name={`rule-choice-${approval.id}`}
            data-testid={`rule-choice-${i}`}
            checked={same(choice.rules)}
            onChange={() => onChoose(choice.rules)}
            onKeyDown={(e) => fieldKeys(e, onEnter)}
          />{" "}
          {choice.label}: <code>{choice.rules.join(", ")}</code>
        </label>
      ))}
    </fieldset>
  );
}
