import { describe, expect, it } from "vitest";
import {
  choiceText,
  comparedText,
  compareRequest,
  hoursText,
  movementText,
  NOW,
  OTHER_TIME,
  queryText,
  cleanQuery,
  durationText,
  historySpan,
  isDeviceQuery,
  isHours,
  parsePercent,
  parseWaves,
  refreshModeText,
  scanFraction,
  scanText,
  spanText,
  daysText,
  retryOf,
  modelsOf,
  retryText,
  scheduleOf,
  scheduleText,
} from "./fleet";

describe("waves as typed", () => {
  it("reads commas, spaces and percent signs", () => {
    expect(parseWaves("1, 10 50%,100")).toEqual({ waves: [1, 10, 50, 100] });
    expect(parseWaves("2.5;100")).toEqual({ waves: [2.5, 100] });
  });
  it("names what is not a number and refuses nothing else (Rust checks the rules)", () => {
    expect(parseWaves("1, ten, 100")).toEqual({ error: "`ten` is not a percentage" });
    expect(parseWaves("  ")).toHaveProperty("error");
    expect(parseWaves("-5, 100")).toEqual({ error: "`-5` is not a percentage" });
    expect(parseWaves("50, 10")).toEqual({ waves: [50, 10] });
  });
  it("reads a threshold", () => {
    expect(parsePercent(" 95% ")).toBe(95);
    expect(parsePercent("0")).toBe(0);
    expect(parsePercent("x")).toBeNull();
    expect(parsePercent("")).toBeNull();
  });
});

describe("scan progress", () => {
  it("has a share only for a full scan of a known size", () => {
    expect(scanFraction({ kind: "full", pages: 3, states: 3000, expected: 12000, elapsedMs: 1000 })).toBe(0.25);
    expect(scanFraction({ kind: "full", pages: 3, states: 3000, expected: null, elapsedMs: 1000 })).toBeNull();
    expect(scanFraction({ kind: "incremental", pages: 1, states: 30, expected: null, elapsedMs: 100 })).toBeNull();
    expect(scanFraction({ kind: "full", pages: 13, states: 13000, expected: 12000, elapsedMs: 1000 })).toBe(1);
  });
  it("says it in words with the rate", () => {
    expect(scanText({ kind: "full", pages: 3, states: 3000, expected: 12000, elapsedMs: 500 })).toBe(
      "Full scan: 3,000 of about 12,000 states (25%), 3 pages, 6,000 states/s",
    );
    expect(scanText({ kind: "incremental", pages: 1, states: 0, expected: null, elapsedMs: 0 })).toBe("Refresh: 0 states, 1 pages");
  });
});

describe("device choices", () => {
  it("says what a rollout is for", () => {
    expect(choiceText({ kind: "all" })).toBe("every device of the module");
    expect(choiceText({ kind: "list", text: "imei:1, deveui:2\n3" })).toBe("a pasted list of 3 device ids");
    expect(choiceText({ kind: "query", query: { status: "FAILED", drift: true }, selection: null })).toBe(
      "devices matching: status FAILED, drifting",
    );
    expect(choiceText({ kind: "query", query: {}, selection: { all: false, keys: ["a", "b"] } })).toBe("2 selected devices");
    expect(choiceText({ kind: "query", query: {}, selection: { all: true, keys: ["a"] } })).toBe(
      "devices matching: every device, except 1 unselected",
    );
  });
  it("drops empty filters", () => {
    expect(cleanQuery({ moduleId: "m", version: "", status: " FAILED ", drift: false, device: null })).toEqual({
      moduleId: "m",
      status: "FAILED",
    });
  });
});

describe("durations", () => {
  it("reads at a glance", () => {
    expect(durationText(45.4)).toBe("45 ms");
    expect(durationText(3210)).toBe("3.2 s");
    expect(durationText(125_000)).toBe("2 min 5 s");
  });
});

describe("the refresh mode in words", () => {
  const mode = (incremental: boolean, text: string) => ({
    incremental,
    modifiedSince: incremental ? ("supported" as const) : ("ignored" as const),
    modifiedSinceCheckedAt: null,
    modifiedAtSort: "refused" as const,
    modifiedAtSortCheckedAt: null,
    text,
  });
  it("says the service's mode and the interval as chosen when refreshes are quick", () => {
    const s = { mode: mode(true, "incremental: only states changed since the last refresh are read"), autoRefresh: true, intervalSeconds: 15, effectiveIntervalSeconds: 15 };
    expect(refreshModeText(s)).toBe("Refresh mode: incremental: only states changed since the last refresh are read. Every 15 s");
  });
  it("says how often full scans really start when they take time", () => {
    const text = "full scans: this service ignores modifiedSince, so every refresh reads every state and reports the rows that changed";
    const s = { mode: mode(false, text), autoRefresh: true, intervalSeconds: 15, effectiveIntervalSeconds: 42 };
    expect(refreshModeText(s)).toBe(`Refresh mode: ${text}. Every 15 s after the previous one ends: about every 42.0 s`);
    expect(refreshModeText({ ...s, autoRefresh: false })).toBe(`Refresh mode: ${text}`);
  });
});

describe("what the dashboard remembers", () => {
  it("takes a device query of known fields and types only", () => {
    expect(isDeviceQuery({})).toBe(true);
    expect(isDeviceQuery({ moduleId: "m", status: "FAILED", drift: true, sort: "-statusAt", version: null })).toBe(true);
    expect(isDeviceQuery({ drift: "yes" })).toBe(false);
    expect(isDeviceQuery({ status: 3 })).toBe(false);
    expect(isDeviceQuery({ evil: "x" })).toBe(false);
    expect(isDeviceQuery({ device: "x".repeat(201) })).toBe(false);
    expect(isDeviceQuery(null)).toBe(false);
    expect(isDeviceQuery([])).toBe(false);
  });
  it("takes a range of whole hours or all", () => {
    expect([1, 24, 168, null].every(isHours)).toBe(true);
    expect([0, -1, 1.5, "24", 24 * 400].some(isHours)).toBe(false);
  });
});

describe("the history's real span", () => {
  const at = (s: number) => new Date(Date.UTC(2026, 0, 5, 9, 0, s)).toISOString();
  it("spans in their two largest units", () => {
    expect(spanText(30_000)).toBe("30 s");
    expect(spanText(12 * 60_000)).toBe("12 min");
    expect(spanText(5 * 3_600_000 + 10 * 60_000)).toBe("5 h 10 min");
    expect(spanText(3 * 86_400_000 + 4 * 3_600_000)).toBe("3 d 4 h");
  });
  it("never calls 30 seconds of snapshots the last 24 hours", () => {
    const s = historySpan([at(0), at(10), at(30)], 24, "Last 24 hours");
    expect(s.short).toBe(true);
    expect(s.title).toBe("Last 24 hours: 30 s of snapshots, all there is so far");
    expect(historySpan([at(0)], 1, "Last hour").title).toBe("Last hour: one snapshot, all there is so far");
    expect(historySpan([at(0), at(30)], null, "All").title).toBe("All: 30 s of snapshots");
  });
  it("names the range when the snapshots cover it", () => {
    const day = [new Date(Date.UTC(2026, 0, 4, 9)).toISOString(), new Date(Date.UTC(2026, 0, 5, 9)).toISOString()];
    expect(historySpan(day, 24, "Last 24 hours")).toEqual({ title: "Last 24 hours", short: false });
    expect(historySpan([], 24, "Last 24 hours")).toEqual({ title: "Last 24 hours", short: false });
  });
});

describe("two moments compared", () => {
  it("asks for a scan's time as it came, a typed local time as UTC, and now as null", () => {
    const scan = "2026-11-27T10:00:00.000Z";
    expect(compareRequest("m", { scan, typed: "" }, { scan: NOW, typed: "" }, "24")).toEqual({ moduleId: "m", from: scan, to: null, stuckHours: 24 });
    const typed = compareRequest("m", { scan: OTHER_TIME, typed: "2026-11-27T08:30:15" }, { scan, typed: "" }, " 1.5 ");
    expect(typed.from).toBe(new Date("2026-11-27T08:30:15").toISOString().replace(".000Z", "Z"));
    expect(typed.to).toBe(scan);
    expect(typed.stuckHours).toBe(1.5);
  });
  it("passes what it cannot read on for Rust to name", () => {
    expect(compareRequest("m", { scan: OTHER_TIME, typed: "soon" }, { scan: NOW, typed: "" }, "").from).toBe("soon");
    expect(compareRequest("m", { scan: OTHER_TIME, typed: "" }, { scan: NOW, typed: "" }, "x").stuckHours).toBe(-1);
    expect(compareRequest("m", { scan: OTHER_TIME, typed: "" }, { scan: NOW, typed: "" }, "").stuckHours).toBe(-1);
  });
  it("says what a filter to a comparison's devices holds", () => {
    expect(comparedText({ movement: "forward", fromStatus: null, toStatus: null })).toBe("compared: moved forward");
    expect(comparedText({ movement: null, fromStatus: "PENDING", toStatus: "FAILED" })).toBe("compared: PENDING → FAILED");
    expect(queryText({ compared: { movement: "stuck", fromStatus: null, toStatus: null } })).toBe("compared: stuck");
    expect(movementText("stuck", 1.5)).toBe("stuck over 1.5 h");
    expect([hoursText(0.001), hoursText(24), hoursText(1 / 3), hoursText(null)]).toEqual(["0.001 h", "24 h", "0.333333 h", "? h"]);
    expect(queryText({ stuckBefore: "2026-11-27T10:00:00Z" })).toContain("stuck since before");
  });
  it("remembers a query with a comparison's cell, and nothing malformed", () => {
    expect(isDeviceQuery({ moduleId: "m", compared: { movement: "back", fromStatus: null, toStatus: null } })).toBe(true);
    expect(isDeviceQuery({ stuckBefore: "2026-11-27T10:00:00Z" })).toBe(true);
    expect(isDeviceQuery({ compared: { movement: "sideways" } })).toBe(false);
    expect(isDeviceQuery({ compared: { fromStatus: 5 } })).toBe(false);
    expect(isDeviceQuery({ compared: { other: "x" } })).toBe(false);
    expect(isDeviceQuery({ compared: "forward" })).toBe(false);
  });
});

describe("a rollout's schedule", () => {
  const draft = { timeZone: " Europe/Berlin ", startAt: "", windows: [{ days: ["fri", "mon", "tue"], from: "22:00", to: "04:00" }], minutesBetweenWaves: "30" };
  it("is sent as Rust reads it: days in the week's order, no start for an empty one", () => {
    expect(scheduleOf(draft)).toEqual({
      schedule: { timeZone: "Europe/Berlin", startAt: null, windows: [{ days: ["mon", "tue", "fri"], from: "22:00", to: "04:00" }], minutesBetweenWaves: 30 },
    });
    expect(scheduleOf({ ...draft, minutesBetweenWaves: "" })).toMatchObject({ schedule: { minutesBetweenWaves: 0 } });
  });
  it("names the minutes when they are not a whole number, and leaves every other rule to Rust", () => {
    for (const bad of ["1.5", "-3", "ten", "1e3"]) {
      expect(scheduleOf({ ...draft, minutesBetweenWaves: bad })).toEqual({ field: "schedule.minutesBetweenWaves", error: "must be a whole number of minutes (0: none)" });
    }
    expect(scheduleOf({ ...draft, timeZone: "Mars/Olympus" })).toHaveProperty("schedule");
  });
  it("reads days as ranges and a schedule in one line", () => {
    expect(daysText(["mon", "tue", "wed", "thu", "fri"])).toBe("Mon–Fri");
    expect(daysText(["sat", "sun"])).toBe("Sat, Sun");
    expect(daysText(["sun", "mon", "wed", "thu", "fri"])).toBe("Mon, Wed–Fri, Sun");
    expect(daysText([])).toBe("");
    expect(
      scheduleText({ timeZone: "Europe/Berlin", startAt: "2026-11-30T22:00", windows: [{ days: ["mon", "tue", "wed", "thu", "fri"], from: "22:00", to: "04:00" }], minutesBetweenWaves: 1500 }),
    ).toBe("Mon–Fri 22:00–04:00 (Europe/Berlin) · from 2026-11-30 22:00 · 1,500 min between waves");
    expect(scheduleText({ timeZone: "UTC", startAt: null, windows: [], minutesBetweenWaves: 0 })).toBe("any time (UTC)");
  });
});

describe("retries of failed devices", () => {
  it("are none at 0, else a policy with the excluded reasons split at commas", () => {
    expect(retryOf("0", "x", "")).toEqual({ policy: null });
    expect(retryOf(" 2 ", "5", "signature, , Not enough FLASH ")).toEqual({ policy: { times: 2, delayMinutes: 5, neverFor: ["signature", "Not enough FLASH"] } });
    expect(retryOf("two", "5", "")).toEqual({ field: "retry.times", error: "must be a whole number (0: never retry)" });
    expect(retryOf("2", "-1", "")).toEqual({ field: "retry.delayMinutes", error: "must be a whole number of minutes" });
    // Ranges are Rust's: 50 retries is read and refused by the preview.
    expect(retryOf("50", "0", "")).toEqual({ policy: { times: 50, delayMinutes: 0, neverFor: [] } });
  });
  it("read in one line", () => {
    expect(retryText({ times: 1, delayMinutes: 1440, neverFor: [] })).toBe("up to 1 retry, 1,440 min after a failure");
    expect(retryText({ times: 3, delayMinutes: 5, neverFor: ["signature", "flash"] })).toBe("up to 3 retries, 5 min after a failure, never for: signature, flash");
  });
});

describe("rehearsal models", () => {
  it("reads each row, the last for every other device, and names each field that does not read", () => {
    const rows = [
      { connection: "lora", fail: "12", download: "5-30", install: "1" },
      { connection: "", fail: "5%", download: "1-10", install: "0.5-3" },
    ];
    expect(modelsOf(rows)).toEqual({
      models: [
        { moduleId: null, connection: "lora", failPercent: 12, downloadMinutes: [5, 30], installMinutes: [1, 1] },
        { moduleId: null, connection: null, failPercent: 5, downloadMinutes: [1, 10], installMinutes: [0.5, 3] },
      ],
    });
    expect(modelsOf([{ connection: "", fail: "x", download: "1-2-3", install: "-1" }])).toEqual({
      problems: {
        "models[0].failPercent": "must be a percentage from 0 to 100",
        "models[0].downloadMinutes": "minutes as least-most, e.g. 1-10",
        "models[0].installMinutes": "minutes as least-most, e.g. 0.5-3",
      },
    });
  });
  it("says durations in minutes, hours or days", () => {
    const min = 60_000;
    expect([durationText(22 * min), durationText(60 * min), durationText(185 * min), durationText((24 * 60 * 2 + 250) * min)]).toEqual([
      "22 min", "1 h 00 min", "3 h 05 min", "2 d 04 h",
    ]);
  });
});
