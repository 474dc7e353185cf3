// "Sign in" for a remote MCP server that asks for OAuth (issue 15). Admins start the sign-in here:
// Overseer answers with the authorization server's page, opened in a new tab; the provider sends
// that tab back to Overseer's /oauth/callback, which finishes the sign-in and reconnects the
// server. This shows where the sign-in stands; it never sees a token.

import { useCallback, useEffect, useState } from "react";
import { reportUnauthorized } from "../api";
import type { Schemas, Sent } from "../types";

/** What GET /api/servers/{name}/sign-in says (backend/api/oauth.py, SignInState). */
export type SignInState = Sent<Schemas["SignInState"]>;

type Shown = "unreachable" | "needs-sign-in" | "waiting" | "signed-in" | "not-signed-in";

async function call<T>(method: "GET" | "POST", path: string): Promise<T> {
  const response = await fetch(path, { method, credentials: "same-origin", headers: { Accept: "application/json" } });
  if (response.status === 401) reportUnauthorized();
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const detail = body && typeof body === "object" && "detail" in body ? String((body as { detail: unknown }).detail) : "";
    throw new Error(detail || `${response.status} ${response.statusText}`);
  }
  return body as T;
}

function shown(state: SignInState, waiting: boolean): Shown {
  // A server that cannot be reached (DNS, refused) has not asked for a sign-in: say what is wrong.
  if (state.unreachable && !state.needs_sign_in) return "unreachable";
  if (state.needs_sign_in) return waiting || state.pending ? "waiting" : "needs-sign-in";
  if (state.signed_in) return "signed-in";
  return waiting || state.pending ? "waiting" : "not-signed-in";
}

const LABEL: Record<Exclude<Shown, "unreachable">, string> = {
  "needs-sign-in": "Needs sign-in",
  waiting: "Waiting for the sign-in in the other tab…",
  "signed-in": "Signed in",
  "not-signed-in": "Not signed in",
};

/** The sign-in of server `name`; `version` changes whenever the server does (refetches its state). */
export function ServerSignIn({ name, admin, version }: { name: string; admin: boolean; version: unknown }) {
  const [state, setState] = useState<SignInState | null>(null);
  const [url, setUrl] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const path = `/api/servers/${encodeURIComponent(name)}`;

  const refresh = useCallback(() => {
    call<SignInState>("GET", `${path}/sign-in`)
      .then(setState)
      .catch(() => setState(null)); // a server that is gone or restarting: its card says so
  }, [path]);

  useEffect(refresh, [refresh, version]);

  if (state === null || !state.oauth) return null;
  const now = shown(state, url !== null && !state.signed_in);

  const signIn = async () => {
    // Opened now, inside the click, so no popup blocker stops it; pointed at the page once known.
    const tab = window.open("", "_blank");
    if (tab) tab.opener = null; // the provider's page must not reach back into the dashboard
    setBusy(true);
    setError(null);
    try {
      const started = await call<{ authorization_url: string }>("POST", `${path}/login`);
      setUrl(started.authorization_url);
      if (tab) tab.location.href = started.authorization_url;
      refresh();
    } catch (e) {
      tab?.close();
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div
      className="server-sign-in"
      data-testid="server-sign-in"
      data-sign-in={now}
      style={{ display: "flex", flexWrap: "wrap", gap: "0.5rem", alignItems: "center", margin: "0.4rem 0" }}
    >
      <span className={`badge ${now === "signed-in" ? "server-ready" : "server-error"}`} data-testid="server-sign-in-state">
        {now === "unreachable" ? `Unreachable: ${state.unreachable}` : LABEL[now]}
      </span>
      {admin && (
        <button type="button" className="btn small" data-testid="server-sign-in-button" disabled={busy} onClick={() => void signIn()}>
          {state.signed_in && !state.needs_sign_in ? "Sign in again" : "Sign in"}
        </button>
      )}
      {url && now === "waiting" && (
        <a className="small" href={url} target="_blank" rel="noopener noreferrer" data-testid="server-sign-in-link">
          Open the sign-in page
        </a>
      )}
      {!admin && now === "needs-sign-in" && <span className="muted small">An admin can sign in here, or run `overseer mcp login {name}`.</span>}
      {error && (
        <p className="error-text" role="alert" data-testid="server-sign-in-error">
          {error}
        </p>
      )}
    </div>
  );
}
