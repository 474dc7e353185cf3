// The login form, shown whenever the API answers 401. The server sets an HttpOnly cookie.
// A single-user server (GET /api/health says `sign_in: "token"`) asks for the access token alone:
// it ignores any username. Until the server says, and if it cannot, both fields show.

import { useEffect, useState, type FormEvent } from "react";
import { api, ApiError } from "../api";
import { login } from "../store";

export function Login() {
  const [tokenOnly, setTokenOnly] = useState(false);
  useEffect(() => {
    let live = true;
    api.health().then(
      (health) => live && setTokenOnly(health.sign_in === "token"),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(() =>
    new URLSearchParams(window.location.search).get("login") === "failed"
      ? "That login link is not valid (any more). Sign in with the token instead."
      : null,
  );
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(tokenOnly ? "" : username.trim(), password);
    } catch (err) {
      setError(
        err instanceof ApiError && (err.status === 401 || err.status === 403)
          ? tokenOnly
            ? "Wrong access token."
            : "Wrong username or password."
          : err instanceof Error
            ? err.message
            : String(err),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login-page">
      <form className="login-card" onSubmit={submit} aria-label="Sign in" data-testid="login-form">
        <h1>Overseer</h1>
        <p className="muted">Sign in to see your agents and answer their requests.</p>
        {!tokenOnly && (
          <label>
            Username
            <input data-testid="login-username" autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} autoFocus />
          </label>
        )}
        <label>
          {tokenOnly ? "Access token" : "Password"}
          <input
            data-testid="login-password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            autoFocus={tokenOnly}
          />
        </label>
        <p className="muted small" data-testid="login-hint">
          {tokenOnly
            ? "The access token: OVERSEER_TOKEN, else the file token in the data folder (overseer serve prints a login link with it)."
            : "Your username and password, as configured under users:."}
        </p>
        {error && (
          <p className="error-text" role="alert" data-testid="login-error">
            {error}
          </p>
        )}
        <button type="submit" className="btn primary wide" data-testid="login-submit" disabled={busy || !password}>
          Sign in
        </button>
      </form>
    </main>
  );
}
