import { describe, expect, it } from "vitest";
import { countsBadge } from "./rolloutCounts";

describe("countsBadge", () => {
  it("puts paused rollouts first, as a warning", () => {
    expect(countsBadge({ running: 1, paused: 2 })).toEqual({
      count: 2,
      text: "2 paused · 1 running",
      tone: "warn",
      title: "2 rollouts are paused: resume or abort in Rollouts > Rollouts; 1 running",
    });
    expect(countsBadge({ running: 0, paused: 1 })?.title).toBe("1 rollout is paused: resume or abort in Rollouts > Rollouts");
  });
  it("shows running ones quietly, and nothing when there is none or it is unknown", () => {
    expect(countsBadge({ running: 3, paused: 0 })).toEqual({ count: 3, text: "3 running", tone: "active", title: "3 rollouts running" });
    expect(countsBadge({ running: 0, paused: 0 })).toBeNull();
    expect(countsBadge(null)).toBeNull();
  });
});
