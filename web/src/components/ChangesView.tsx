// A session's "Changes" tab: every file it wrote or edited, with each change as a diff (see
// changes.ts for what is exact and what is not).

import { formatTime } from "../format";
import type { FileChanges } from "../changes";
import { DiffView } from "./Arguments";
import "../person.css";

export function ChangesView({ files }: { files: FileChanges[] }) {
  if (files.length === 0) {
    return (
      <p className="muted changes-empty" data-testid="changes-empty">
        This session has not written or edited any file.
      </p>
    );
  }
  const added = files.reduce((n, f) => n + f.added, 0);
  const removed = files.reduce((n, f) => n + f.removed, 0);
  return (
    <section className="changes" aria-label="Files changed" data-testid="changes">
      <p className="changes-summary" data-testid="changes-summary">
        {files.length} file{files.length === 1 ? "" : "s"} changed · <span className="diff-stat-add">+{added}</span>{" "}
        <span className="diff-stat-del">−{removed}</span>
      </p>
      {files.map((file) => (
        <details key={file.path} className="changes-file" data-testid="changes-file" data-path={file.path} open>
          <summary>
            <code>{file.path}</code>{" "}
            <span className="muted small">
              {file.changes.length} change{file.changes.length === 1 ? "" : "s"} · <span className="diff-stat-add">+{file.added}</span>{" "}
              <span className="diff-stat-del">−{file.removed}</span>
            </span>
          </summary>
          {file.changes.map((change) => (
            <div key={change.callId} className="changes-change" data-testid="changes-change" data-kind={change.kind}>
              <DiffView
                path={file.path}
                lines={change.lines}
                note={change.at ? `${change.note} at ${formatTime(change.at)}` : change.note}
              />
            </div>
          ))}
        </details>
      ))}
    </section>
  );
}
