import { describe, expect, it } from "vitest";
import { sameRow } from "./VirtualTable";

type R = { id: string };
const row: R = { id: "a" };
const base = () => ({
  index: 4,
  top: 88,
  row,
  rowKeyText: "a",
  failed: false,
  selected: false,
  focused: false,
  selectable: true,
  template: "36px 100px",
  rowHeight: 22,
  // Each render of the table makes new column and callback objects: they must not redraw a row.
  columns: [{ key: "id", header: "Id", width: 100, render: (r: R) => r.id }],
  columnsKey: "id",
  idBase: "vtx",
  ctx: { current: null! },
});

describe("sameRow (a scrolled table draws only the rows that changed)", () => {
  it("keeps a row whose data, place, selection and focus are unchanged", () => {
    expect(sameRow(base(), base())).toBe(true);
  });

  it("draws a row again when what it shows changes", () => {
    const changes: Partial<ReturnType<typeof base>>[] = [
      { row: { id: "a" } },
      { selected: true },
      { focused: true },
      { top: 110 },
      { index: 5 },
      { failed: true },
      { columnsKey: "id|module" },
      { template: "36px 120px" },
      { rowHeight: 28 },
    ];
    for (const c of changes) expect(sameRow(base(), { ...base(), ...c }), JSON.stringify(Object.keys(c))).toBe(false);
  });
});
