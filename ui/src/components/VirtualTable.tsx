import type { ComponentChildren, JSX, RefObject } from "preact";
import { memo } from "preact/compat";
import { useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import { toggleSort } from "../lib/format";
import { RowBlocks, StaleQuery, type FetchRows } from "../lib/rowBlocks";
import {
  clear as clearSelection,
  isEmpty,
  isSelected,
  range as selectRange,
  selectAll,
  selectionState,
  toggle,
  type Selection,
} from "../lib/selection";
import { useVirtualizer } from "../lib/useVirtualizer";
import { ErrorBox } from "./States";
import "./VirtualTable.css";

export type VirtualColumn<Row> = {
  key: string;
  header: string;
  /** Width in px; the minimum when `grow` is set. */
  width: number;
  /** Share of the spare width (like `fr`); fixed width without it. */
  grow?: number;
  /** `end` for numbers. */
  align?: "start" | "end";
  /** Sort expression of the column (`onSort` gets it, or `-` it for descending). */
  sortKey?: string;
  /** A cell of `row`, from the row alone: a shown row is drawn again only when its data, its
   * selection or focus, its place or the set of columns (their keys) change. */
  render: (row: Row) => ComponentChildren;
  /** Full text on hover, for cells that may be cut with an ellipsis. */
  title?: (row: Row) => string;
};

export type VirtualTableProps<Row> = {
  /** Rows matching the query. */
  count: number;
  /** Rows `offset`..`offset+limit` of the query, in its order (asked in blocks of 200). */
  fetchRows: FetchRows<Row>;
  /** Filter and sort: a change drops cached rows and the selection and scrolls to the top. */
  queryKey: string;
  /** Same query, fresher data (a rescan): rows are asked again in place, selection kept. */
  dataVersion?: string | number;
  rowKey: (row: Row) => string;
  columns: VirtualColumn<Row>[];
  /** `"field"` ascending, `"-field"` descending, as SortHeader uses. */
  sort: string | null;
  /** The next sort expression (a click toggles ascending and descending). */
  onSort: (sort: string) => void;
  /** With `onSelection`: a checkbox column, Space, Shift+click and Ctrl/Cmd+click. */
  selection?: Selection;
  onSelection?: (selection: Selection) => void;
  /** Enter or double click on a row. */
  onRowOpen?: (row: Row) => void;
  /** The table's accessible name. */
  label: string;
  /** Noun for the select-all checkbox ("devices"). */
  noun?: string;
  emptyText?: string;
  testid?: string;
  /** CSS height of the table (the body scrolls inside it): a length, or "100%" to fill a flex column. */
  height?: string;
  /** Row height in px: 28 by default, 22 to 24 for a compact table (cells stay one line either way). */
  rowHeight?: number;
  overscan?: number;
};

/** The header's height for a row height: 34 px at the default 28, 28 px for compact rows. */
const headerHeight = (rowHeight: number) => (rowHeight < 28 ? 28 : 34);
const CHECK_WIDTH = 36;

/**
 * A table over any number of rows (100,000 and more) of fixed height: only the rows in view and
 * a few around them are in the DOM. Rows come from `fetchRows` in blocks as they scroll in; a
 * grey placeholder stands in until they arrive. The header stays on top and scrolls sideways
 * with the body, both laid out by the same grid columns.
 *
 * Keys on the focused body: Up/Down, PageUp/PageDown, Home/End move the focused row; Space
 * toggles its selection; Enter opens it; Ctrl/Cmd+A selects all matching rows. Mouse: a click
 * focuses a row, Ctrl/Cmd+click toggles it, Shift+click selects from the last clicked row.
 */
export function VirtualTable<Row>(props: VirtualTableProps<Row>) {
  const {
    count,
    fetchRows,
    queryKey,
    dataVersion,
    rowKey,
    columns,
    sort,
    onSort,
    selection,
    onSelection,
    onRowOpen,
    label,
    noun = "rows",
    emptyText = "No rows match.",
    testid,
    height = "32rem",
    rowHeight = 28,
    overscan = 10,
  } = props;
  const selectable = !!(selection && onSelection);
  const HEADER_HEIGHT = headerHeight(rowHeight);
  const scrollRef = useRef<HTMLDivElement>(null);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const [focused, setFocused] = useState<number | null>(null);
  const anchor = useRef<number | null>(null);
  const selRef = useRef(selection);
  selRef.current = selection;
  const idBase = useMemo(() => `vt${Math.random().toString(36).slice(2, 8)}`, []);

  const cache = useMemo(() => new RowBlocks<Row>(fetchRows), []);
  cache.setFetch(fetchRows);
  useEffect(() => cache.subscribe(() => rerender(0)), [cache]);

  // A new query: forget its rows before anything of it is drawn.
  const shownQuery = useRef<string | null>(null);
  const queryChanged = shownQuery.current !== queryKey;
  if (queryChanged) {
    cache.reset(count);
    shownQuery.current = queryKey;
  }
  const mounted = useRef(false);
  useLayoutEffect(() => {
    if (!mounted.current) {
      mounted.current = true; // a selection given at mount belongs to this query
      return;
    }
    if (scrollRef.current) scrollRef.current.scrollTop = 0;
    setFocused(null);
    anchor.current = null;
    // "All except" speaks of the old query's rows: it must not carry over.
    if (selRef.current && onSelection && !isEmpty(selRef.current)) onSelection(clearSelection());
  }, [queryKey]);

  const shownVersion = useRef(dataVersion);
  useEffect(() => {
    if (shownVersion.current === dataVersion) return;
    shownVersion.current = dataVersion;
    cache.invalidate();
  }, [dataVersion]);

  const v = useVirtualizer<HTMLDivElement, HTMLDivElement>({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan,
    scrollMargin: HEADER_HEIGHT,
    scrollPaddingStart: HEADER_HEIGHT,
  });
  const items = v.getVirtualItems();
  const first = items.length ? items[0].index : 0;
  const last = items.length ? items[items.length - 1].index : -1;

  useEffect(() => {
    cache.setCount(count);
    cache.want(first, last);
  });

  const template = [...(selectable ? [`${CHECK_WIDTH}px`] : []), ...columns.map(track)].join(" ");
  const minWidth = (selectable ? CHECK_WIDTH : 0) + columns.reduce((s, c) => s + c.width, 0);
  const gridStyle = { gridTemplateColumns: template };


  const moveFocus = (index: number) => {
    if (count === 0) return;
    const i = Math.max(0, Math.min(count - 1, index));
    setFocused(i);
    v.scrollToIndex(i);
  };

  const selectRangeTo = (to: number) => {
    const from = anchor.current ?? to;
    const lo = Math.min(from, to);
    const hi = Math.max(from, to);
    const keys: string[] = [];
    for (let i = lo; i <= hi; i++) {
      const r = cache.row(i);
      if (r === undefined) break;
      keys.push(rowKey(r));
    }
    const apply = (ks: string[]) => {
      if (selRef.current && onSelection) onSelection(selectRange(selRef.current, 0, ks.length - 1, (a, b) => ks.slice(a, b + 1)));
    };
    if (keys.length === hi - lo + 1) {
      apply(keys);
      return;
    }
    // Part of the range was never shown: gather its keys first.
    cache.rowsIn(lo, hi).then(
      (rows) => apply(rows.map(rowKey)),
      (err) => {
        if (!(err instanceof StaleQuery)) console.error("range selection", err);
      },
    );
  };

  const toggleRow = (index: number) => {
    const r = cache.row(index);
    if (r === undefined || !selection || !onSelection) return;
    onSelection(toggle(selection, rowKey(r)));
  };

  const pageRows = () => {
    const h = scrollRef.current?.clientHeight ?? rowHeight * 10;
    return Math.max(1, Math.floor((h - HEADER_HEIGHT) / rowHeight) - 1);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.target !== scrollRef.current) return; // keys typed in a cell's own controls
    const cur = focused ?? (items.length ? first - 1 : -1);
    switch (e.key) {
      case "ArrowDown":
        moveFocus(cur + 1);
        break;
      case "ArrowUp":
        moveFocus(focused === null ? first : cur - 1);
        break;
      case "PageDown":
        moveFocus(cur + pageRows());
        break;
      case "PageUp":
        moveFocus((focused ?? first) - pageRows());
        break;
      case "Home":
        moveFocus(0);
        break;
      case "End":
        moveFocus(count - 1);
        break;
      case " ":
        if (focused === null || !selectable) return;
        if (e.shiftKey) selectRangeTo(focused);
        else toggleRow(focused);
        anchor.current = focused;
        break;
      case "Enter": {
        const r = focused === null ? undefined : cache.row(focused);
        if (r === undefined || !onRowOpen) return;
        onRowOpen(r);
        break;
      }
      case "a":
        if (!(e.ctrlKey || e.metaKey) || !selectable) return;
        onSelection(selectAll());
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  const onRowClick = (e: MouseEvent, index: number) => {
    setFocused(index);
    if (selectable && e.shiftKey && anchor.current !== null) {
      selectRangeTo(index);
      return; // the anchor stays, so a second Shift+click redraws the range from it
    }
    if (selectable && (e.ctrlKey || e.metaKey)) toggleRow(index);
    anchor.current = index;
  };

  // What a row calls back (the latest closures; rows re-render only when what they show changes).
  const ctx = useRef<RowContext<Row>>(null!);
  ctx.current = { scrollRef, anchor, onRowClick, onRowOpen, setFocused, selectRangeTo, toggleRow };
  const columnsKey = columns.map((c) => c.key).join("|");

  const state = selection ? selectionState(selection, count) : "none";
  const error = cache.error;

  return (
    <div class="vt" style={{ height }} data-testid={testid}>
      <div
        ref={scrollRef}
        class="vt-scroll"
        tabIndex={0}
        role="grid"
        aria-label={label}
        aria-rowcount={count + 1}
        aria-colcount={columns.length + (selectable ? 1 : 0)}
        aria-multiselectable={selectable || undefined}
        aria-activedescendant={focused !== null && focused >= first && focused <= last ? `${idBase}-${focused}` : undefined}
        onKeyDown={onKeyDown}
      >
        <div class="vt-inner" style={{ minWidth: `${minWidth}px` }}>
          <div class="vt-head" role="row" aria-rowindex={1} style={{ ...gridStyle, height: `${HEADER_HEIGHT}px` }}>
            {selectable && (
              <div class="vt-cell vt-check" role="columnheader">
                <input
                  type="checkbox"
                  aria-label={`Select all ${count.toLocaleString()} ${noun}`}
                  data-testid={testid ? `${testid}-select-all` : undefined}
                  checked={state === "all"}
                  ref={(el) => {
                    if (el) el.indeterminate = state === "some";
                  }}
                  disabled={count === 0}
                  onChange={() => onSelection(state === "all" ? clearSelection() : selectAll())}
                />
              </div>
            )}
            {columns.map((c) => {
              const active = c.sortKey && sort === c.sortKey ? "ascending" : c.sortKey && sort === `-${c.sortKey}` ? "descending" : undefined;
              return (
                <div
                  key={c.key}
                  class={`vt-cell vt-th${c.align === "end" ? " vt-end" : ""}`}
                  role="columnheader"
                  aria-sort={c.sortKey ? (active ?? "none") : undefined}
                >
                  {c.sortKey ? (
                    <button type="button" class="th-button" onClick={() => onSort(toggleSort(sort, c.sortKey!))}>
                      {c.header}
                      <span class="sort-mark" aria-hidden="true">
                        {active === "ascending" ? "▲" : active === "descending" ? "▼" : ""}
                      </span>
                    </button>
                  ) : (
                    c.header
                  )}
                </div>
              );
            })}
          </div>
          <div class="vt-body" style={{ height: `${v.getTotalSize()}px` }}>
            {count === 0 && <div class="vt-empty">{emptyText}</div>}
            {items.map((it) => {
              const row = queryChanged ? undefined : cache.row(it.index);
              const key = row === undefined ? undefined : rowKey(row);
              return (
                <VtRow<Row>
                  key={it.index}
                  index={it.index}
                  top={it.start - HEADER_HEIGHT}
                  row={row}
                  rowKeyText={key}
                  failed={row === undefined && cache.status(it.index) === "error"}
                  selected={key !== undefined && selectable && isSelected(selection, key)}
                  focused={it.index === focused}
                  selectable={selectable}
                  template={template}
                  rowHeight={rowHeight}
                  columns={columns}
                  columnsKey={columnsKey}
                  idBase={idBase}
                  ctx={ctx}
                />
              );
            })}
          </div>
        </div>
      </div>
      {error !== undefined && <ErrorBox error={error} onRetry={() => cache.retry()} />}
    </div>
  );
}

type RowContext<Row> = {
  scrollRef: RefObject<HTMLDivElement>;
  anchor: { current: number | null };
  onRowClick: (e: MouseEvent, index: number) => void;
  onRowOpen?: (row: Row) => void;
  setFocused: (index: number) => void;
  selectRangeTo: (index: number) => void;
  toggleRow: (index: number) => void;
};

type RowProps<Row> = {
  index: number;
  /** Offset from the top of the body, px. */
  top: number;
  /** Undefined until its block arrives: a placeholder. */
  row: Row | undefined;
  rowKeyText: string | undefined;
  failed: boolean;
  selected: boolean;
  focused: boolean;
  selectable: boolean;
  template: string;
  rowHeight: number;
  columns: VirtualColumn<Row>[];
  /** The columns' keys: a new array of the same columns (each render makes one) keeps the row. */
  columnsKey: string;
  idBase: string;
  ctx: { current: RowContext<Row> };
};

/**
 * Whether a shown row can stay as drawn: scrolling renders the table again each frame, and only
 * the rows that came into view (or whose data, selection, focus or place changed) are drawn;
 * the others keep their DOM as it is.
 */
export function sameRow<Row>(a: RowProps<Row>, b: RowProps<Row>): boolean {
  return (
    a.index === b.index &&
    a.top === b.top &&
    a.row === b.row &&
    a.rowKeyText === b.rowKeyText &&
    a.failed === b.failed &&
    a.selected === b.selected &&
    a.focused === b.focused &&
    a.selectable === b.selectable &&
    a.template === b.template &&
    a.rowHeight === b.rowHeight &&
    a.columnsKey === b.columnsKey &&
    a.idBase === b.idBase
  );
}

function RowView<Row>(p: RowProps<Row>) {
  const { index, row, selectable, columns, ctx } = p;
  const style: JSX.CSSProperties = {
    gridTemplateColumns: p.template,
    height: `${p.rowHeight}px`,
    lineHeight: `${p.rowHeight - 1}px`,
    transform: `translateY(${p.top}px)`,
  };
  const common = {
    id: `${p.idBase}-${index}`,
    role: "row" as const,
    "aria-rowindex": index + 2,
    "data-index": index,
    style,
  };
  if (row === undefined) {
    return (
      <div {...common} class={`vt-row vt-placeholder${p.focused ? " vt-focused" : ""}`} aria-busy={!p.failed}>
        {selectable && <div class="vt-cell vt-check" role="gridcell" />}
        {columns.map((c) => (
          <div key={c.key} class="vt-cell" role="gridcell">
            {p.failed ? <span class="vt-failed">—</span> : <span class="vt-skel" />}
          </div>
        ))}
      </div>
    );
  }
  const key = p.rowKeyText!;
  const sel = p.selected;
  return (
    <div
      {...common}
      class={`vt-row${sel ? " vt-selected" : ""}${p.focused ? " vt-focused" : ""}`}
      aria-selected={selectable ? sel : undefined}
      data-key={key}
      onMouseDown={(e) => {
        if (e.shiftKey) e.preventDefault(); // no text selection on Shift+click
        // Keep the keyboard on the table, not on a cell.
        if (!(e.target as HTMLElement).closest("input, button, a, select, textarea")) {
          e.preventDefault();
          ctx.current.scrollRef.current?.focus({ preventScroll: true });
        }
      }}
      onClick={(e) => ctx.current.onRowClick(e, index)}
      onDblClick={() => ctx.current.onRowOpen?.(row)}
    >
      {selectable && (
        <div class="vt-cell vt-check" role="gridcell">
          <input
            type="checkbox"
            tabIndex={-1}
            aria-label={`Select ${key}`}
            checked={sel}
            onClick={(e) => {
              e.stopPropagation();
              const c = ctx.current;
              c.setFocused(index);
              if (e.shiftKey && c.anchor.current !== null) c.selectRangeTo(index);
              else {
                c.toggleRow(index);
                c.anchor.current = index;
              }
            }}
          />
        </div>
      )}
      {columns.map((c) => (
        <div key={c.key} class={`vt-cell${c.align === "end" ? " vt-end" : ""}`} role="gridcell" title={c.title?.(row)}>
          {c.render(row)}
        </div>
      ))}
    </div>
  );
}

const VtRow = memo(RowView, sameRow);

function track(c: { width: number; grow?: number }): string {
  return c.grow ? `minmax(${c.width}px, ${c.grow}fr)` : `${c.width}px`;
}
