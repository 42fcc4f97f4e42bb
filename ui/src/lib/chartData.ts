// Data shaping for the dashboard charts, kept apart from Chart.js so it can be tested.

import { compareStatus } from "./status";

export type BarItem = { label: string; value: number; color?: string };

/** A bar as drawn; `others` counts the labels merged into the "other" bar. */
export type ShapedBar = BarItem & { others?: number };

/**
 * Bars sorted by value (largest first, then by label), at most `maxBars`: beyond that the
 * smallest are merged into one "other" bar (which counts as one of the `maxBars`).
 */
export function shapeBars(items: readonly BarItem[], maxBars = 12, otherLabel = "other"): ShapedBar[] {
  const sorted = [...items].sort((a, b) => b.value - a.value || a.label.localeCompare(b.label, undefined, { numeric: true }));
  if (sorted.length <= maxBars) return sorted;
  const keep = sorted.slice(0, Math.max(0, maxBars - 1));
  const rest = sorted.slice(keep.length);
  const value = rest.reduce((s, b) => s + b.value, 0);
  return [...keep, { label: `${otherLabel} (${rest.length})`, value, others: rest.length }];
}

/**
 * A long label cut in the middle (`2.0.0-rc.1+buil…20260105`), keeping its start and its end,
 * where versions usually differ.
 */
export function middleEllipsis(label: string, max = 24): string {
  if (label.length <= max) return label;
  const tail = Math.floor((max - 1) / 2);
  const head = max - 1 - tail;
  return `${label.slice(0, head)}…${label.slice(label.length - tail)}`;
}

/** Devices per status at one moment. */
export type StatusSnapshot = { at: string /* RFC 3339 */; counts: Record<string, number> };

export type TimelineSeries = { status: string; points: { x: number; y: number }[] };

/**
 * Snapshots as one series per status over epoch milliseconds, in time order; a status missing
 * from a snapshot counts 0 there (so stacked areas stay closed). Snapshots with an unreadable
 * time are left out. Statuses: the known ones in rollout order, then others by name.
 */
export function timelineSeries(snapshots: readonly StatusSnapshot[]): TimelineSeries[] {
  const timed = snapshots
    .map((s) => ({ x: Date.parse(s.at), counts: s.counts }))
    .filter((s) => Number.isFinite(s.x))
    .sort((a, b) => a.x - b.x);
  const statuses = new Set<string>();
  for (const s of timed) for (const k of Object.keys(s.counts)) statuses.add(k);
  return [...statuses].sort(compareStatus).map((status) => ({
    status,
    points: timed.map((s) => ({ x: s.x, y: s.counts[status] ?? 0 })),
  }));
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * A formatter for time-axis ticks in local time, as fine as the shown span needs:
 * seconds under 10 minutes, minutes under 2 days, day and time under 2 months, else the date.
 */
export function timeTickFormat(spanMs: number): (ms: number) => string {
  const MIN = 60_000;
  const DAY = 24 * 60 * MIN;
  if (spanMs < 10 * MIN) return (ms) => { const d = new Date(ms); return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`; };
  if (spanMs < 2 * DAY) return (ms) => { const d = new Date(ms); return `${pad(d.getHours())}:${pad(d.getMinutes())}`; };
  if (spanMs < 60 * DAY) return (ms) => { const d = new Date(ms); return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`; };
  return (ms) => { const d = new Date(ms); return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`; };
}

/** A full local time for tooltips: `2026-01-05 09:30:12`. */
export function formatLocalTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

const STEPS_MS = [
  1, 2, 5, 10, 15, 30, // seconds
  60, 120, 300, 600, 900, 1800, // minutes
  3600, 7200, 10800, 21600, 43200, // hours
  86400, 172800, 604800, // days, a week
].map((s) => s * 1000);

/**
 * Tick positions on a time axis at round local times (every 5 min, every hour, each midnight…):
 * the smallest step that gives at most `maxTicks` ticks in `min`..`max`. Steps of days and more
 * are counted in calendar days, so they stay on midnight across daylight-saving changes.
 */
export function timeTicks(min: number, max: number, maxTicks = 8): number[] {
  if (!(max > min) || maxTicks < 1) return Number.isFinite(min) ? [min] : [];
  const span = max - min;
  // Both ends may fall on a tick: a span of n steps can hold n + 1 ticks.
  const step = STEPS_MS.find((s) => Math.floor(span / s) + 1 <= maxTicks) ?? Math.ceil(span / Math.max(1, maxTicks - 1) / 86_400_000) * 86_400_000;
  const DAY = 86_400_000;
  const d = new Date(min);
  d.setMilliseconds(0);
  if (step < 60_000) d.setSeconds(Math.ceil(d.getSeconds() / (step / 1000)) * (step / 1000));
  else if (step < 3_600_000) {
    d.setSeconds(0);
    d.setMinutes(Math.ceil((d.getMinutes() + (d.getTime() < min ? 1 : 0)) / (step / 60_000)) * (step / 60_000));
  } else if (step < DAY) {
    d.setSeconds(0);
    d.setMinutes(0);
    d.setHours(Math.ceil((d.getHours() + (d.getTime() < min ? 1 : 0)) / (step / 3_600_000)) * (step / 3_600_000));
  } else d.setHours(0, 0, 0, 0);
  const out: number[] = [];
  while (d.getTime() < min) {
    if (step >= DAY) d.setDate(d.getDate() + step / DAY);
    else d.setTime(d.getTime() + step);
  }
  for (let guard = 0; d.getTime() <= max && guard < 1000; guard++) {
    out.push(d.getTime());
    if (step >= DAY) d.setDate(d.getDate() + step / DAY);
    else d.setTime(d.getTime() + step);
  }
  return out;
}
