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
