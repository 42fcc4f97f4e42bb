// Several items acted on behind one confirmation: which are picked, and what became of each.

import type { ItemOutcome } from "../ipc";

/** Most items one bulk action takes (`dcs_console::bulk::MAX_ITEMS`). */
export const MAX_ITEMS = 200;

/** `picked` with `id` added or removed. */
export function toggled(picked: ReadonlySet<string>, id: string, on: boolean): Set<string> {
  const next = new Set(picked);
  if (on) next.add(id);
  else next.delete(id);
  return next;
}

/** All of `ids` picked, or none when all already are (a header box). */
export function toggledAll(picked: ReadonlySet<string>, ids: string[]): Set<string> {
  const all = ids.length > 0 && ids.every((id) => picked.has(id));
  return all ? new Set() : new Set(ids.slice(0, MAX_ITEMS));
}

/** Only the picked ids still in `ids` (a list refreshed or filtered drops the rest). */
export function stillShown(picked: ReadonlySet<string>, ids: string[]): Set<string> {
  const shown = new Set(ids);
  return new Set([...picked].filter((id) => shown.has(id)));
}

export type BulkReport = { done: ItemOutcome[]; failed: ItemOutcome[]; text: string };

/** "Cancelled 3 of 4; 1 failed" in the words of `verb`/`noun`. */
export function bulkReport(outcomes: ItemOutcome[], verb: string, noun: string): BulkReport {
  const done = outcomes.filter((o) => o.done);
  const failed = outcomes.filter((o) => !o.done);
  const n = outcomes.length;
  const plural = n === 1 ? noun : `${noun}s`;
  const text =
    failed.length === 0
      ? `${verb} ${n === 1 ? "the" : `all ${n}`} ${plural}.`
      : done.length === 0
        ? `None of the ${n} ${plural} ${n === 1 ? "was" : "were"} ${verb.toLowerCase()}: the service refused each (see below).`
        : `${verb} ${done.length} of ${n} ${plural}; ${failed.length} failed (see below), the others stay done.`;
  return { done, failed, text };
}
