// The top bar: the pending counter across sessions (mirrored to an aria-live region),
// navigation, notifications and the live-connection state (with the banner of an outage), and
// the undo toast of key-press decisions.

import { useState } from "react";
import { enableNotifications } from "../attention";
import type { Route } from "../router";
import { logout, pendingList, useAppState } from "../store";
import { ConnectionBanner } from "./ConnectionBanner";
import { FailingServersMark } from "./FailingServersMark";
import { SandboxBanner } from "./SandboxBanner";
import { UndoToast } from "./UndoToast";

export function Header({ route, onToggleSidebar, sidebarOpen }: { route: Route; onToggleSidebar: () => void; sidebarOpen: boolean }) {
  const state = useAppState();
  const count = pendingList(state).length;
  const [permission, setPermission] = useState<NotificationPermission | "unsupported">(
    typeof Notification === "undefined" ? "unsupported" : Notification.permission,
  );
  const liveText =
    count === 0 ? "No approvals waiting" : count === 1 ? "1 approval waiting for you" : `${count} approvals waiting for you`;

  return (
    <>
      <header className="topbar">
        <button
          type="button"
          className="btn subtle sidebar-toggle"
          aria-label="Sessions"
          aria-expanded={sidebarOpen}
          aria-controls="sidebar"
          data-testid="sidebar-toggle"
          onClick={onToggleSidebar}
        >
          ☰
        </button>
        <a href="#/" className="brand">
          Overseer
        </a>
        <nav className="topnav" aria-label="Main">
          <a href="#/" aria-current={route.name === "inbox" ? "page" : undefined} data-testid="nav-inbox">
            Inbox
          </a>
          <a href="#/schedules" aria-current={route.name === "schedules" ? "page" : undefined} data-testid="nav-schedules">
            Schedules
          </a>
          <a href="#/modes" aria-current={route.name === "modes" ? "page" : undefined} data-testid="nav-modes">
            Modes
          </a>
          <a href="#/skills" aria-current={route.name === "skills" ? "page" : undefined} data-testid="nav-skills">
            Skills
          </a>
          <a href="#/workflows" aria-current={route.name === "workflows" ? "page" : undefined} data-testid="nav-workflows">
            Workflows
          </a>
          <a href="#/servers" aria-current={route.name === "servers" ? "page" : undefined} data-testid="nav-servers">
            Servers
            <FailingServersMark />
          </a>
          <a href="#/agents" aria-current={route.name === "agents" ? "page" : undefined} data-testid="nav-agents">
            Agents
          </a>
          <a href="#/settings" aria-current={route.name === "settings" ? "page" : undefined} data-testid="nav-settings">
            Settings
          </a>
        </nav>
        <a
          href="#/"
          className={`pending-counter${count > 0 ? " has-pending" : ""}`}
          data-testid="pending-counter"
          data-count={count}
          aria-label={liveText}
        >
          <span aria-hidden="true">{count > 0 ? "●" : "○"}</span> {count} waiting
        </a>
        <div className="visually-hidden" aria-live="polite" role="status" data-testid="pending-live">
          {liveText}
        </div>
        <div className="topbar-side">
          {state.live !== "open" && state.live !== "stopped" && (
            <span className="live-state" data-testid="live-state" role="status">
              {state.live === "connecting" ? "Connecting…" : state.live === "reconnecting" ? "Reconnecting…" : "Signed out"}
            </span>
          )}
          {permission === "default" && (
            <button
              type="button"
              className="btn small subtle"
              data-testid="enable-notifications"
              onClick={() => void enableNotifications().then(setPermission)}
            >
              Notify me
            </button>
          )}
          {state.me && (
            <button type="button" className="btn small subtle" data-testid="sign-out" onClick={() => void logout()} title={`Signed in as ${state.me.name}`}>
              Sign out
            </button>
          )}
        </div>
      </header>
      <ConnectionBanner />
      <SandboxBanner />
      <UndoToast />
    </>
  );
}
