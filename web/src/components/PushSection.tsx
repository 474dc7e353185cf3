// Settings → Push notifications: turn on Web Push for this browser (push.ts's enablePush), so
// approval requests reach the person with the dashboard closed. Shows where this browser stands:
// on, blocked by the browser, not possible here, or off; a failure says why in words.

import { useEffect, useState } from "react";
import { enablePush } from "../push";

type PushState = "checking" | "unsupported" | "blocked" | "off" | "on";

function pushSupported(): boolean {
  return window.isSecureContext && "serviceWorker" in navigator && "PushManager" in window && typeof Notification !== "undefined";
}

/** Where this browser stands now: subscribed, blocked, or able to turn it on. */
async function currentState(): Promise<PushState> {
  if (!pushSupported()) return "unsupported";
  if (Notification.permission === "denied") return "blocked";
  const registration = await navigator.serviceWorker.getRegistration();
  const subscription = await registration?.pushManager.getSubscription();
  return subscription ? "on" : "off";
}

const STATUS: Record<PushState, string> = {
  checking: "Checking this browser…",
  unsupported: "This browser cannot get Web Push here (it needs HTTPS, or localhost, and a browser with push).",
  blocked: "Notifications are blocked for this site: allow them in the browser's site settings, then turn push on.",
  off: "Off in this browser.",
  on: "On in this browser: approval requests reach you with the dashboard closed.",
};

export function PushSection() {
  const [state, setState] = useState<PushState>("checking");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    currentState().then(
      (found) => live && setState(found),
      () => live && setState("off"),
    );
    return () => {
      live = false;
    };
  }, []);

  const turnOn = async () => {
    setBusy(true);
    setError(null);
    try {
      await enablePush();
      setState("on");
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      setError(`Push is not on: ${message}.`);
      setState(await currentState().catch(() => "off" as const));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="settings-section" aria-labelledby="push-heading" data-testid="push-section">
      <div className="section-head">
        <h2 id="push-heading">Push notifications</h2>
      </div>
      <p className="muted" data-testid="push-status" data-state={state}>
        {STATUS[state]}
      </p>
      {state !== "unsupported" && state !== "on" && (
        <button type="button" className="btn" data-testid="push-enable" disabled={busy || state === "checking"} onClick={() => void turnOn()}>
          {busy ? "Turning on…" : "Turn on push notifications"}
        </button>
      )}
      {error && (
        <p className="error-text" role="alert" data-testid="push-error">
          {error}
        </p>
      )}
    </section>
  );
}
