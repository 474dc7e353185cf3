// Tools by their titles (issue 16, "people see names"): the servers' tools/list gives each tool a
// title; a session's tool cards read it from here rather than each asking the socket for servers.

import { createContext, useContext } from "react";
import type { ServerInfo } from "./types";

/** Full tool name (`mcp__shell__exec`) -> its title ("Run a command"), for tools that have one. */
export function toolTitles(servers: ServerInfo[] | null): Record<string, string> {
  const titles: Record<string, string> = {};
  for (const server of servers ?? []) {
    for (const tool of server.tools) {
      const title = tool.annotations?.title?.trim();
      if (title) titles[tool.name] = title;
    }
  }
  return titles;
}

export const ToolTitles = createContext<Record<string, string>>({});

/** The tool's title, or null when its server gave none (or the servers are not known yet). */
export function useToolTitle(name: string): string | null {
  return useContext(ToolTitles)[name] ?? null;
}
