import { describe, expect, it } from "vitest";
import { formatLocalTime, middleEllipsis, shapeBars, timelineSeries, timeTickFormat, timeTicks } from "./chartData";

describe("shapeBars", () => {
  it("sorts by value, largest first, ties by label in numeric order", () => {
    const bars = shapeBars([
      { label: "1.10.0", value: 5 },
      { label: "1.9.0", value: 5 },
      { label: "2.0.0", value: 9 },
      { label: "0.1", value: 0 },
    ]);
    expect(bars.map((b) => b.label)).toEqual(["2.0.0", "1.9.0", "1.10.0", "0.1"]);
  });

  it("keeps up to 12 bars as they are", () => {
    const items = Array.from({ length: 12 }, (_, i) => ({ label: `v${i}`, value: i }));
    const bars = shapeBars(items);
    expect(bars).toHaveLength(12);
    expect(bars.some((b) => b.others)).toBe(false);
  });

  it("merges the smallest beyond 12 into one 'other' bar with their sum", () => {
    const items = Array.from({ length: 30 }, (_, i) => ({ label: `v${i}`, value: i + 1, color: "#000000" }));
    const bars = shapeBars(items);
    expect(bars).toHaveLength(12);
    expect(bars[0]).toEqual({ label: "v29", value: 30, color: "#000000" });
    expect(bars[10].label).toBe("v19");
    const other = bars[11];
    expect(other).toEqual({ label: "other (19)", value: (19 * 20) / 2, others: 19 });
    // Nothing lost: the total is the same.
    expect(bars.reduce((s, b) => s + b.value, 0)).toBe((30 * 31) / 2);
  });

  it("does not change its input", () => {
    const items = [{ label: "a", value: 1 }, { label: "b", value: 2 }];
    shapeBars(items);
    expect(items.map((i) => i.label)).toEqual(["a", "b"]);
  });
});

describe("middleEllipsis", () => {
  it("keeps short labels and cuts long ones in the middle to the length asked", () => {
    expect(middleEllipsis("1.2.3")).toBe("1.2.3");
    const cut = middleEllipsis("2.0.0-rc.1+build.20260105.a9f3c2e1", 24);
    expect(cut).toHaveLength(24);
    expect(cut.startsWith("2.0.0-rc.1+")).toBe(true);
    expect(cut.endsWith("a9f3c2e1")).toBe(true);
    expect(cut).toContain("…");
  });
});

describe("timelineSeries", () => {
  it("gives one series per status in time order, filling missing statuses with 0", () => {
    const series = timelineSeries([
      { at: "2026-01-05T08:10:00Z", counts: { SUCCEEDED: 5, FAILED: 1 } },
      { at: "2026-01-05T08:00:00Z", counts: { PENDING: 6, CUSTOM: 2 } },
      { at: "not a time", counts: { PENDING: 99 } },
    ]);
    expect(series.map((s) => s.status)).toEqual(["PENDING", "SUCCEEDED", "FAILED", "CUSTOM"]);
    const t0 = Date.parse("2026-01-05T08:00:00Z");
    const t1 = Date.parse("2026-01-05T08:10:00Z");
    expect(series[0].points).toEqual([{ x: t0, y: 6 }, { x: t1, y: 0 }]);
    expect(series[2].points).toEqual([{ x: t0, y: 0 }, { x: t1, y: 1 }]);
  });

  it("gives nothing for no snapshots", () => {
    expect(timelineSeries([])).toEqual([]);
  });
});

describe("timeTickFormat", () => {
  // Local times built locally, so the test holds in any time zone.
  const at = new Date(2026, 0, 5, 9, 7, 3).getTime();
  it("is as fine as the span needs", () => {
    expect(timeTickFormat(5 * 60_000)(at)).toBe("09:07:03");
    expect(timeTickFormat(6 * 3600_000)(at)).toBe("09:07");
    expect(timeTickFormat(7 * 86400_000)(at)).toBe("01-05 09:07");
    expect(timeTickFormat(400 * 86400_000)(at)).toBe("2026-01-05");
  });
  it("formats tooltips in full local time", () => {
    expect(formatLocalTime(at)).toBe("2026-01-05 09:07:03");
  });
});

describe("timeTicks", () => {
  const local = (h: number, m: number, s = 0, day = 5) => new Date(2026, 0, day, h, m, s).getTime();
  const hm = (ms: number) => { const d = new Date(ms); return `${d.getDate()} ${d.getHours()}:${String(d.getMinutes()).padStart(2, "0")}:${String(d.getSeconds()).padStart(2, "0")}`; };

  it("puts ticks on round local minutes within the range", () => {
    const ticks = timeTicks(local(8, 0, 0), local(8, 59, 0), 8);
    expect(ticks.map(hm)).toEqual(["5 8:00:00", "5 8:10:00", "5 8:20:00", "5 8:30:00", "5 8:40:00", "5 8:50:00"]);
  });

  it("starts at the first round time after an odd start", () => {
    const ticks = timeTicks(local(8, 3, 20), local(8, 31, 0), 6);
    expect(ticks.map(hm)).toEqual(["5 8:05:00", "5 8:10:00", "5 8:15:00", "5 8:20:00", "5 8:25:00", "5 8:30:00"]);
  });

  it("uses seconds for short spans and hours for long ones", () => {
    expect(timeTicks(local(8, 0, 7), local(8, 0, 50), 5).map(hm)).toEqual(["5 8:00:10", "5 8:00:20", "5 8:00:30", "5 8:00:40", "5 8:00:50"]);
    expect(timeTicks(local(1, 30), local(23, 0), 8).map(hm)).toEqual(["5 3:00:00", "5 6:00:00", "5 9:00:00", "5 12:00:00", "5 15:00:00", "5 18:00:00", "5 21:00:00"]);
  });

  it("uses local midnights for spans of days", () => {
    const ticks = timeTicks(local(12, 0, 0, 1), local(12, 0, 0, 6), 8);
    expect(ticks.map(hm)).toEqual(["2 0:00:00", "3 0:00:00", "4 0:00:00", "5 0:00:00", "6 0:00:00"]);
  });

  it("never gives more than asked, and copes with an empty range", () => {
    for (const span of [7_000, 95_000, 3_600_000, 5 * 86_400_000, 90 * 86_400_000]) {
      expect(timeTicks(local(8, 0), local(8, 0) + span, 6).length).toBeLessThanOrEqual(6);
    }
    expect(timeTicks(local(8, 0), local(8, 0))).toEqual([local(8, 0)]);
    expect(timeTicks(NaN, NaN)).toEqual([]);
  });
});
