import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { startAttention } from "./attention";
import { boot } from "./store";
import "./styles.css";
import "./library.css";

boot();
startAttention();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
