import { describe, expect, it } from "vitest";
import { parseRules, themeVars } from "./contrast";

// Every style sheet of the app.
const sheets = import.meta.glob<string>("../**/*.css", { query: "?raw", import: "default", eager: true });
const rules = Object.entries(sheets).flatMap(([path, css]) => parseRules(css).map((r) => ({ path, ...r })));

// Families WebKitGTK resolves without a search: the desktop's font and fontconfig's generic
// ones. Each other name costs a fontconfig search before the first frame (six such names took
// the first screen 80 ms longer, bench/app-idle.sh).
const RESOLVED_AT_ONCE = new Set(["system-ui", "sans-serif", "monospace"]);

describe("fonts", () => {
  it("come from the two stacks of styles.css, which name only families found at once", () => {
    const vars = themeVars(rules).light;
    for (const stack of ["--font-ui", "--font-mono"]) {
      const families = (vars[stack] ?? "").split(",").map((f) => f.trim());
      expect(families.length, stack).toBeGreaterThan(0);
      for (const f of families) expect(RESOLVED_AT_ONCE.has(f), `${stack}: ${f}`).toBe(true);
    }
    const elsewhere = rules.flatMap((r) =>
      Object.entries(r.decls)
        .filter(([k, v]) => (k === "font-family" && !/^var\(--font-(ui|mono)\)$/.test(v)) || (k === "font" && v !== "inherit"))
        .map(([k, v]) => `${r.path} ${r.selector} { ${k}: ${v} }`),
    );
    expect(elsewhere).toEqual([]);
  });
});
