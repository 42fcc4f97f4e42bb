import { describe, expect, it } from "vitest";
import { over, parseRules, ratio, resolveColor, themeVars, type Rgba, type Rule, type Theme } from "./contrast";
import { STATUSES, statusColor } from "./status";
import styles from "../styles.css?raw";

// Every style sheet of the app, styles.css first (its :root is the themes' one source).
const sheets = import.meta.glob<string>("../**/*.css", { query: "?raw", import: "default", eager: true });
const others = Object.keys(sheets)
  .filter((p) => !p.endsWith("/styles.css"))
  .sort();
const rules: Rule[] = [...parseRules(styles), ...others.flatMap((p) => parseRules(sheets[p]))];
const VARS = themeVars(rules);
const THEMES: Theme[] = ["light", "dark"];

function color(value: string | undefined, theme: Theme): Rgba {
  const c = value === undefined ? null : resolveColor(value, VARS[theme]);
  if (!c) throw new Error(`not a colour in ${theme}: ${value}`);
  return c;
}

/** The declarations of the rule with exactly this selector (the last one wins, as in CSS). */
function rule(selector: string): Record<string, string> {
  const found = rules.filter((r) => r.selector === selector && r.media === null);
  if (!found.length) throw new Error(`no rule ${selector}`);
  return Object.assign({}, ...found.map((r) => r.decls)) as Record<string, string>;
}
const bgOf = (d: Record<string, string>) => d["background-color"] ?? d["background"];

type Pair = { name: string; fg?: string; bg?: string; base?: string; opacity?: number; min?: number };

/** Text and the backgrounds it is shown on. */
const PAIRS = (): Pair[] => [
  ...["--bg", "--surface", "--surface-2"].flatMap((bg) => [
    { name: `body text on ${bg}`, fg: "var(--text)", bg: `var(${bg})` },
    { name: `muted text on ${bg}`, fg: "var(--muted)", bg: `var(${bg})` },
    { name: `link / accent text on ${bg}`, fg: "var(--accent)", bg: `var(${bg})` },
    { name: `danger text on ${bg}`, fg: "var(--danger)", bg: `var(${bg})` },
    { name: `ok text on ${bg}`, fg: "var(--ok)", bg: `var(${bg})` },
    { name: `warning text on ${bg}`, fg: "var(--warn)", bg: `var(${bg})` },
  ]),
  { name: "body text on a notice", fg: "var(--text)", bg: "var(--accent-soft)" },
  { name: "active nav item / updating badge", fg: "var(--accent)", bg: "var(--accent-soft)" },
  { name: "error state / failed badge / deprecated tag", fg: "var(--danger)", bg: "var(--danger-soft)" },
  { name: "active tag / delivered badge", fg: "var(--ok)", bg: "var(--ok-soft)" },
  { name: "warning box / drift badge", fg: "var(--warn)", bg: "var(--warn-soft)" },
  { name: "header", fg: "var(--header-text)", bg: "var(--header-bg)" },
  {
    name: "header label (opacity)",
    fg: "var(--header-text)",
    bg: "var(--header-bg)",
    opacity: Number(rule(".header-context .label").opacity ?? 1),
  },
  { name: "profile badge", fg: "var(--header-text)", bg: bgOf(rule(".profile-badge")), base: "var(--header-bg)" },
  { name: "customer switcher", fg: rule(".switcher select").color, bg: rule(".switcher select")["background-color"] },
  { name: "acting band", fg: "var(--acting-text)", bg: "var(--acting-bg)" },
  { name: "Simulator badge", fg: rule(".sim-badge").color, bg: bgOf(rule(".sim-badge")), base: "var(--header-bg)" },
  { name: "primary button", fg: rule(".button-primary").color, bg: bgOf(rule(".button-primary")) },
  { name: "danger button", fg: rule(".button-danger").color, bg: bgOf(rule(".button-danger")) },
  { name: "quiet danger button", fg: rule(".button-danger-quiet").color, bg: bgOf(rule(".button")) },
  { name: "disabled button", fg: rule(".button:disabled").color, bg: bgOf(rule(".button:disabled")) },
];

describe("theme contrast (WCAG 2.x, from the style sheets)", () => {
  it("reads both themes from styles.css", () => {
    for (const t of THEMES) for (const v of ["--text", "--bg", "--surface", "--accent"]) expect(VARS[t][v], `${t} ${v}`).toBeTruthy();
    expect(VARS.dark["--bg"]).not.toBe(VARS.light["--bg"]);
  });

  for (const theme of THEMES) {
    it(`gives every text/background pair at least 4.5:1 in ${theme}`, () => {
      const surface = color("var(--surface)", theme);
      const failures: string[] = [];
      for (const p of PAIRS()) {
        try {
          const base = p.base ? color(p.base, theme) : surface;
          const r = ratio(color(p.fg, theme), color(p.bg, theme), base, p.opacity ?? 1);
          if (r < (p.min ?? 4.5)) failures.push(`${p.name}: ${r.toFixed(2)}:1`);
        } catch (e) {
          failures.push(`${p.name}: ${(e as Error).message}`);
        }
      }
      expect(failures, "\n" + failures.join("\n") + "\n").toEqual([]);
    });

    it(`gives every rule that sets both a text colour and a background 4.5:1 in ${theme}`, () => {
      const vars = VARS[theme];
      const surface = color("var(--surface)", theme);
      const failures: string[] = [];
      let checked = 0;
      for (const r of rules) {
        if (r.media && !(theme === "dark" ? /dark/ : /light/).test(r.media) && /prefers-color-scheme/.test(r.media)) continue;
        const bgValue = bgOf(r.decls);
        if (!r.decls.color || !bgValue) continue;
        const fg = resolveColor(r.decls.color, vars);
        const bg = resolveColor(bgValue, vars);
        if (!fg || !bg || bg.a === 0) continue;
        checked++;
        const v = ratio(fg, bg, surface, Number(r.decls.opacity ?? 1));
        if (v < 4.5) failures.push(`${r.selector}: ${v.toFixed(2)}:1`);
      }
      expect(checked).toBeGreaterThan(15);
      expect(failures, "\n" + failures.join("\n") + "\n").toEqual([]);
    });

    it(`keeps status colours (graphics) at 3:1 on the surfaces in ${theme}`, () => {
      // Charts and the device table's dots sit on cards.
      for (const bg of ["--surface"]) {
        const back = color(`var(${bg})`, theme);
        for (const s of STATUSES) {
          if (s === "none") continue; // deliberately quiet grey
          const c = color(statusColor(s, theme), theme);
          expect(ratio(c, over(back, back)), `${s} on ${bg}`).toBeGreaterThanOrEqual(3);
        }
      }
    });
  }

  it("the disabled primary button does not look like the enabled one", () => {
    for (const theme of THEMES) {
      const enabled = color(bgOf(rule(".button-primary")), theme);
      const disabled = rule(".button:disabled");
      expect(bgOf(disabled), "a disabled button has its own background").toBeTruthy();
      expect(ratio(enabled, color(bgOf(disabled), theme)), theme).toBeGreaterThan(1.5);
    }
    expect(rule(".button:disabled").filter ?? "none").toBe("none");
  });

  it("lets native controls follow the theme (color-scheme)", () => {
    // Each theme names its own scheme, so select lists and date pickers are drawn to match.
    expect(rule(":root")["color-scheme"]).toBe("light");
    const dark = rules.find((r) => r.selector === ":root" && /prefers-color-scheme:\s*dark/.test(r.media ?? ""));
    expect(dark?.decls["color-scheme"]).toBe("dark");
  });
});
