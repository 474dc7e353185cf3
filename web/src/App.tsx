import { useEffect, useState } from "react";
import { AgentsView } from "./components/Agents";
import { Header } from "./components/Header";
import { Inbox } from "./components/Inbox";
import { Login } from "./components/Login";
import { ModesView } from "./components/Modes";
import { SchedulesView } from "./components/Schedules";
import { ServersView } from "./components/Servers";
import { SessionView } from "./components/SessionView";
import { SettingsView } from "./components/Settings";
import { Sidebar } from "./components/Sidebar";
import { SkillsView } from "./components/Skills";
import { WorkflowsView } from "./components/Workflows";
import { useRoute } from "./router";
import { useAppState } from "./store";

export function App() {
  const { auth } = useAppState();
  const route = useRoute();
  const [sidebarOpen, setSidebarOpen] = useState(false);

  useEffect(() => setSidebarOpen(false), [route.name, route.name === "session" ? route.id : null]);

  if (auth === "checking") return <div className="splash" aria-busy="true">Loading…</div>;
  if (auth === "required") return <Login />;

  return (
    <div className={`app${sidebarOpen ? " sidebar-open" : ""}`}>
      <Header route={route} sidebarOpen={sidebarOpen} onToggleSidebar={() => setSidebarOpen(!sidebarOpen)} />
      <div className="layout">
        <div id="sidebar" className="sidebar-wrap">
          <Sidebar route={route} onNavigate={() => setSidebarOpen(false)} />
        </div>
        {route.name === "session" ? (
          <SessionView key={route.id} id={route.id} />
        ) : route.name === "settings" ? (
          <SettingsView />
        ) : route.name === "schedules" ? (
          <SchedulesView />
        ) : route.name === "modes" ? (
          <ModesView selected={route.item} />
        ) : route.name === "skills" ? (
          <SkillsView selected={route.item} />
        ) : route.name === "workflows" ? (
          <WorkflowsView />
        ) : route.name === "servers" ? (
          <ServersView />
        ) : route.name === "agents" ? (
          <AgentsView />
        ) : (
          <Inbox />
        )}
      </div>
    </div>
  );
}
