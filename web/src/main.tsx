import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { startAttention } from "./attention";
import { registerServiceWorker } from "./push";
import { boot } from "./store";
import "./styles.css";
import "./library.css";

boot();
startAttention();
registerServiceWorker();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
