import { describe, expect, it } from "vitest";
import { formatCountdown, formatSpan, refreshPlan, retriesLabel, retriesShort, serviceNow, timeLeft } from "./timing";

describe("countdown on the service's clock", () => {
  const clock = { now: "2026-01-05T08:00:00.000Z", rate: 1 };

  it("counts down in real time against a real service", () => {
    const left = timeLeft("2026-01-05T08:15:00.000Z", clock, 1000, 1000 + 30_000);
    expect(left).toBe(14.5 * 60_000);
    expect(formatCountdown(left)).toBe("14 min 30 s left");
  });

  it("runs as fast as the simulator's clock", () => {
    const fast = { ...clock, rate: 60 };
    expect(serviceNow(fast, 0, 1000)).toBe(Date.parse(clock.now) + 60_000);
    expect(formatCountdown(timeLeft("2026-01-05T08:15:00.000Z", fast, 0, 15_000))).toBe("0 s left");
    expect(formatCountdown(timeLeft("2026-01-05T08:15:00.000Z", fast, 0, 16_000))).toBe("passed 1 min 0 s ago");
  });

  it("never runs the clock backwards and knows when it cannot tell", () => {
    expect(serviceNow(clock, 5000, 1000)).toBe(Date.parse(clock.now));
    expect(serviceNow({ ...clock, rate: null }, 0, 1000)).toBe(Date.parse(clock.now) + 1000);
    expect(timeLeft(null, clock, 0, 0)).toBeNull();
    expect(timeLeft("soon", clock, 0, 0)).toBeNull();
    expect(formatCountdown(null)).toBeNull();
  });

  it("formats spans with their largest units", () => {
    expect(formatSpan(5_025_000)).toBe("1 h 23 min 45 s");
    expect(formatSpan(90_061_000)).toBe("1 d 1 h 1 min");
    expect(formatSpan(999)).toBe("0 s");
  });
});

describe("auto-refresh", () => {
  it("runs while anything shown is in progress and stops when all are final", () => {
    expect(refreshPlan([{ isFinal: true }, { isFinal: false }], true)).toMatchObject({ active: true, inProgress: 1 });
    expect(refreshPlan([{ isFinal: false }, { isFinal: false }], true).text).toContain("2 downlinks are in progress");
    expect(refreshPlan([{ isFinal: true }], true)).toMatchObject({ active: false, text: "All shown downlinks are final: not refreshing" });
    expect(refreshPlan([], true)).toMatchObject({ active: false, text: "" });
  });

  it("waits for the list to be ready", () => {
    expect(refreshPlan([{ isFinal: false }], false).active).toBe(false);
  });
});

describe("retries", () => {
  it("says how many of the limit were used", () => {
    expect(retriesLabel(1, 3)).toBe("1 of 3 retries used");
    expect(retriesLabel(0, 1)).toBe("0 of 1 retry used");
    expect(retriesLabel(0, 0)).toBe("no retries allowed");
    expect(retriesLabel(null, null)).toBeNull();
    expect(retriesShort(1, 3)).toBe("1 / 3");
    expect(retriesShort(null, null)).toBe("—");
  });
});
