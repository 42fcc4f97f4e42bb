// Time and refresh decisions of the downlinks screen, apart from layout: the countdown to a
// downlink's feedback deadline on the service's clock, and whether the lists keep refreshing.

/**
 * The service's clock as Rust gave it: `now` when the answer was made, service seconds per real
 * second (null, as a float that is not a number crosses IPC, counts as 1).
 */
export type ServiceClock = { now: string; rate: number | null };

/** How often lists and the detail refresh while something shown is still in progress. */
export const LIST_REFRESH_MS = 2000;
export const DETAIL_REFRESH_MS = 1000;

/**
 * The service's time (epoch ms) at local time `localNow`, given its clock as received at local
 * time `receivedAt`. The simulator's clock runs `rate` times faster than this computer's.
 */
export function serviceNow(clock: ServiceClock, receivedAt: number, localNow: number): number {
  const rate = clock.rate !== null && Number.isFinite(clock.rate) && clock.rate > 0 ? clock.rate : 1;
  return Date.parse(clock.now) + Math.max(0, localNow - receivedAt) * rate;
}

/** Milliseconds left before `deadline` on the service's clock (negative once passed); null when unknown. */
export function timeLeft(deadline: string | null, clock: ServiceClock, receivedAt: number, localNow: number): number | null {
  if (!deadline) return null;
  const d = Date.parse(deadline);
  if (Number.isNaN(d) || Number.isNaN(Date.parse(clock.now))) return null;
  return d - serviceNow(clock, receivedAt, localNow);
}

/** `5025000` as `1 h 23 min 45 s`; whole seconds, largest two or three units. */
export function formatSpan(ms: number): string {
  const total = Math.floor(Math.abs(ms) / 1000);
  const d = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (d > 0) return `${d} d ${h} h ${m} min`;
  if (h > 0) return `${h} h ${m} min ${s} s`;
  if (m > 0) return `${m} min ${s} s`;
  return `${s} s`;
}

/** The countdown as words: "14 min 32 s left", "passed 3 min 0 s ago", or null when unknown. */
export function formatCountdown(left: number | null): string | null {
  if (left === null) return null;
  return left >= 0 ? `${formatSpan(left)} left` : `passed ${formatSpan(left)} ago`;
}

export type RefreshPlan = {
  /** Keep refreshing. */
  active: boolean;
  inProgress: number;
  /** What the indicator says. */
  text: string;
};

/** Refresh while any downlink shown is not final; stop when all are (or there is nothing to show). */
export function refreshPlan(items: { isFinal: boolean }[], listReady: boolean): RefreshPlan {
  const inProgress = items.filter((d) => !d.isFinal).length;
  if (!listReady) return { active: false, inProgress, text: "" };
  if (inProgress === 0)
    return { active: false, inProgress, text: items.length ? "All shown downlinks are final: not refreshing" : "" };
  const n = inProgress === 1 ? "1 downlink is" : `${inProgress} downlinks are`;
  return { active: true, inProgress, text: `Live: ${n} in progress, refreshing every ${LIST_REFRESH_MS / 1000} s` };
}

/** "2 of 3 retries used", "no retries allowed", or null when the kind has none. */
export function retriesLabel(count: number | null, limit: number | null): string | null {
  if (limit === null && count === null) return null;
  if (!limit) return count ? `${count} retries used (limit 0)` : "no retries allowed";
  return `${count ?? 0} of ${limit} ${limit === 1 ? "retry" : "retries"} used`;
}

/** The same for a table cell: "1 / 3", or "—" when the kind has none. */
export function retriesShort(count: number | null, limit: number | null): string {
  if (limit === null && count === null) return "—";
  return `${count ?? 0} / ${limit ?? 0}`;
}
