import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The built app is served by Overseer's own server at `/`; relative asset paths keep it
// working behind a path prefix too. `npm run dev` proxies the API to a local `overseer serve`.
const backend = process.env.OVERSEER_URL ?? "http://127.0.0.1:8000";

export default defineConfig({
  base: "./",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
  server: {
    proxy: {
      "/api": backend,
      "/login": backend,
      "/ws": { target: backend.replace(/^http/, "ws"), ws: true },
    },
  },
});
