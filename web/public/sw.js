// Overseer's service worker: Web Push notifications for waiting approvals, with their buttons.
// A button POSTs its answer link (signed, single-use, made for the person who subscribed); a tap
// on the notification itself opens the link's confirmation page, which decides nothing by itself.

self.addEventListener("push", (event) => {
  const data = event.data ? event.data.json() : {};
  const actions = (data.actions || []).slice(0, 2); // browsers show at most two
  event.waitUntil(
    self.registration.showNotification(data.title || "Overseer", {
      body: data.body || "",
      tag: data.review || undefined, // a reminder replaces the first notification
      renotify: Boolean(data.reminder),
      requireInteraction: true,
      data: { review: data.review, actions },
      actions: actions.map((a) => ({ action: a.action, title: a.title })),
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  const { review, actions } = event.notification.data || {};
  event.notification.close();
  const chosen = (actions || []).find((a) => a.action === event.action);
  if (chosen) {
    // The link is the credential: no cookie goes with it. If it fails (already answered,
    // expired), the confirmation page says why.
    const answer = fetch(chosen.url, { method: "POST", credentials: "omit", headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? undefined : self.clients.openWindow(review)))
      .catch(() => self.clients.openWindow(review));
    event.waitUntil(answer);
  } else if (review) {
    event.waitUntil(self.clients.openWindow(review));
  }
});
