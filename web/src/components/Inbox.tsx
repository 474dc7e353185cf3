// The home view: every pending approval across sessions, oldest first.

import { decidedList, pendingList, useAppState } from "../store";
import { ApprovalQueue } from "./ApprovalQueue";
import { DemoNotice } from "./DemoNotice";

export function Inbox() {
  const state = useAppState();
  const pending = pendingList(state);
  return (
    <main className="main inbox" data-testid="inbox" aria-labelledby="inbox-heading">
      <h1 id="inbox-heading">
        Waiting for you {pending.length > 0 && <span className="count">{pending.length}</span>}
      </h1>
      <ApprovalQueue
        pending={pending}
        decided={decidedList(state)}
        emptyText={
          state.loaded
            ? "Nothing is waiting for you. New requests from any session appear here."
            : state.live === "reconnecting"
              ? "Not loaded: Overseer's server cannot be reached. Requests appear here once it is back."
              : "Loading…"
        }
      />
      {state.loaded && pending.length === 0 && <DemoNotice />}
      <p className="muted shortcut-help" data-testid="shortcut-help">
        Keys on the focused request: <kbd>Y</kbd>/<kbd>Enter</kbd> allow once, <kbd>S</kbd> for the session,{" "}
        <kbd>A</kbd> always…, <kbd>N</kbd> deny, <kbd>R</kbd> deny with a reason, <kbd>E</kbd> edit the arguments.{" "}
        <kbd>Esc</kbd> closes what is open and never decides. A decision by key waits 4 s before it is sent:{" "}
        <kbd>Z</kbd> takes it back; a click is sent at once.
      </p>
    </main>
  );
}
