import { defineConfig } from "vite";

// Preact's JSX through Vite's own transformer: no framework plugin needed.
export default defineConfig({
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { target: "es2022", outDir: "dist", emptyOutDir: true },
  test: { environment: "node", include: ["src/**/*.test.ts"] },
});
