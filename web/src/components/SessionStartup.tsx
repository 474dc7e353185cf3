// Above the composer: what is starting while a session's first answer is on its way (each MCP
// server: starting / ready / failed; the model: connecting), and what runs without asking here.

import { splitToolName } from "../format";
import { useManagedPolicy } from "../managed";
import { useStandingRules } from "../standing";
import type { ServerInfo } from "../types";
import "../standing.css";

const SERVER_WORD: Record<ServerInfo["state"], string> = {
  starting: "starting…",
  ready: "ready",
  error: "failed",
  stopped: "off",
};

/** While the run waits for its first model output: servers as they start, then the model. */
export function StartupProgress({ servers, waiting }: { servers: ServerInfo[] | null; waiting: boolean }) {
  if (!waiting || servers === null) return null;
  const shown = servers.filter((s) => s.state !== "stopped");
  const starting = shown.some((s) => s.state === "starting");
  return (
    <div className="startup" role="status" aria-live="polite" data-testid="startup-progress">
      {shown.map((s) => (
        <span key={s.name} className={`startup-item startup-${s.state}`} data-testid="startup-server" data-server={s.name} data-state={s.state} title={s.error ?? undefined}>
          {s.name}: {SERVER_WORD[s.state]}
        </span>
      ))}
      <span className="startup-item" data-testid="startup-model" data-state={starting ? "waiting" : "connecting"}>
        model: {starting ? "waits for the servers" : "connecting…"}
      </span>
    </div>
  );
}

/** "Runs without asking": the tools and allow rules that apply to this session, from the server. */
export function StandingStrip({ sessionId, mode, servers }: { sessionId: string; mode: string; servers: ServerInfo[] | null }) {
  const toolCount = servers?.reduce((n, s) => n + s.tools.length, 0) ?? 0;
  const standing = useStandingRules(sessionId, mode, toolCount);
  const managed = useManagedPolicy();
  if (!standing) return null;
  const tools = standing.tools.map((name) => {
    const { server, tool } = splitToolName(name);
    return server ? `${server}.${tool}` : tool;
  });
  const rules = standing.allow_rules.map((r) => r.rule);
  const nothing = tools.length === 0 && rules.length === 0;
  return (
    <p className="auto-strip" data-testid="auto-approve-strip">
      <span className="muted">Runs without asking:</span>{" "}
      <span data-testid="standing-tools">{nothing ? "nothing" : tools.join(", ")}</span>
      {rules.length > 0 && (
        <>
          {tools.length > 0 && "; "}
          <span className="muted">rules</span> <span data-testid="standing-rules">{rules.join(", ")}</span>
        </>
      )}
      {standing.no_writes && <span className="muted"> (plan mode: no writes)</span>} · <a href="#/settings">change</a>
      {managed && managed.rules.length > 0 && (
        <>
          {" · "}
          <span className="muted">locked by the managed policy:</span>{" "}
          <span data-testid="standing-managed" title={`Locked by ${managed.source}: no one here can change these`}>
            {managed.rules.map((r) => `${r.effect} ${r.rule}`).join(", ")}
          </span>
        </>
      )}
    </p>
  );
}
