// The command palette's entries: the app's actions (defined here, matched here as typed), the
// entities the Rust search finds (ranked there, by nucleo's fuzzy matcher), and the items opened
// from it lately (kept in local storage, checked when read back: the storage is untrusted).

import type { AppInfo, Link, PaletteItem } from "../ipc";
import type { Area } from "../areas";
import { SHORTCUTS } from "./shortcuts";

/** What picking an entry does. */
export type Target =
  | { kind: "area"; area: Area }
  | { kind: "sheet" }
  | { kind: "updates" }
  | { kind: "refresh" }
  | { kind: "device"; id: string }
  | { kind: "link"; link: Link; sub?: string | null }
  | { kind: "profile"; name: string }
  | { kind: "customer"; id: string | null; label: string }
  | { kind: "new-downlink" }
  | { kind: "new-binding" }
  /** The palette asks for the module next. */
  | { kind: "choose-module" }
  | { kind: "new-package"; moduleId: string };

/** What the palette or a shortcut asked a screen to start (a new object each time). */
export type Intent = { what: "new-package"; moduleId: string } | { what: "new-downlink" } | { what: "new-binding" };

export type Entry = {
  /** Unique among entries: what a recent item is recognised by. */
  key: string;
  title: string;
  detail?: string | null;
  /** The heading it is listed under. */
  group: string;
  /** Keys that do it directly, when there are. */
  keys?: string;
  target: Target;
};

const AREA_NAMES: Record<Area, string> = {
  home: "Home",
  firmware: "Firmware",
  rollouts: "Rollouts",
  downlinks: "Downlinks",
  bindings: "Bindings",
  audit: "Audit log",
  settings: "Settings",
};

const keysOf = (kind: string, area?: string) =>
  SHORTCUTS.find((s) => s.does.kind === kind && (area === undefined || (s.does.kind === "area" && s.does.area === area)))?.keys;

/** The app's actions for the session shown. */
export function actions(info: AppInfo | null): Entry[] {
  const out: Entry[] = (Object.keys(AREA_NAMES) as Area[]).map((a) => ({
    key: `area:${a}`,
    title: `Go to ${AREA_NAMES[a]}`,
    group: "Actions",
    keys: keysOf("area", a),
    target: { kind: "area", area: a },
  }));
  out.push(
    { key: "new-package", title: "New package…", detail: "of a module you choose next", group: "Actions", keys: keysOf("new-package"), target: { kind: "choose-module" } },
    { key: "new-downlink", title: "New downlink…", group: "Actions", keys: keysOf("new-downlink"), target: { kind: "new-downlink" } },
    { key: "new-binding", title: "New binding…", group: "Actions", keys: keysOf("new-binding"), target: { kind: "new-binding" } },
    { key: "refresh", title: "Refresh this screen", group: "Actions", keys: keysOf("refresh"), target: { kind: "refresh" } },
    { key: "sheet", title: "Keyboard shortcuts", group: "Actions", keys: keysOf("sheet"), target: { kind: "sheet" } },
    { key: "updates", title: "Check for updates…", detail: "of the console itself", group: "Actions", target: { kind: "updates" } },
  );
  if (info && info.customers.length > 0) {
    if (info.acting) {
      out.push({ key: "customer:", title: "Act for the profile's own account", group: "Switch customer", target: { kind: "customer", id: null, label: "own account" } });
    }
    for (const c of info.customers) {
      if (c.id === info.acting?.id) continue;
      out.push({ key: `customer:${c.id}`, title: `Act for ${c.label}`, detail: c.id, group: "Switch customer", keys: undefined, target: { kind: "customer", id: c.id, label: c.label } });
    }
  }
  return out;
}

/**
 * Whether every word typed starts a word of the text (case ignored): "new pack" finds
 * "New package…", "go roll" finds "Go to Rollouts". The actions are few and named in words;
 * the entities, many and named by ids too, are matched fuzzily in Rust.
 */
export function matchesWords(query: string, text: string): boolean {
  const words = text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  return query
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .every((q) => words.some((w) => w.startsWith(q)));
}

const LINK_KINDS = ["rollout", "module", "package", "downlink", "binding"] as const;
const GROUPS: Record<string, string> = {
  device: "Devices",
  module: "Modules",
  package: "Packages",
  rollout: "Rollouts",
  downlink: "Downlinks",
  binding: "Bindings",
  profile: "Profiles",
  customer: "Switch customer",
};

/** An entity the Rust search found, as an entry; null for a kind this UI does not open. */
export function fromItem(item: PaletteItem): Entry | null {
  const base = { title: item.title, detail: item.detail, group: GROUPS[item.kind] ?? item.kind };
  if (item.kind === "device") return { ...base, key: `device:${item.id}`, target: { kind: "device", id: item.id } };
  if ((LINK_KINDS as readonly string[]).includes(item.kind)) {
    const link = { kind: item.kind as Link["kind"], id: item.id };
    return { ...base, key: `${item.kind}:${item.id}`, target: { kind: "link", link, sub: item.subKind } };
  }
  if (item.kind === "profile") return { ...base, title: `Switch to profile ${item.title}`, key: `profile:${item.id}`, target: { kind: "profile", name: item.id } };
  if (item.kind === "customer") return { ...base, title: `Act for ${item.title}`, key: `customer:${item.id}`, target: { kind: "customer", id: item.id, label: item.title } };
  return null;
}

/** Most recent items kept. */
export const MAX_RECENT = 8;

/** The recent list after `e` was opened: it first, no repeats, at most MAX_RECENT. Only
 * entities are kept (actions are always listed anyway). */
export function withRecent(recent: Entry[], e: Entry): Entry[] {
  if (!["device", "link", "profile"].includes(e.target.kind)) return recent;
  return [{ ...e, group: "Recent" }, ...recent.filter((r) => r.key !== e.key)].slice(0, MAX_RECENT);
}

const str = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= 300;

/** A stored recent list, keeping only well-formed entries of the kinds kept. */
export function validRecent(v: unknown): v is Entry[] {
  if (!Array.isArray(v) || v.length > MAX_RECENT) return false;
  return v.every((e: unknown) => {
    if (typeof e !== "object" || e === null) return false;
    const o = e as Record<string, unknown>;
    const t = o.target as Record<string, unknown> | undefined;
    if (!str(o.key) || !str(o.title) || !t || typeof t !== "object") return false;
    if (t.kind === "device") return str(t.id);
    if (t.kind === "profile") return str(t.name);
    if (t.kind === "link") {
      const l = t.link as Record<string, unknown> | undefined;
      return !!l && (LINK_KINDS as readonly unknown[]).includes(l.kind) && str(l.id);
    }
    return false;
  });
}

/**
 * What the palette lists for `query`: with nothing typed, the recent items then the actions;
 * else the service's exact finds (an id typed whole), the recent items and actions whose words
 * match, then the rest of what the search found, in its order. No entry twice.
 */
export function compose(query: string, actionList: Entry[], recent: Entry[], found: PaletteItem[]): Entry[] {
  const q = query.trim();
  const seen = new Set<string>();
  const out: Entry[] = [];
  const add = (e: Entry | null) => {
    if (e && !seen.has(e.key)) {
      seen.add(e.key);
      out.push(e);
    }
  };
  if (q === "") {
    recent.forEach(add);
    actionList.forEach(add);
    return out;
  }
  const exact = found.filter((f) => f.score >= 4294967295);
  exact.map(fromItem).forEach(add);
  recent.filter((r) => matchesWords(q, `${r.title} ${r.detail ?? ""}`)).forEach(add);
  actionList.filter((a) => matchesWords(q, a.title)).forEach(add);
  found.filter((f) => !exact.includes(f)).map(fromItem).forEach(add);
  return out;
}
