// The file a pending write or edit would change, as it is on disk now, for the card's diff.

import { useEffect, useState } from "react";
import { api } from "./api";
import { useAppState } from "./store";
import type { Approval, Schemas, Sent } from "./types";

/** `content` is null when there is nothing to compare: no such file, binary, or too large (`note`). */
export type FileOnDisk = Sent<Schemas["FileOnDiskOut"]>;

/** The request for the file failed (the server could not be reached): no diff can be computed. */
export const FILE_UNAVAILABLE = "unavailable";

/** What the card knows of the file: see `useFileOnDisk`. */
export type FileOnDiskState = FileOnDisk | null | undefined | typeof FILE_UNAVAILABLE;

const PREVIEWED = new Set(["mcp__file__write_file", "mcp__file__edit_file"]);

/**
 * undefined: this call writes no file; null: still loading; FILE_UNAVAILABLE: the file could not
 * be fetched (the card says the diff is unavailable rather than show every line as added); else
 * the file as it is now. Fetched again after every reconnect of the live connection, so a diff
 * that could not be read offline is computed once the server is back (issue 33, item 4).
 */
export function useFileOnDisk(approval: Approval): FileOnDiskState {
  const wanted = PREVIEWED.has(approval.tool_name) && approval.status === "pending";
  const { liveEpoch } = useAppState();
  const [file, setFile] = useState<FileOnDiskState>(wanted ? null : undefined);
  const path = typeof approval.arguments.path === "string" ? approval.arguments.path : "";
  useEffect(() => {
    if (!wanted) return;
    let live = true;
    // A refetch keeps what is shown until the answer comes; only a first load says "loading".
    setFile((shown) => (shown === undefined || shown === FILE_UNAVAILABLE ? null : shown));
    api.fileOnDisk(approval.id).then(
      (found) => live && setFile(found),
      () => live && setFile(FILE_UNAVAILABLE),
    );
    return () => {
      live = false;
    };
  }, [approval.id, wanted, path, liveEpoch]);
  return wanted ? file : undefined;
}
