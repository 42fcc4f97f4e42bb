import type { ComponentChildren, Ref } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Pager, PagerState } from "../lib/pager";
import { toggleSort } from "../lib/format";
import { Empty, ErrorBox, Loading } from "./States";
import "./DataTable.css";

/**
 * A column: `field` sorts it (null: not sortable); `label` names it (and keys it); `head`
 * replaces the label's content (a select-all box); `width` fixes it in a compact table (CSS
 * length), the others share what is left.
 */
export type Column = { field: string | null; label: string; head?: ComponentChildren; width?: string };

/** Whether the window is at least `px` wide, following it as it is resized (a list leaves out
 * columns a narrow window has no room for). */
export function useWideWindow(px: number): boolean {
  const query = `(min-width: ${px}px)`;
  const [wide, setWide] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const m = window.matchMedia(query);
    const on = () => setWide(m.matches);
    m.addEventListener("change", on);
    on();
    return () => m.removeEventListener("change", on);
  }, [query]);
  return wide;
}

/** Sortable column headers: a click sorts ascending, a second descending. */
export function SortHeader({ columns, sort, onSort }: { columns: Column[]; sort: string | null; onSort: (s: string) => void }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => {
          const active = sort === c.field ? "ascending" : sort === `-${c.field}` ? "descending" : undefined;
          return (
            <th
              key={c.label}
              aria-sort={c.field ? (active ?? "none") : undefined}
              scope="col"
              style={c.width ? { width: c.width } : undefined}
              title={c.head ? undefined : c.label || undefined}
            >
              {c.head ? (
                c.head
              ) : c.field ? (
                <button type="button" class="th-button" onClick={() => onSort(toggleSort(sort, c.field!))}>
                  {c.label}
                  <span class="sort-mark" aria-hidden="true">
                    {active === "ascending" ? "▲" : active === "descending" ? "▼" : ""}
                  </span>
                </button>
              ) : (
                c.label
              )}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

/** Loading, error and empty states around a paged table, and the sentinel row that loads more. */
export function PagedTable<T>({
  state,
  pager,
  sentinel,
  what,
  emptyText,
  columns,
  sort,
  onSort,
  testid,
  compact = false,
  children,
}: {
  state: PagerState<T>;
  pager: Pager<T>;
  sentinel: Ref<HTMLTableRowElement>;
  what: string;
  emptyText: string;
  columns: Column[];
  sort: string | null;
  onSort: (s: string) => void;
  testid: string;
  /**
   * One line per row: cells never wrap (a long value ends in an ellipsis and its cell's title
   * holds it whole), tighter padding, columns as wide as their `width`.
   */
  compact?: boolean;
  children: ComponentChildren;
}) {
  return (
    <>
      {state.status === "loading" && <Loading label={`Loading ${what}…`} />}
      {state.status === "error" && <ErrorBox error={state.error} onRetry={() => pager.reload()} />}
      {(state.status === "ready" || state.status === "loadingMore") && state.items.length === 0 && (
        <Empty title={`No ${what}`}>{emptyText}</Empty>
      )}
      {state.items.length > 0 && (
        <div class="table-wrap">
          <table class={compact ? "table table-compact" : "table"} data-testid={testid}>
            <SortHeader columns={columns} sort={sort} onSort={onSort} />
            <tbody>
              {children}
              {!state.done && (
                <tr ref={sentinel} class="sentinel">
                  <td colSpan={columns.length}>
                    {state.error ? (
                      <ErrorBox error={state.error} onRetry={() => pager.loadMore()} />
                    ) : (
                      <Loading label="Loading more…" />
                    )}
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** "12 modules", "50+ packages" while more pages exist. */
export function countLabel<T>(state: PagerState<T>, noun: string): string {
  if (state.status !== "ready" && state.status !== "loadingMore") return "";
  const n = state.items.length;
  return `${n}${state.done ? "" : "+"} ${noun}${n === 1 ? "" : "s"}`;
}
