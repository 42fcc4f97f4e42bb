// The time filters every list offers the same way (created/modified, since/before): typed in
// the operator's local time, sent to Rust as UTC.

export type TimeWindow = { createdSince: string; createdBefore: string; modifiedSince: string; modifiedBefore: string };
export type TimeField = keyof TimeWindow;

export const NO_TIME: TimeWindow = { createdSince: "", createdBefore: "", modifiedSince: "", modifiedBefore: "" };

export const TIME_FIELDS: { id: TimeField; label: string }[] = [
  { id: "createdSince", label: "Created since" },
  { id: "createdBefore", label: "Created before" },
  { id: "modifiedSince", label: "Modified since" },
  { id: "modifiedBefore", label: "Modified before" },
];

/**
 * A time as typed (a date-time input's `2026-01-05T08:00`, local time) as the service's UTC
 * form; empty is null; anything else is passed as typed for Rust to check and name.
 */
export function serviceTime(typed: string): string | null {
  const t = typed.trim();
  if (t === "") return null;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(t)) {
    const d = new Date(t);
    if (!Number.isNaN(d.getTime())) return d.toISOString().replace(".000Z", "Z");
  }
  return t;
}

/** How many time filters are set. */
export function timeCount(w: Partial<TimeWindow>): number {
  return TIME_FIELDS.filter((f) => (w[f.id] ?? "").trim() !== "").length;
}
