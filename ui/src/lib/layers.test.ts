import { describe, expect, it } from "vitest";
import { LayerStack, isChanged } from "./layers";

describe("LayerStack", () => {
  it("closes only the innermost layer on each Escape, then the next", () => {
    const s = new LayerStack();
    const closed: string[] = [];
    const remove: Record<string, () => void> = {};
    const open = (name: string) => {
      remove[name] = s.push({
        close: () => {
          closed.push(name);
          remove[name]();
        },
      });
    };
    open("dialog");
    open("picker");
    expect(s.escape()).toBe(true);
    expect(closed).toEqual(["picker"]);
    expect(s.depth).toBe(1);
    expect(s.escape()).toBe(true);
    expect(closed).toEqual(["picker", "dialog"]);
    expect(s.escape()).toBe(false);
  });

  it("keeps a layer that refuses to close (a busy dialog, or one asking first) on top", () => {
    const s = new LayerStack();
    let asks = 0;
    s.push({ close: () => {} });
    s.push({ close: () => asks++ });
    s.escape();
    s.escape();
    expect(asks).toBe(2);
    expect(s.depth).toBe(2);
  });

  it("removes a layer closed some other way, wherever it is, and removing twice is harmless", () => {
    const s = new LayerStack();
    const closed: string[] = [];
    s.push({ close: () => closed.push("dialog") });
    const pickerGone = s.push({ close: () => closed.push("picker") });
    s.push({ close: () => closed.push("confirm") });
    pickerGone();
    pickerGone();
    expect(s.depth).toBe(2);
    s.escape();
    expect(closed).toEqual(["confirm"]);
  });
});

describe("isChanged", () => {
  it("sees no change in the values a form opened with, whatever the key order", () => {
    expect(isChanged({ a: "", b: [1, 2], c: { d: null } }, { c: { d: null }, b: [1, 2], a: "" })).toBe(false);
    expect(isChanged({ a: "x", b: undefined }, { a: "x" })).toBe(false);
    expect(isChanged(new Set(["a"]), new Set(["a"]))).toBe(false);
  });

  it("sees a typed character, an added or removed item, a toggled choice", () => {
    expect(isChanged({ a: "" }, { a: "x" })).toBe(true);
    expect(isChanged({ a: [1] }, { a: [1, 2] })).toBe(true);
    expect(isChanged({ a: { on: false } }, { a: { on: true } })).toBe(true);
    expect(isChanged({ a: "1" }, { a: 1 })).toBe(true);
    expect(isChanged({ a: null }, { a: "" })).toBe(true);
    expect(isChanged({ a: "x" }, { a: "x", b: "y" })).toBe(true);
    expect(isChanged(new Set(["a"]), new Set(["b"]))).toBe(true);
  });
});
