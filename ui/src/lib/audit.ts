// The audit screen's pure parts: what a record's outcome looks like, how its operation reads,
// and the filter as Rust takes it (times typed in local time, sent as UTC).

import { serviceTime } from "./timeWindow";

export type AuditFilters = { since: string; until: string; customer: string; operation: string; device: string; result: string };

export const NO_AUDIT_FILTERS: AuditFilters = { since: "", until: "", customer: "", operation: "", device: "", result: "" };

/** The outcomes a record has (Rust's words). */
export const RESULTS = ["done", "refused", "not sent", "unknown"] as const;

/** The operations the console records, by area, for the filter's choices (Rust may record
 * others: the filter also takes an operation typed as it is). */
export const OPERATION_AREAS: { value: string; label: string }[] = [
  { value: "package", label: "Packages" },
  { value: "firmware-file", label: "Firmware files" },
  { value: "release-notes", label: "Release notes" },
  { value: "downlink", label: "Downlinks" },
  { value: "binding", label: "Bindings" },
  { value: "target", label: "Target versions" },
  { value: "rollout", label: "Rollouts" },
  { value: "profile", label: "Profiles" },
];

/** The filter as the command takes it: empty members left out, times in UTC. */
export function auditRequest(f: AuditFilters) {
  const text = (s: string) => (s.trim() === "" ? null : s.trim());
  return {
    since: serviceTime(f.since),
    until: serviceTime(f.until),
    customer: text(f.customer),
    operation: text(f.operation),
    device: text(f.device),
    result: text(f.result),
  };
}

/** How an outcome is coloured: done is fine, refused failed, unknown asks for a look. */
export function resultTone(result: string): "ok" | "error" | "warn" | "muted" {
  switch (result) {
    case "done":
      return "ok";
    case "refused":
      return "error";
    case "unknown":
      return "warn";
    default:
      return "muted";
  }
}

/** `downlink.force-cancel` as "Downlink: force cancel"; an operation Rust did not name reads as it came. */
export function operationLabel(op: string): string {
  const dot = op.indexOf(".");
  if (dot < 1) return op;
  const area = op.slice(0, dot).replace(/-/g, " ");
  const verb = op.slice(dot + 1).replace(/-/g, " ");
  return `${area[0].toUpperCase()}${area.slice(1)}: ${verb}`;
}
