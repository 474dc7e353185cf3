// Says so, in red and on every page, when shell commands run outside the kernel sandbox
// (an admin set `sandbox: off`): nothing confines what an allowed command can reach.

import { useEffect, useState } from "react";
import { api } from "../api";
import "../person.css";

export function SandboxBanner() {
  const [warning, setWarning] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api.health().then(
      (health) => live && setWarning(health.sandbox?.warning ?? null),
      () => undefined, // the connection banner speaks for a server that cannot be reached
    );
    return () => {
      live = false;
    };
  }, []);
  if (!warning) return null;
  return (
    <div className="sandbox-banner" role="alert" data-testid="sandbox-banner">
      <strong>Commands run unconfined.</strong> {warning.replace(/^commands run unconfined:?\s*/, "")} — an allowed
      shell command can read and change anything your user can.
    </div>
  );
}
