// Update statuses of firmware states (simulator A-37) and the one colour each has everywhere:
// charts, legends and table badges. Each status has a light-theme and a dark-theme shade, both
// readable on the theme's surface; statuses the console does not know get a stable colour
// hashed from their name.

/** Statuses in the order a rollout moves through them; `none`: the device never had a target. */
export const STATUSES = ["PENDING", "DOWNLOADING", "INSTALLING", "SUCCEEDED", "FAILED", "CANCELLED", "none"] as const;

export type Theme = "light" | "dark";

const COLORS: Record<string, { light: string; dark: string }> = {
  PENDING: { light: "#7c3aed", dark: "#a78bfa" },
  DOWNLOADING: { light: "#2563eb", dark: "#60a5fa" },
  INSTALLING: { light: "#0891b2", dark: "#22d3ee" },
  SUCCEEDED: { light: "#16a34a", dark: "#4ade80" },
  FAILED: { light: "#dc2626", dark: "#f87171" },
  CANCELLED: { light: "#d97706", dark: "#fbbf24" },
  none: { light: "#94a3b8", dark: "#64748b" },
};

const WORDS: Record<string, string> = {
  PENDING: "Pending",
  DOWNLOADING: "Downloading",
  INSTALLING: "Installing",
  SUCCEEDED: "Succeeded",
  FAILED: "Failed",
  CANCELLED: "Cancelled",
  none: "No target yet",
};

/** A status in words ("none": never had a target); unknown ones as the service sent them. */
export function statusWord(status: string): string {
  return WORDS[status] ?? status;
}

/** The theme the app shows now (it follows the OS, as styles.css does). */
export function currentTheme(): Theme {
  if (typeof window === "undefined" || !window.matchMedia) return "light";
  return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** `#rrggbb` for a status in a theme; unknown statuses get a hashed, stable colour. */
export function statusColor(status: string, theme: Theme = currentTheme()): string {
  const known = COLORS[status];
  if (known) return known[theme];
  return hashColor(status, theme);
}

/** A stable colour for any label (same label, same colour, in every session). */
export function hashColor(label: string, theme: Theme = currentTheme()): string {
  // FNV-1a: small and spreads short, similar strings well.
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  const hue = h % 360;
  // Yellows and greens look lighter than blues at one lightness: step the lightness until the
  // colour stands out from the theme's surface (3:1, as graphics need).
  if (theme === "dark") {
    let l = 0.55;
    while (l < 0.85 && contrast(hslToHex(hue, 0.7, l), "#161d27") < 3.5) l += 0.03;
    return hslToHex(hue, 0.7, l);
  }
  let l = 0.45;
  while (l > 0.2 && contrast(hslToHex(hue, 0.65, l), "#ffffff") < 3.5) l -= 0.03;
  return hslToHex(hue, 0.65, l);
}

/** WCAG contrast ratio of two `#rrggbb` colours. */
export function contrast(a: string, b: string): number {
  const lum = (hex: string) => {
    const [r, g, bl] = [1, 3, 5].map((i) => {
      const c = parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Known statuses in rollout order, then the others by name. */
export function compareStatus(a: string, b: string): number {
  const ia = (STATUSES as readonly string[]).indexOf(a);
  const ib = (STATUSES as readonly string[]).indexOf(b);
  if (ia >= 0 && ib >= 0) return ia - ib;
  if (ia >= 0) return -1;
  if (ib >= 0) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `#rrggbb` with an alpha as `rgba(...)`, for filled areas. */
export function withAlpha(hex: string, alpha: number): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return hex;
  const [r, g, b] = m.slice(1).map((x) => parseInt(x, 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

function hslToHex(h: number, s: number, l: number): string {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  const hex = (x: number) => Math.round(x * 255).toString(16).padStart(2, "0");
  return `#${hex(f(0))}${hex(f(8))}${hex(f(4))}`;
}

/** How a downlink's status badge reads: its colour follows the outcome, never the word alone. */
export type DownlinkBadge = { label: string; tone: "inProgress" | "delivered" | "failed" | "cancelled" | "unknown" };

/**
 * The badge of a downlink. A status that only says "finished" (`DONE` of the connection kinds)
 * is not a result: a DONE that failed or was cancelled says so beside it ("DONE · failed"), so a
 * red badge never reads "DONE" alone. Statuses that are results themselves (FAILED, DELIVERED,
 * CANCELLED) stay as they are.
 */
export function downlinkBadge(status: string, outcome: "inProgress" | "delivered" | "failed" | "cancelled" | "unknown"): DownlinkBadge {
  const word = outcome === "failed" ? "failed" : outcome === "cancelled" ? "cancelled" : null;
  const label = word && !status.toLowerCase().startsWith(word.slice(0, 6)) ? `${status} · ${word}` : status;
  return { label, tone: outcome };
}
