// Selection over a list of rows that may be far larger than what is loaded: either "these keys"
// or "all matching rows except these keys", so "select all 100,000" holds no key at all.
// Values are immutable: every operation returns a new selection (or the same one when nothing
// changes), so a selection can sit in Preact state as it is.

export type Selection =
  | { readonly mode: "some"; readonly keys: ReadonlySet<string> }
  | { readonly mode: "allExcept"; readonly keys: ReadonlySet<string> };

/** What goes to Rust: `all: false` = exactly `keys`; `all: true` = every matching row but `keys`. */
export type SelectionWire = { all: boolean; keys: string[] };

/** How a header checkbox shows a selection. */
export type SelectionState = "none" | "some" | "all";

const EMPTY: Selection = { mode: "some", keys: new Set() };

/** Nothing selected. */
export function emptySelection(): Selection {
  return EMPTY;
}

/** Every matching row, whatever their number. */
export function selectAll(): Selection {
  return { mode: "allExcept", keys: new Set() };
}

export function clear(): Selection {
  return EMPTY;
}

export function isSelected(sel: Selection, key: string): boolean {
  return sel.mode === "some" ? sel.keys.has(key) : !sel.keys.has(key);
}

/** Selects (`on`) or deselects one row. */
export function setSelected(sel: Selection, key: string, on: boolean): Selection {
  return setMany(sel, [key], on);
}

export function toggle(sel: Selection, key: string): Selection {
  return setSelected(sel, key, !isSelected(sel, key));
}

/**
 * Selects (`on`, the default) or deselects the rows `from`..`to` (both included, either order).
 * `keysOf(lo, hi)` gives the keys of the rows `lo`..`hi` (inclusive) in the current order; the
 * model holds no rows itself.
 */
export function range(
  sel: Selection,
  from: number,
  to: number,
  keysOf: (lo: number, hi: number) => readonly string[],
  on = true,
): Selection {
  const lo = Math.max(0, Math.min(from, to));
  const hi = Math.max(from, to);
  if (hi < lo) return sel;
  return setMany(sel, keysOf(lo, hi), on);
}

/** Selects or deselects the given keys. */
export function setMany(sel: Selection, keys: Iterable<string>, on: boolean): Selection {
  // In "some" mode the set holds the selected keys; in "allExcept" it holds the deselected ones.
  const add = sel.mode === "some" ? on : !on;
  let next: Set<string> | null = null;
  for (const k of keys) {
    const has = (next ?? sel.keys).has(k);
    if (has === add) continue;
    next ??= new Set(sel.keys);
    if (add) next.add(k);
    else next.delete(k);
  }
  return next ? { mode: sel.mode, keys: next } : sel;
}

/** How many of `total` matching rows are selected. */
export function count(sel: Selection, total: number): number {
  if (sel.mode === "some") return sel.keys.size;
  return Math.max(0, total - sel.keys.size);
}

/** For a tri-state header checkbox. */
export function selectionState(sel: Selection, total: number): SelectionState {
  const n = count(sel, total);
  if (n === 0) return "none";
  return n >= total ? "all" : "some";
}

export function isEmpty(sel: Selection): boolean {
  return sel.mode === "some" && sel.keys.size === 0;
}

/** The form sent to Rust; keys sorted so equal selections serialise alike. */
export function toWire(sel: Selection): SelectionWire {
  return { all: sel.mode === "allExcept", keys: [...sel.keys].sort() };
}

export function fromWire(w: SelectionWire): Selection {
  return { mode: w.all ? "allExcept" : "some", keys: new Set(w.keys) };
}
