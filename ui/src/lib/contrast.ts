// The themes' colours read from the style sheets themselves (styles.css and the views' sheets),
// so the contrast test checks what the app shows: one source for the colours, no copy.

import { contrast } from "./status";

export type Theme = "light" | "dark";

/** One rule of a style sheet: its selector, the at-rule around it (if any), its declarations. */
export type Rule = { selector: string; media: string | null; decls: Record<string, string> };

/** The rules of a style sheet, flat (nested at-rules give their prelude as `media`). */
export function parseRules(css: string): Rule[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, "");
  const out: Rule[] = [];
  const stack: string[] = [];
  let buf = "";
  let lastOpen = false;
  for (const ch of text) {
    if (ch === "{") {
      stack.push(buf.trim());
      buf = "";
      lastOpen = true;
    } else if (ch === "}") {
      const prelude = stack.pop() ?? "";
      if (lastOpen || buf.trim()) {
        const decls: Record<string, string> = {};
        for (const d of buf.split(";")) {
          const i = d.indexOf(":");
          if (i > 0) decls[d.slice(0, i).trim().toLowerCase()] = d.slice(i + 1).trim();
        }
        const outer = stack.length ? stack[stack.length - 1] : null;
        out.push({ selector: prelude, media: outer && outer.startsWith("@") ? outer : null, decls });
      }
      buf = "";
      lastOpen = false;
    } else {
      buf += ch;
    }
  }
  return out;
}

/** The custom properties of each theme: `:root` as written, then dark's overrides on top. */
export function themeVars(rules: Rule[]): Record<Theme, Record<string, string>> {
  const light: Record<string, string> = {};
  const darkOnly: Record<string, string> = {};
  for (const r of rules) {
    if (r.selector !== ":root") continue;
    const vars = Object.entries(r.decls).filter(([k]) => k.startsWith("--"));
    if (r.media === null) for (const [k, v] of vars) light[k] = v;
    else if (/prefers-color-scheme:\s*dark/.test(r.media)) for (const [k, v] of vars) darkOnly[k] = v;
  }
  return { light, dark: { ...light, ...darkOnly } };
}

export type Rgba = { r: number; g: number; b: number; a: number };

/** A colour value of the sheet (`var(--x)`, `#rgb`, `#rrggbb`, `#rrggbbaa`, `rgb[a](...)`,
 * `transparent`, `white`, `black`) in a theme; `null` for anything else (gradients, `none`,
 * `inherit`, `currentColor`). */
export function resolveColor(value: string, vars: Record<string, string>, depth = 0): Rgba | null {
  const v = value.trim().replace(/\s*!important$/, "");
  const ref = /^var\(\s*(--[\w-]+)\s*(?:,\s*(.+))?\)$/.exec(v);
  if (ref) {
    if (depth > 10) return null;
    const got = vars[ref[1]] ?? ref[2];
    return got === undefined ? null : resolveColor(got, vars, depth + 1);
  }
  const named: Record<string, string> = { white: "#ffffff", black: "#000000" };
  if (named[v.toLowerCase()]) return resolveColor(named[v.toLowerCase()], vars, depth);
  if (v.toLowerCase() === "transparent") return { r: 0, g: 0, b: 0, a: 0 };
  let m = /^#([0-9a-f]{3,8})$/i.exec(v);
  if (m) {
    let h = m[1];
    if (h.length === 3 || h.length === 4) h = [...h].map((c) => c + c).join("");
    if (h.length !== 6 && h.length !== 8) return null;
    const n = (i: number) => parseInt(h.slice(i, i + 2), 16);
    return { r: n(0), g: n(2), b: n(4), a: h.length === 8 ? n(6) / 255 : 1 };
  }
  m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/i.exec(v);
  if (m) {
    const a = m[4] === undefined ? 1 : m[4].endsWith("%") ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
    return { r: +m[1], g: +m[2], b: +m[3], a };
  }
  return null;
}

/** `top` painted over the opaque `base`. */
export function over(top: Rgba, base: Rgba): Rgba {
  const mix = (t: number, b: number) => Math.round(t * top.a + b * (1 - top.a));
  return { r: mix(top.r, base.r), g: mix(top.g, base.g), b: mix(top.b, base.b), a: 1 };
}

export function hex(c: Rgba): string {
  return "#" + [c.r, c.g, c.b].map((x) => Math.round(x).toString(16).padStart(2, "0")).join("");
}

/** The WCAG contrast ratio of text `fg` on `bg`, a background that may be translucent over
 * `base` (the surface under it); `opacity` is the text's own (e.g. `opacity: 0.7`). */
export function ratio(fg: Rgba, bg: Rgba, base: Rgba = { r: 255, g: 255, b: 255, a: 1 }, opacity = 1): number {
  const back = over(bg, base);
  const text = over({ ...fg, a: fg.a * opacity }, back);
  return contrast(hex(text), hex(back));
}
