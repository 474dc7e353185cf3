// The approval card's choice of hunks: which hunks of a pending write or edit a person accepts,
// and the arguments that make the tool do exactly that part (issue 33, item 9).

import { useCallback, useEffect, useMemo, useState } from "react";
import type { HunkChoice } from "./components/DiffView";
import { FILE_UNAVAILABLE, type FileOnDiskState } from "./fileOnDisk";
import { chosenArguments, reviewOf } from "./hunks";
import type { Approval } from "./types";

/** Only the built-in file server's tools: their argument shapes are the ones `reviewOf` knows. */
const PARTABLE: Record<string, "write_file" | "edit_file"> = {
  mcp__file__write_file: "write_file",
  mcp__file__edit_file: "edit_file",
};

export interface HunkChoiceState {
  /** The checkboxes, for a change of two or more hunks; undefined otherwise. */
  choice?: HunkChoice;
  /** Some hunks are left out: the card allows only the chosen part, never the whole call. */
  partial: boolean;
  /** The arguments that run only the chosen hunks (null: none chosen, or no edit can say it). */
  chosenArgs: Record<string, unknown> | null;
  /** "1 of 3 hunks". */
  summary: string;
}

function all(count: number): Set<number> {
  return new Set(Array.from({ length: count }, (_, i) => i));
}

export function useHunkChoice(approval: Approval, onDisk: FileOnDiskState): HunkChoiceState {
  const tool = PARTABLE[approval.tool_name];
  const file = onDisk === FILE_UNAVAILABLE ? null : onDisk;
  const review = useMemo(() => (tool && approval.status === "pending" ? reviewOf(tool, approval.arguments, file) : null), [tool, approval.arguments, approval.status, file]);
  const count = review && review.hunks.count > 1 ? review.hunks.count : 0;
  const [chosen, setChosen] = useState<Set<number>>(() => all(count));
  // A file read again (a reconnect) keeps the choice while the change is the same; a new change starts with every hunk.
  useEffect(() => setChosen(all(count)), [review?.before, count]);
  const toggle = useCallback((hunk: number) => {
    setChosen((now) => {
      const next = new Set(now);
      if (next.has(hunk)) next.delete(hunk);
      else next.add(hunk);
      return next;
    });
  }, []);
  const choice = useMemo(() => (count > 1 ? { chosen, count, toggle } : undefined), [chosen, count, toggle]);
  const partial = count > 1 && chosen.size < count;
  const chosenArgs = useMemo(
    () => (partial && review ? chosenArguments(review, approval.arguments, chosen) : null),
    [partial, review, approval.arguments, chosen],
  );
  return { choice, partial, chosenArgs, summary: `${chosen.size} of ${count} hunks` };
}
