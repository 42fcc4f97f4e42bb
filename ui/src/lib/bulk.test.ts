import { describe, expect, it } from "vitest";
import { bulkReport, MAX_ITEMS, stillShown, toggled, toggledAll } from "./bulk";

describe("bulk actions", () => {
  it("pick and unpick items, all at once up to the most one action takes", () => {
    let s = toggled(new Set(), "a", true);
    s = toggled(s, "b", true);
    expect([...toggled(s, "a", false)]).toEqual(["b"]);
    expect([...toggledAll(s, ["a", "b", "c"])].sort()).toEqual(["a", "b", "c"]);
    expect(toggledAll(new Set(["a", "b"]), ["a", "b"]).size).toBe(0);
    const many = Array.from({ length: MAX_ITEMS + 5 }, (_, i) => String(i));
    expect(toggledAll(new Set(), many).size).toBe(MAX_ITEMS);
    expect([...stillShown(new Set(["a", "gone"]), ["a", "b"])]).toEqual(["a"]);
  });

  it("say what was done and what failed, keeping each failure", () => {
    const ok = { id: "1", done: true, error: null };
    const bad = { id: "2", done: false, error: "409 Conflict: final" };
    expect(bulkReport([ok, ok], "Cancelled", "downlink").text).toBe("Cancelled all 2 downlinks.");
    const mixed = bulkReport([ok, bad], "Cancelled", "downlink");
    expect(mixed.text).toBe("Cancelled 1 of 2 downlinks; 1 failed (see below), the others stay done.");
    expect(mixed.failed).toEqual([bad]);
    expect(bulkReport([bad], "Deleted", "binding").text).toContain("None of the 1 binding was deleted");
  });
});
