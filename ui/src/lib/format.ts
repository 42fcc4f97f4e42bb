// Formatting helpers shared by the views.

/**
 * `2026-01-05T08:00:00Z` as `2026-01-05 08:00` (UTC, said once in the column header), with
 * `seconds` as `2026-01-05 08:00:00`.
 */
export function formatTimestamp(iso: string | null | undefined, seconds = false): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, "0");
  const hm = `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${hm}${seconds ? `:${p(d.getUTCSeconds())}` : ""}`;
}

/** The first group of a UUID, enough to tell ids apart on screen; the full id goes in a title. */
export function shortId(id: string): string {
  return id.split("-")[0] ?? id;
}

/** `http://127.0.0.1:43125/` as `127.0.0.1:43125`. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Next sort expression when a column header is clicked: ascending, then descending. */
export function toggleSort(current: string | null, field: string): string {
  if (current === field) return `-${field}`;
  return field;
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * The operator's local time on one line: `2026-01-05 09:00` (with `seconds`, `09:00:00`), in
 * the time zone of the machine. The UTC form goes in a tooltip (`<Time>` does both).
 */
export function formatLocal(iso: string | null | undefined, seconds = false): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hm}${seconds ? `:${pad(d.getSeconds())}` : ""}`;
}

/**
 * How long ago (or ahead) `iso` is from `now`, in the largest unit that fits: "just now",
 * "5 min ago", "in 3 h", "2 d ago". Null for a value that is not a time.
 */
export function relativeTime(iso: string | null | undefined, now: number = Date.now()): string | null {
  if (!iso) return null;
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return null;
  const diff = t - now;
  const s = Math.abs(diff) / 1000;
  if (s < 45) return "just now";
  const [n, unit] =
    s < 3600 ? [Math.round(s / 60), "min"] : s < 86400 ? [Math.round(s / 3600), "h"] : [Math.round(s / 86400), "d"];
  return diff < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

/**
 * The service's `createdBy` and `modifiedBy` (`principal/<uuid>`: the API key or user that made
 * the change) in words: `API caller 3deb1a2c`. The whole value belongs in a tooltip.
 */
export function describePrincipal(by: string): string {
  const m = /^principal\/([0-9a-f]{8}-[0-9a-f-]+)$/i.exec(by.trim());
  return m ? `API caller ${shortId(m[1])}` : by;
}
