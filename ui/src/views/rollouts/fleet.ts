// What the rollout dashboard computes without drawing: wave input, scan progress in words,
// and a device choice in words (a wave's bar and progress: progress.ts).

import type { ComparedCell, CompareRequest, DeviceChoice, DeviceQuery, FleetStatus, LateDevices, ModelRule_Deserialize, Movement, RetryPolicy, ScanProgress, Schedule } from "../../ipc";
import { formatLocal } from "../../lib/format";
import { serviceTime } from "../../lib/timeWindow";

const nf = new Intl.NumberFormat("en-US");
export const num = (n: number) => nf.format(n);

/**
 * "1, 10, 50, 100" (commas, spaces or `%`) as numbers. Only the shape is read here; the rules
 * (rising, ending at 100) are Rust's, which names them in its preview.
 */
export function parseWaves(text: string): { waves: number[] } | { error: string } {
  const parts = text
    .split(/[\s,;]+/)
    .map((p) => p.replace(/%$/, ""))
    .filter((p) => p.length > 0);
  if (parts.length === 0) return { error: "give the waves as percentages, for example 1, 10, 50, 100" };
  const waves: number[] = [];
  for (const p of parts) {
    const n = Number(p);
    if (!Number.isFinite(n) || !/^\d+(\.\d+)?$/.test(p)) return { error: `\`${p}\` is not a percentage` };
    waves.push(n);
  }
  return { waves };
}

/** A percentage as typed; null when it is not a number. */
export function parsePercent(text: string): number | null {
  const t = text.trim().replace(/%$/, "");
  if (!/^\d+(\.\d+)?$/.test(t)) return null;
  return Number(t);
}

/** Share of a scan done, when the size is known from the last full scan. */
export function scanFraction(p: ScanProgress): number | null {
  if (p.kind !== "full" || !p.expected) return null;
  return Math.min(1, p.states / p.expected);
}

export function scanText(p: ScanProgress): string {
  const what = p.kind === "full" ? "Full scan" : "Refresh";
  const rate = p.elapsedMs > 0 ? Math.round((p.states * 1000) / p.elapsedMs) : 0;
  const of = p.kind === "full" && p.expected ? ` of about ${num(p.expected)}` : "";
  const pct = scanFraction(p);
  return `${what}: ${num(p.states)}${of} states${pct !== null ? ` (${Math.round(pct * 100)}%)` : ""}, ${num(p.pages)} pages${
    rate ? `, ${num(rate)} states/s` : ""
  }`;
}

export function queryText(q: DeviceQuery): string {
  const parts: string[] = [];
  if (q.version) parts.push(q.version === "none" ? "no current version" : `running ${q.version}`);
  if (q.target) parts.push(q.target === "none" ? "no target" : `target ${q.target}`);
  if (q.status) parts.push(q.status === "none" ? "never updated" : `status ${q.status}`);
  if (q.drift) parts.push("drifting");
  if (q.device) parts.push(`device ${q.device}`);
  if (q.stuckBefore) parts.push(`stuck since before ${formatLocal(q.stuckBefore, true)}`);
  if (q.compared) parts.push(comparedText(q.compared));
  if (q.specId) parts.push("one specification");
  if (q.clientId) parts.push("one owner");
  return parts.length ? parts.join(", ") : "every device";
}

export function choiceText(c: DeviceChoice): string {
  switch (c.kind) {
    case "all":
      return "every device of the module";
    case "query": {
      const sel = c.selection;
      const base = `devices matching: ${queryText(c.query)}`;
      if (!sel) return base;
      if (sel.all) return sel.keys.length ? `${base}, except ${num(sel.keys.length)} unselected` : base;
      return `${num(sel.keys.length)} selected devices`;
    }
    case "list": {
      const n = c.text.split(/[\s,;]+/).filter((s) => s.length > 0).length;
      return `a pasted list of ${num(n)} device ids`;
    }
  }
}

/** The device query with empty fields dropped (what the table, count and export send). */
export function cleanQuery(q: DeviceQuery): DeviceQuery {
  const out: DeviceQuery = {};
  for (const [k, v] of Object.entries(q) as [keyof DeviceQuery, unknown][]) {
    if (v === "" || v === null || v === undefined || v === false) continue;
    (out as Record<string, unknown>)[k] = typeof v === "string" ? v.trim() : v;
  }
  return out;
}

/** Seconds as "15 s", "2 min", "1 h". */
export function intervalText(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

/**
 * How the fleet is refreshed, in words: incrementally, or with full scans because the service
 * ignores or refuses `modifiedSince` (the text is Rust's), and with the timer on, how often
 * refreshes really start (the interval counts from the end of the previous one).
 */
export function refreshModeText(
  s: Pick<FleetStatus, "mode" | "autoRefresh" | "intervalSeconds" | "effectiveIntervalSeconds">,
): string {
  const mode = `Refresh mode: ${s.mode.text}`;
  if (!s.autoRefresh) return mode;
  if (s.effectiveIntervalSeconds > s.intervalSeconds)
    return `${mode}. Every ${intervalText(s.intervalSeconds)} after the previous one ends: about every ${durationText(
      s.effectiveIntervalSeconds * 1000,
    )}`;
  return `${mode}. Every ${intervalText(s.intervalSeconds)}`;
}

/** A duration: "45 ms", "3.2 s", "2 min 5 s", "22 min", "3 h 05 min", "2 d 04 h". */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  const m = Math.round(s / 60);
  if (m < 24 * 60) return `${Math.floor(m / 60)} h ${pad(m % 60)} min`;
  return `${Math.floor(m / (24 * 60))} d ${pad(Math.floor((m % (24 * 60)) / 60))} h`;
}

// What the dashboard remembers across starts (lib/remember): its tab, the device table's
// filters and sort, the module shown and the history's range. Home writes the same keys to
// open the dashboard where it points.
export const FLEET_TABS = ["overview", "devices", "history", "rollouts"] as const;
export type FleetTab = (typeof FLEET_TABS)[number];
export const REMEMBER = { tab: "fleet.tab", query: "fleet.devices", module: "fleet.module", hours: "fleet.history.hours" } as const;

const QUERY_TEXT_FIELDS = ["moduleId", "version", "target", "status", "specId", "clientId", "device", "sort", "stuckBefore"] as const;

/** What happened to devices between two moments, in the order the comparison lists them. */
export const MOVEMENTS: readonly Movement[] = ["forward", "back", "failed", "stuck", "changed", "unchanged", "new", "unknown"];

/** A movement in words, for a count ("3 moved forward"). */
export function movementText(m: Movement, stuckHours?: number | null): string {
  switch (m) {
    case "forward":
      return "moved forward";
    case "back":
      return "went back";
    case "failed":
      return "failed";
    case "stuck":
      return stuckHours === undefined || stuckHours === null ? "stuck" : `stuck over ${hoursText(stuckHours)}`;
    case "changed":
      return "changed otherwise";
    case "unchanged":
      return "unchanged";
    case "new":
      return "new";
    case "unknown":
      return "history not kept";
    default:
      return String(m);
  }
}

/** Hours as typed back: "24 h", "1.5 h". */
export function hoursText(h: number | null): string {
  if (h === null) return "? h";
  return `${Number.isInteger(h) ? h : Number.parseFloat(h.toPrecision(6))} h`;
}

/** The device table's filter to a comparison's cell or movement, in words. */
export function comparedText(c: ComparedCell): string {
  const parts: string[] = [];
  if (c.movement) parts.push(movementText(c.movement));
  if (c.fromStatus || c.toStatus) parts.push(`${c.fromStatus ?? "any"} → ${c.toStatus ?? "any"}`);
  return `compared: ${parts.join(", ") || "every device"}`;
}


function isComparedCell(v: unknown): v is ComparedCell {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  for (const [k, x] of Object.entries(v)) {
    if (k === "movement") {
      if (x !== null && !(MOVEMENTS as readonly unknown[]).includes(x)) return false;
    } else if (k === "fromStatus" || k === "toStatus") {
      if (x !== null && (typeof x !== "string" || x.length > 200)) return false;
    } else return false;
  }
  return true;
}

/**
 * What the compare form asks Rust: a moment is a scan's time, or a time typed in local time
 * (sent as UTC; anything unreadable is passed as typed for Rust to name); `to` null is now.
 */
export function compareRequest(
  moduleId: string,
  from: { scan: string; typed: string },
  to: { scan: string; typed: string },
  stuckHours: string,
): CompareRequest {
  const moment = (m: { scan: string; typed: string }) => (m.scan === OTHER_TIME ? (serviceTime(m.typed) ?? "") : m.scan);
  const hours = Number(stuckHours.trim());
  return {
    moduleId,
    from: moment(from),
    to: to.scan === NOW ? null : moment(to),
    stuckHours: stuckHours.trim() === "" || Number.isNaN(hours) ? -1 : hours,
  };
}
export const NOW = "now";
export const OTHER_TIME = "other";

/** A remembered device query: only its known fields, each of its type. */
export function isDeviceQuery(v: unknown): v is DeviceQuery {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  for (const [k, x] of Object.entries(v)) {
    if (k === "drift") {
      if (typeof x !== "boolean") return false;
    } else if (k === "compared") {
      if (x !== null && !isComparedCell(x)) return false;
    } else if (!(QUERY_TEXT_FIELDS as readonly string[]).includes(k)) return false;
    else if (x !== null && (typeof x !== "string" || x.length > 200)) return false;
  }
  return true;
}

/** A remembered history range: hours (1 to a year) or null for all. */
export const isHours = (v: unknown): v is number | null => v === null || (typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 24 * 366);

/** "30 s", "12 min", "5 h 10 min", "3 d 4 h": a span in its two largest units. */
export function spanText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/**
 * What the history chart really covers, in words: the range asked for only when the snapshots
 * span most of it; else the span they have ("35 s of snapshots: the history starts at the first
 * scan"), so a label never promises 24 hours over half a minute.
 */
export function historySpan(atTimes: readonly string[], hours: number | null, rangeLabel: string): { title: string; short: boolean } {
  const ms = atTimes.map((t) => Date.parse(t)).filter((x) => Number.isFinite(x));
  if (ms.length === 0) return { title: rangeLabel, short: false };
  const span = Math.max(...ms) - Math.min(...ms);
  if (hours !== null && span >= hours * 3_600_000 * 0.9) return { title: rangeLabel, short: false };
  const what = ms.length === 1 ? "one snapshot" : `${spanText(span)} of snapshots`;
  return { title: hours === null ? `All: ${what}` : `${rangeLabel}: ${what}, all there is so far`, short: true };
}

/** The days of a maintenance window, as Rust reads them, in the week's order. */
export const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
const DAY_LABEL: Record<string, string> = { mon: "Mon", tue: "Tue", wed: "Wed", thu: "Thu", fri: "Fri", sat: "Sat", sun: "Sun" };
export const dayLabel = (d: string) => DAY_LABEL[d] ?? d;

/** A schedule as the wizard's fields hold it (text, as typed). */
export type ScheduleDraft = {
  timeZone: string;
  /** `YYYY-MM-DDTHH:MM` (an `<input type="datetime-local">`), in `timeZone`; empty: at once. */
  startAt: string;
  windows: { days: string[]; from: string; to: string }[];
  minutesBetweenWaves: string;
};

/** This machine's IANA time zone (the default of a new schedule). */
export function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/**
 * The schedule the draft describes, or the first rule a field breaks that needs no Rust (a
 * whole number of minutes). Every other rule (the zone, the times, the days) is Rust's, named
 * by field in the preview.
 */
export function scheduleOf(d: ScheduleDraft): { schedule: Schedule } | { field: string; error: string } {
  const gap = d.minutesBetweenWaves.trim();
  const minutes = gap === "" ? 0 : Number(gap);
  if (!/^\d+$/.test(gap || "0") || !Number.isSafeInteger(minutes)) {
    return { field: "schedule.minutesBetweenWaves", error: "must be a whole number of minutes (0: none)" };
  }
  return {
    schedule: {
      timeZone: d.timeZone.trim(),
      startAt: d.startAt.trim() || null,
      windows: d.windows.map((w) => ({ days: DAYS.filter((x) => w.days.includes(x)), from: w.from, to: w.to })),
      minutesBetweenWaves: minutes,
    },
  };
}

/** Days as ranges where they run on: "Mon–Fri", "Sat, Sun", "Mon, Wed–Fri". */
export function daysText(days: readonly string[]): string {
  const idx = DAYS.map((d, i) => (days.includes(d) ? i : -1)).filter((i) => i >= 0);
  const parts: string[] = [];
  for (let k = 0; k < idx.length; ) {
    let end = k;
    while (end + 1 < idx.length && idx[end + 1] === idx[end] + 1) end++;
    const a = dayLabel(DAYS[idx[k]]);
    const b = dayLabel(DAYS[idx[end]]);
    parts.push(end - k >= 2 ? `${a}–${b}` : end > k ? `${a}, ${b}` : a);
    k = end + 1;
  }
  return parts.join(", ");
}

/** A schedule in one line: "Mon–Fri 22:00–04:00, Sat 00:00–06:00 (Europe/Berlin) · from 2026-11-30 22:00 · 60 min between waves". */
export function scheduleText(s: Schedule): string {
  const windows = s.windows.length ? s.windows.map((w) => `${daysText(w.days)} ${w.from}–${w.to}`).join(", ") : "any time";
  const parts = [`${windows} (${s.timeZone})`];
  if (s.startAt) parts.push(`from ${s.startAt.replace("T", " ")}`);
  if (s.minutesBetweenWaves > 0) parts.push(`${num(s.minutesBetweenWaves)} min between waves`);
  return parts.join(" · ");
}

/**
 * The retry policy the wizard's fields describe: none for 0 retries, else the numbers read as
 * whole numbers (the first that is not named by its field) and the excluded reasons split at
 * commas. The ranges are Rust's rules, named in the preview.
 */
export function retryOf(times: string, delay: string, neverFor: string): { policy: RetryPolicy | null } | { field: string; error: string } {
  const whole = (t: string) => (/^\d+$/.test(t.trim()) ? Number(t.trim()) : null);
  const n = whole(times);
  if (n === null) return { field: "retry.times", error: "must be a whole number (0: never retry)" };
  if (n === 0) return { policy: null };
  const d = whole(delay);
  if (d === null) return { field: "retry.delayMinutes", error: "must be a whole number of minutes" };
  const words = neverFor.split(",").map((w) => w.trim()).filter((w) => w !== "");
  return { policy: { times: n, delayMinutes: d, neverFor: words } };
}

/** A retry policy in one line: "up to 2 retries, 5 min after a failure, never for: signature". */
export function retryText(r: RetryPolicy): string {
  const never = r.neverFor.length ? `, never for: ${r.neverFor.join(", ")}` : "";
  return `up to ${num(r.times)} ${r.times === 1 ? "retry" : "retries"}, ${num(r.delayMinutes)} min after a failure${never}`;
}

/** One row of the rehearsal's models as typed: a connection kind ("" for every other device), the
 * failed percent, and the download and install minutes as "least-most" (or one number). */
export type ModelDraft = { connection: string; fail: string; download: string; install: string };

/**
 * The rehearsal's models from the rows as typed, or each field that does not read as a number
 * (keyed as Rust names it, `models[i].failPercent`). The ranges themselves are Rust's rules.
 */
export function modelsOf(drafts: ModelDraft[]): { models: ModelRule_Deserialize[] } | { problems: Record<string, string> } {
  const problems: Record<string, string> = {};
  const number = (t: string) => (/^\s*\d+(\.\d+)?\s*$/.test(t) ? Number(t) : null);
  const range = (t: string): [number, number] | null => {
    const [lo, hi = lo] = t.split("-");
    const a = number(lo ?? "");
    const b = number(hi ?? "");
    return a === null || b === null || t.split("-").length > 2 ? null : [a, b];
  };
  const models = drafts.map((d, i) => {
    const fail = number(d.fail.replace("%", ""));
    if (fail === null) problems[`models[${i}].failPercent`] = "must be a percentage from 0 to 100";
    const download = range(d.download);
    if (download === null) problems[`models[${i}].downloadMinutes`] = "minutes as least-most, e.g. 1-10";
    const install = range(d.install);
    if (install === null) problems[`models[${i}].installMinutes`] = "minutes as least-most, e.g. 0.5-3";
    return {
      moduleId: null,
      connection: d.connection === "" ? null : d.connection,
      failPercent: fail ?? 0,
      downloadMinutes: download ?? [0, 0],
      installMinutes: install ?? [0, 0],
    } satisfies ModelRule_Deserialize;
  });
  return Object.keys(problems).length ? { problems } : { models };
}

/** Where devices that appear after the start go, in a few words. */
export function lateText(late: LateDevices): string {
  return late === "current" ? "new devices join the wave under way" : late === "next" ? "new devices join the next wave" : "new devices left out";
}
