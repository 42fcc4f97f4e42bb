import { describe, expect, it } from "vitest";
import { isFilters, nameSaysSpec, needsSpecColumn, sortOf } from "./columns";

describe("redundant columns", () => {
  it("drops the specification when each module name already says it", () => {
    expect(nameSaysSpec("Main MCU (Asset Tracker T1)", "Asset Tracker T1")).toBe(true);
    expect(nameSaysSpec("Main MCU", "Asset Tracker T1")).toBe(false);
    expect(nameSaysSpec("Main MCU", null)).toBe(false);
    const said = [
      { moduleName: "Main MCU (Asset Tracker T1)", specName: "Asset Tracker T1" },
      { moduleName: "LoRa Radio (LoRa Water Meter WM-3)", specName: "LoRa Water Meter WM-3" },
    ];
    expect(needsSpecColumn(said, false)).toBe(false);
    expect(needsSpecColumn([...said, { moduleName: "Bootloader", specName: "LoRa Water Meter WM-3" }], false)).toBe(true);
    // A specification whose name is not known: the column (with its id) stays.
    expect(needsSpecColumn([{ moduleName: "Main MCU (X)", specName: null }], false)).toBe(true);
  });
  it("drops it when the list is narrowed to one specification", () => {
    expect(needsSpecColumn([{ moduleName: "Bootloader", specName: "S" }], true)).toBe(false);
  });
});

describe("remembered sort and filters", () => {
  it("takes only known fields", () => {
    const ok = sortOf(["name", "createdAt"]);
    expect(ok("name")).toBe(true);
    expect(ok("-createdAt")).toBe(true);
    expect(ok("--name")).toBe(false);
    expect(ok("password")).toBe(false);
    expect(ok(3)).toBe(false);
  });
  it("takes filters of the right shape only", () => {
    expect(isFilters({ spec: null, module: null, client: null })).toBe(true);
    expect(isFilters({ spec: "a", module: null, client: "b" })).toBe(true);
    expect(isFilters({ spec: 1, module: null, client: null })).toBe(false);
    expect(isFilters({ spec: "x".repeat(101), module: null, client: null })).toBe(false);
    expect(isFilters(null)).toBe(false);
    expect(isFilters({})).toBe(false);
  });
});
