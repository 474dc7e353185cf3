// What came with a message, as chips under it: images as thumbnails, files, folders and skills
// as chips whose text stays folded until asked for (it can be long; it must not flood the
// transcript).

import { useState } from "react";
import type { Attachment } from "../types";

const LABEL: Record<Attachment["kind"], string> = { file: "file", directory: "folder", skill: "skill", image: "image" };

function TextChip({ attachment }: { attachment: Attachment }) {
  const [open, setOpen] = useState(false);
  const lines = attachment.text ? attachment.text.split("\n").length : 0;
  return (
    <li className={`attachment attachment-${attachment.kind}`} data-testid="attachment-chip" data-kind={attachment.kind}>
      <button type="button" className="chip attachment-toggle" aria-expanded={open} disabled={!attachment.text} onClick={() => setOpen(!open)} title={lines ? `${lines} lines` : undefined}>
        <span className="attachment-kind">{LABEL[attachment.kind]}:</span> {attachment.name}
      </button>
      {open && (
        <pre className="code attachment-text" data-testid="attachment-text">
          <code>{attachment.text}</code>
        </pre>
      )}
    </li>
  );
}

export function Attachments({ items }: { items: Attachment[] }) {
  if (items.length === 0) return null;
  return (
    <ul className="attachments" aria-label="Attached" data-testid="attachments">
      {items.map((a, i) =>
        a.kind === "image" && a.data ? (
          <li key={i} className="attachment attachment-image" data-testid="attachment-chip" data-kind="image">
            <img src={`data:${a.mime_type || "image/png"};base64,${a.data}`} alt={a.name} title={a.name} />
          </li>
        ) : (
          <TextChip key={i} attachment={a} />
        ),
      )}
    </ul>
  );
}
