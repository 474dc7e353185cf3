// Settings → Checkpoints (issue 32): the disk the workspaces' checkpoints take, in all and per
// workspace, and what retention keeps. An admin's only: it names the host's folders.

import { api } from "../api";
import { formatDisk } from "../checkpoints";
import { useLoad } from "../hooks";
import { useAppState } from "../store";
import type { CheckpointUsage } from "../types";
import "../checkpoints.css";

function Usage() {
  const { data: usage, error, reload } = useLoad<CheckpointUsage>(() => api.checkpointsUsage());
  return (
    <section className="settings-section" aria-labelledby="checkpoints-heading" data-testid="checkpoints-section">
      <h2 id="checkpoints-heading">Checkpoints</h2>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {usage && (
        <>
          <p>
            {usage.enabled ? "Kept before every step that may change a workspace" : "Off: no checkpoints are taken"} ·{" "}
            <strong data-testid="checkpoints-disk">{formatDisk(usage.bytes)}</strong> on disk in <code>{usage.dir}</code>
          </p>
          <p className="muted small" data-testid="checkpoints-retention">
            Per workspace: the last {usage.keep_last} checkpoints, none older than {usage.keep_days} days (a running
            session's are all kept). Set with checkpoints: {"{keep_last, keep_days}"} in the configuration.
          </p>
          {usage.workspaces.length > 0 && (
            <div className="table-scroll">
              <table className="checkpoints-table" data-testid="checkpoints-workspaces">
                <thead>
                  <tr>
                    <th scope="col">Workspace</th>
                    <th scope="col">Checkpoints</th>
                    <th scope="col">On disk</th>
                  </tr>
                </thead>
                <tbody>
                  {usage.workspaces.map((w) => (
                    <tr key={w.workspace} data-testid="checkpoints-workspace" data-workspace={w.workspace}>
                      <td>
                        <code>{w.workspace}</code>
                      </td>
                      <td data-testid="checkpoints-count">{w.checkpoints}</td>
                      <td>{formatDisk(w.bytes)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <button type="button" className="btn small" data-testid="checkpoints-refresh" onClick={reload}>
            Measure again
          </button>
        </>
      )}
    </section>
  );
}

export function CheckpointsSection() {
  const admin = useAppState().me?.role === "admin";
  return admin ? <Usage /> : null;
}
