import { describe, expect, it } from "vitest";
import order from "../../../crates/console/src/fleet/version_order.json";
import { compareVersions, downgradeOf, downgradeText, newestVersion } from "./version";

const sign = (n: number) => Math.sign(n) || 0;

describe("compareVersions", () => {
  it("compares numeric parts as numbers", () => {
    expect(sign(compareVersions("1.10.0", "1.9.0"))).toBe(1);
    expect(sign(compareVersions("1.9.0", "1.10.0"))).toBe(-1);
    expect(sign(compareVersions("1.2.1", "1.2.0"))).toBe(1);
    expect(sign(compareVersions("10.0", "9.99"))).toBe(1);
    expect(compareVersions("1.2.0", "1.2.0")).toBe(0);
    expect(compareVersions("01.2", "1.2")).toBe(0);
    expect(sign(compareVersions("1.99999999999999999999", "1.9"))).toBe(1);
  });

  it("orders 2.0 before 2.0.0 (more parts is newer), and never calls different texts of different length equal", () => {
    expect(sign(compareVersions("2.0", "2.0.0"))).toBe(-1);
    expect(sign(compareVersions("2.0.0", "2.0"))).toBe(1);
    expect(sign(compareVersions("2.0.0", "2.0.1"))).toBe(-1);
  });

  it("puts a pre-release before its release and after the one before", () => {
    expect(sign(compareVersions("1.2.0-rc1", "1.2.0"))).toBe(-1);
    expect(sign(compareVersions("1.2.0", "1.2.0-rc1"))).toBe(1);
    expect(sign(compareVersions("1.2.0-rc1", "1.1.9"))).toBe(1);
    expect(sign(compareVersions("1.2.0-rc1", "1.2.0-rc2"))).toBe(-1);
    expect(sign(compareVersions("1.2.0-rc1", "1.2.0.1"))).toBe(-1);
  });

  it("compares non-numeric parts as text", () => {
    expect(sign(compareVersions("1.2.b", "1.2.a"))).toBe(1);
    expect(sign(compareVersions("1.2.a", "1.2.10"))).toBe(1); // "a" > "10" as text
    expect(sign(compareVersions("beta", "alpha"))).toBe(1);
  });

  it("is antisymmetric and sorts a mixed list", () => {
    const list = ["1.10.0", "1.2.0-rc1", "2.0", "1.9.0", "1.2.0", "2.0.0", "1.2.1"];
    const sorted = [...list].sort(compareVersions);
    expect(sorted).toEqual(["1.2.0-rc1", "1.2.0", "1.2.1", "1.9.0", "1.10.0", "2.0", "2.0.0"]);
    for (const a of list) for (const b of list) expect(sign(compareVersions(a, b))).toBe(0 - sign(compareVersions(b, a)) || 0);
    expect(newestVersion(list)).toBe("2.0.0");
    expect(newestVersion([])).toBeNull();
  });
});

describe("downgradeOf", () => {
  const running = [
    { version: "1.2.1", devices: 240 },
    { version: "1.2.0", devices: 30 },
    { version: "1.1.0", devices: 5 },
  ];

  it("is a downgrade when older than what at least one device runs, and counts them", () => {
    expect(downgradeOf("1.2.0", running)).toEqual({ newest: "1.2.1", newestDevices: 240, devices: 240 });
    expect(downgradeOf("1.1.0", running)).toEqual({ newest: "1.2.1", newestDevices: 240, devices: 270 });
    expect(downgradeOf("1.0.0", [{ version: "1.10.0", devices: 1 }])).toEqual({ newest: "1.10.0", newestDevices: 1, devices: 1 });
  });

  it("is none for the newest or a newer version, or with no devices running one", () => {
    expect(downgradeOf("1.2.1", running)).toBeNull();
    expect(downgradeOf("1.10.0", [{ version: "1.9.0", devices: 9 }])).toBeNull();
    expect(downgradeOf("1.0.0", [])).toBeNull();
  });

  it("says which version and how many devices", () => {
    expect(downgradeText(downgradeOf("1.2.0", running)!)).toBe("downgrade: older than 1.2.1, which 240 of the chosen devices run");
    expect(downgradeText(downgradeOf("1.1.0", running)!)).toBe(
      "downgrade: older than 1.2.1, which 240 of the chosen devices run; 270 in all run a newer version than this",
    );
  });
});

// The same cases as Rust's `rollout::compare_versions` (what `dcs rollout preview` calls a downgrade).
describe("compareVersions agrees with Rust", () => {
  it("on every case of the shared fixture", () => {
    expect(order.cases.length).toBeGreaterThan(10);
    for (const [a, b, want] of order.cases as [string, string, number][]) {
      expect(sign(compareVersions(a, b)), `${a} vs ${b}`).toBe(want);
      expect(sign(compareVersions(b, a)), `${b} vs ${a}`).toBe(0 - want || 0);
    }
  });
});
