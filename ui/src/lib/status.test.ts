import { describe, expect, it } from "vitest";
import { compareStatus, contrast, downlinkBadge, hashColor, STATUSES, statusColor, withAlpha } from "./status";

// Surfaces of styles.css (light and dark).
const SURFACE = { light: "#ffffff", dark: "#161d27" } as const;

describe("contrast", () => {
  it("is the WCAG ratio", () => {
    expect(contrast("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrast("#ffffff", "#767676")).toBeCloseTo(4.54, 2);
  });
});

describe("statusColor", () => {
  it("gives every simulator status its own colour per theme", () => {
    for (const theme of ["light", "dark"] as const) {
      const colours = STATUSES.map((s) => statusColor(s, theme));
      expect(new Set(colours).size).toBe(STATUSES.length);
      for (const c of colours) expect(c).toMatch(/^#[0-9a-f]{6}$/);
    }
    expect(statusColor("FAILED", "light")).not.toBe(statusColor("FAILED", "dark"));
  });

  it("keeps status colours visible on the theme's surface (graphics contrast 3:1, `none` excepted)", () => {
    for (const theme of ["light", "dark"] as const) {
      for (const s of STATUSES) {
        if (s === "none") continue; // deliberately quiet grey
        expect(contrast(statusColor(s, theme), SURFACE[theme]), `${s} ${theme}`).toBeGreaterThanOrEqual(3);
      }
    }
  });

  it("hashes unknown statuses to a stable, readable colour", () => {
    const a = statusColor("ROLLING_BACK", "light");
    expect(a).toBe(statusColor("ROLLING_BACK", "light"));
    expect(a).toBe(hashColor("ROLLING_BACK", "light"));
    expect(a).not.toBe(statusColor("ROLLED_BACK", "light"));
    for (const label of ["ROLLING_BACK", "X", "unknown", "QUEUED", "2.0.0", ...Array.from({ length: 200 }, (_, i) => `S${i}`)]) {
      expect(contrast(hashColor(label, "light"), SURFACE.light)).toBeGreaterThanOrEqual(3);
      expect(contrast(hashColor(label, "dark"), SURFACE.dark)).toBeGreaterThanOrEqual(3);
    }
  });
});

describe("compareStatus", () => {
  it("orders known statuses as a rollout moves, others after them by name", () => {
    const order = ["ZED", "FAILED", "none", "PENDING", "ALPHA", "SUCCEEDED"].sort(compareStatus);
    expect(order).toEqual(["PENDING", "SUCCEEDED", "FAILED", "none", "ALPHA", "ZED"]);
  });
});

describe("withAlpha", () => {
  it("turns #rrggbb into rgba and leaves other forms alone", () => {
    expect(withAlpha("#16a34a", 0.5)).toBe("rgba(22, 163, 74, 0.5)");
    expect(withAlpha("red", 0.5)).toBe("red");
  });
});

describe("downlinkBadge", () => {
  it("never shows DONE alone in the failure colour: a failed or cancelled DONE says so", () => {
    expect(downlinkBadge("DONE", "failed")).toEqual({ label: "DONE · failed", tone: "failed" });
    expect(downlinkBadge("DONE", "cancelled")).toEqual({ label: "DONE · cancelled", tone: "cancelled" });
    expect(downlinkBadge("DONE", "delivered")).toEqual({ label: "DONE", tone: "delivered" });
  });

  it("leaves statuses that are results themselves as they are", () => {
    expect(downlinkBadge("FAILED", "failed")).toEqual({ label: "FAILED", tone: "failed" });
    expect(downlinkBadge("CANCELLED", "cancelled")).toEqual({ label: "CANCELLED", tone: "cancelled" });
    expect(downlinkBadge("DELIVERED", "delivered")).toEqual({ label: "DELIVERED", tone: "delivered" });
    expect(downlinkBadge("EXECUTING", "inProgress")).toEqual({ label: "EXECUTING", tone: "inProgress" });
    expect(downlinkBadge("LOST", "unknown")).toEqual({ label: "LOST", tone: "unknown" });
  });
});
