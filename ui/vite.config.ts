import { defineConfig } from "vite";

// Preact's JSX through Vite's own transformer: no framework plugin needed.
export default defineConfig({
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { target: "es2022", outDir: "dist", emptyOutDir: true },
  // Style sheets read as text (`?raw`) reach the tests: the contrast test reads the themes there.
  test: { environment: "node", include: ["src/**/*.test.ts"], css: { include: [/\.css\?raw$/] } },
});
