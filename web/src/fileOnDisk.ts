// The file a pending write or edit would change, as it is on disk now, for the card's diff.

import { useEffect, useState } from "react";
import { api } from "./api";
import type { Approval, Schemas, Sent } from "./types";

/** `content` is null when there is nothing to compare: no such file, binary, or too large (`note`). */
export type FileOnDisk = Sent<Schemas["FileOnDiskOut"]>;

const PREVIEWED = new Set(["mcp__file__write_file", "mcp__file__edit_file"]);

/**
 * undefined: this call writes no file (or the file could not be read: the card then shows the
 * arguments alone, as before); null: still loading; else the file as it is now.
 */
export function useFileOnDisk(approval: Approval): FileOnDisk | null | undefined {
  const wanted = PREVIEWED.has(approval.tool_name) && approval.status === "pending";
  const [file, setFile] = useState<FileOnDisk | null | undefined>(wanted ? null : undefined);
  const path = typeof approval.arguments.path === "string" ? approval.arguments.path : "";
  useEffect(() => {
    if (!wanted) return;
    let live = true;
    setFile(null);
    api.fileOnDisk(approval.id).then(
      (found) => live && setFile(found),
      () => live && setFile(undefined),
    );
    return () => {
      live = false;
    };
  }, [approval.id, wanted, path]);
  return wanted ? file : undefined;
}
