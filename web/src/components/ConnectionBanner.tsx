// Says so when Overseer's server cannot be reached (down or restarting): what is shown may be
// stale, answers are not sent, and everything reloads by itself once it is back.

import { useAppState } from "../store";
import "../person.css";

export function ConnectionBanner() {
  const { live, loaded } = useAppState();
  if (live !== "reconnecting") return null;
  return (
    <div className="connection-banner" role="alert" data-testid="connection-banner">
      <strong>Overseer's server cannot be reached</strong> (stopped or restarting). Reconnecting…{" "}
      {loaded
        ? "What you see may be out of date, and answers are not sent until it is back."
        : "Sessions and requests load as soon as it is back."}
    </div>
  );
}
