// The Servers link's mark while an MCP server is failing (issue 33, item 14): its notice used to
// be repeated as a message in every new session; now a session hears of a failure once, and the
// top bar says, on every page and for as long as it lasts, that servers are failing and which.
// Live from the WebSocket's server feed, so it comes and goes without a reload.

import { useEffect, useState } from "react";
import { live } from "../live";
import type { ServerInfo } from "../types";
import "../failing-servers.css";

function firstLine(text: string | null): string {
  return (text ?? "").split("\n")[0].trim();
}

export function FailingServersMark() {
  const [failing, setFailing] = useState<ServerInfo[]>([]);
  useEffect(() => live.onServers((message) => setFailing(message.servers.filter((s) => s.state === "error" && s.enabled !== false))), []);
  if (failing.length === 0) return null;
  const names = failing.map((s) => s.name).join(", ");
  const detail = failing.map((s) => `${s.name}: ${firstLine(s.error) || "failed"}`).join("\n");
  return (
    <span className="nav-failing" data-testid="nav-servers-failing" data-count={failing.length} title={`Failing, their tools are left out:\n${detail}`}>
      <span aria-hidden="true">⚠ {failing.length}</span>
      <span className="visually-hidden">
        {failing.length === 1 ? `(${names} is failing)` : `(${failing.length} failing: ${names})`}
      </span>
    </span>
  );
}
