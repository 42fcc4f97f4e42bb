import { describe, expect, it } from "vitest";
import { serviceTime, timeCount } from "./timeWindow";

describe("time filters", () => {
  it("send a local date-time as the same moment in UTC, and anything else as typed", () => {
    const typed = "2026-01-05T08:00";
    expect(serviceTime(typed)).toBe(new Date(2026, 0, 5, 8, 0).toISOString().replace(".000Z", "Z"));
    expect(serviceTime("")).toBeNull();
    expect(serviceTime("  ")).toBeNull();
    expect(serviceTime("yesterday")).toBe("yesterday");
    expect(serviceTime("2026-01-05T08:00:00Z")).toBe("2026-01-05T08:00:00Z");
  });

  it("count the filters set", () => {
    expect(timeCount({ createdSince: "x", modifiedBefore: " " })).toBe(1);
  });
});
