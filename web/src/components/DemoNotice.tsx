// The inbox's empty state while no model is set: what the offline demo is, and how to leave it.

import { useEffect, useState } from "react";
import { api } from "../api";
import "../person.css";

export function DemoNotice() {
  const [demo, setDemo] = useState(false);
  useEffect(() => {
    let live = true;
    api.modelSettings().then(
      (settings) => live && setDemo(settings.demo),
      () => undefined, // a notice, not a failure: without it the inbox still works
    );
    return () => {
      live = false;
    };
  }, []);
  if (!demo) return null;
  return (
    <section className="demo-notice" data-testid="demo-notice" aria-label="Offline demo">
      <h2>You are in the offline demo</h2>
      <p>
        No model is set, so new sessions play a scripted model: it lists the workspace, writes <code>notes.txt</code>{" "}
        (which asks for your approval here), runs <code>wc -l</code> in the shell and sums up. Start a session from the
        sidebar to see an approval.
      </p>
      <p>
        To leave the demo, choose a model and enter its API key in{" "}
        <a href="#/settings" data-testid="demo-settings-link">
          Settings → Model
        </a>
        ; new sessions use it at once.
      </p>
    </section>
  );
}
