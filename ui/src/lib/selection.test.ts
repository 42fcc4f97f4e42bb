import { describe, expect, it } from "vitest";
import {
  clear,
  count,
  emptySelection,
  fromWire,
  isEmpty,
  isSelected,
  range,
  selectAll,
  selectionState,
  setSelected,
  toggle,
  toWire,
} from "./selection";

const keyOf = (i: number) => `d${i}`;
const keysOf = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, j) => keyOf(lo + j));

describe("selection", () => {
  it("starts empty and toggles single keys", () => {
    let s = emptySelection();
    expect(isEmpty(s)).toBe(true);
    expect(count(s, 100_000)).toBe(0);
    s = toggle(s, "a");
    s = toggle(s, "b");
    expect(isSelected(s, "a")).toBe(true);
    expect(isSelected(s, "c")).toBe(false);
    expect(count(s, 100_000)).toBe(2);
    s = toggle(s, "a");
    expect(isSelected(s, "a")).toBe(false);
    expect(toWire(s)).toEqual({ all: false, keys: ["b"] });
  });

  it("does not change the value given to it", () => {
    const a = emptySelection();
    const b = toggle(a, "x");
    expect(isSelected(a, "x")).toBe(false);
    expect(isSelected(b, "x")).toBe(true);
    // No change: the same object comes back, so state setters skip a render.
    expect(setSelected(b, "x", true)).toBe(b);
  });

  it("selects all matching rows without holding their keys, then deselects exceptions", () => {
    let s = selectAll();
    expect(s.keys.size).toBe(0);
    expect(count(s, 100_000)).toBe(100_000);
    expect(isSelected(s, keyOf(99_999))).toBe(true);
    s = toggle(s, keyOf(5));
    s = setSelected(s, keyOf(7), false);
    expect(isSelected(s, keyOf(5))).toBe(false);
    expect(count(s, 100_000)).toBe(99_998);
    expect(s.keys.size).toBe(2);
    expect(toWire(s)).toEqual({ all: true, keys: ["d5", "d7"] });
    // Selecting an exception again removes it from the exceptions.
    s = toggle(s, keyOf(5));
    expect(toWire(s)).toEqual({ all: true, keys: ["d7"] });
  });

  it("selects and deselects ranges in either direction through the keys function", () => {
    let s = range(emptySelection(), 12, 10, keysOf);
    expect(toWire(s).keys).toEqual(["d10", "d11", "d12"]);
    expect(count(s, 50)).toBe(3);
    s = range(s, 11, 20, keysOf, false);
    expect(toWire(s)).toEqual({ all: false, keys: ["d10"] });

    let all = range(selectAll(), 3, 5, keysOf, false);
    expect(toWire(all)).toEqual({ all: true, keys: ["d3", "d4", "d5"] });
    all = range(all, 4, 4, keysOf);
    expect(toWire(all)).toEqual({ all: true, keys: ["d3", "d5"] });
  });

  it("asks the keys function only for the range, clamped at 0", () => {
    const asked: [number, number][] = [];
    range(emptySelection(), -3, 2, (lo, hi) => {
      asked.push([lo, hi]);
      return keysOf(lo, hi);
    });
    expect(asked).toEqual([[0, 2]]);
  });

  it("reports the header checkbox state", () => {
    expect(selectionState(emptySelection(), 10)).toBe("none");
    expect(selectionState(toggle(emptySelection(), "a"), 10)).toBe("some");
    expect(selectionState(selectAll(), 10)).toBe("all");
    expect(selectionState(toggle(selectAll(), "a"), 10)).toBe("some");
    expect(selectionState(range(emptySelection(), 0, 2, keysOf), 3)).toBe("all");
    expect(selectionState(selectAll(), 0)).toBe("none");
    // Every row deselected one by one in "all except" mode: nothing left.
    expect(selectionState(range(selectAll(), 0, 2, keysOf, false), 3)).toBe("none");
  });

  it("clears and round-trips through the wire form", () => {
    expect(isEmpty(clear())).toBe(true);
    const s = toggle(toggle(selectAll(), "z"), "a");
    const back = fromWire(JSON.parse(JSON.stringify(toWire(s))) as ReturnType<typeof toWire>);
    expect(back.mode).toBe("allExcept");
    expect(isSelected(back, "z")).toBe(false);
    expect(isSelected(back, "q")).toBe(true);
    expect(toWire(back)).toEqual({ all: true, keys: ["a", "z"] });
  });
});
