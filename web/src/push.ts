// Web Push for the dashboard installed as an app: register the service worker (public/sw.js) at
// start, and, when the person asks, subscribe this browser to approval notifications.
// The host keeps the subscription as the signed-in person's: its buttons answer as them.

export function registerServiceWorker(): void {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.register("/sw.js").catch(() => undefined); // the dashboard works without it
}

function keyBytes(base64url: string): Uint8Array {
  const padded = (base64url + "===".slice((base64url.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

/** Ask for permission and subscribe; throws with a readable message when it cannot. */
export async function enablePush(): Promise<void> {
  if (!("serviceWorker" in navigator) || !("PushManager" in window)) throw new Error("this browser has no Web Push");
  if ((await Notification.requestPermission()) !== "granted") throw new Error("notifications are not allowed for this site (allow them in the browser's site settings)");
  const keyResponse = await fetch("/api/push/vapid-key", { credentials: "same-origin" });
  if (!keyResponse.ok) throw new Error("Web Push is off on this Overseer (notify.webpush)");
  const { public_key } = (await keyResponse.json()) as { public_key: string };
  const registration = await navigator.serviceWorker.ready;
  const subscription = await registration.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: keyBytes(public_key) as BufferSource,
  });
  const saved = await fetch("/api/push/subscriptions", {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(subscription.toJSON()),
  });
  if (!saved.ok) throw new Error(`the subscription was refused (${saved.status})`);
}
