import { describe, expect, it } from "vitest";
import type { RolloutView, WaveView } from "../../ipc";
import { budgetText, driverText, errorBudgetText, finishedFraction, nextStepText, pauseText, stateBadge, successPercent, waveSegments } from "./progress";

const wave = (over: Partial<WaveView>): WaveView => ({
  index: 0,
  percent: 10,
  size: 10,
  started: true,
  set: 0,
  succeeded: 0,
  failed: 0,
  replaced: 0,
  updating: 0,
  refused: 0,
  retrying: 0,
  retried: 0,
  retries: 0,
  needed: 10,
  ...over,
});

describe("a wave's bar", () => {
  it("has one part per outcome present, in order, summing to the wave", () => {
    const w = wave({ size: 10, set: 8, succeeded: 4, failed: 1, updating: 3, refused: 1 });
    const s = waveSegments(w);
    expect(s.map((x) => x.key)).toEqual(["succeeded", "failed", "refused", "updating", "waiting"]);
    expect(s.reduce((a, x) => a + x.count, 0)).toBe(10);
    expect(s.find((x) => x.key === "waiting")?.count).toBe(1);
    expect(successPercent(w)).toBe(40);
  });

  it("is all waiting before the wave starts", () => {
    expect(waveSegments(wave({ started: false }))).toEqual([{ key: "waiting", count: 10, fraction: 1, final: false }]);
    expect(waveSegments(wave({ size: 0 }))).toEqual([]);
  });

  it("fills only final devices: a wave whose targets were just set is not full", () => {
    const started = wave({ size: 39, set: 39, updating: 39, needed: 38 });
    expect(waveSegments(started)).toEqual([{ key: "updating", count: 39, fraction: 1, final: false }]);
    expect(finishedFraction(started)).toBe(0);
    const half = wave({ size: 39, set: 39, succeeded: 18, failed: 1, updating: 20 });
    expect(finishedFraction(half)).toBeCloseTo(19 / 39);
    const done = wave({ size: 39, set: 39, succeeded: 37, failed: 1, replaced: 1 });
    expect(finishedFraction(done)).toBeCloseTo(1);
  });
});

const rollout = (over: Partial<RolloutView>): RolloutView =>
  ({
    state: "running",
    currentWave: 0,
    waves: [],
    total: wave({ size: 0 }),
    errorThreshold: 5,
    errorBudget: { devices: 0, failed: 0, tolerated: 0 },
    ...over,
  }) as RolloutView;

describe("what the rollout waits for", () => {
  const waves = (w1: Partial<WaveView>) => [wave({ size: 3, needed: 3, succeeded: 3 }), wave({ index: 1, size: 39, needed: 38, ...w1 }), wave({ index: 2, size: 100, needed: 95, started: false })];

  it("names the next wave, the figure it needs and where it stands", () => {
    const r = rollout({ currentWave: 1, waves: waves({ succeeded: 37, updating: 2 }) });
    expect(nextStepText(r)).toBe("Wave 3 starts at 38/39 ok, now 37");
    expect(nextStepText({ ...r, state: "paused" })).toBe("Wave 3 starts at 38/39 ok, now 37, once resumed");
    expect(nextStepText(rollout({ currentWave: 1, waves: waves({ succeeded: 38, updating: 1 }) }))).toBe(
      "Wave 3 starts at the next step: 38/39 ok (needs 38)",
    );
    expect(nextStepText(rollout({ state: "paused", currentWave: 1, waves: waves({ succeeded: 38, updating: 1 }) }))).toBe(
      "Wave 3 can start: 38/39 ok (needs 38); resume to go on",
    );
  });

  it("says when a wave can no longer reach its threshold", () => {
    const r = rollout({ currentWave: 1, waves: waves({ succeeded: 30, failed: 2, updating: 7 }) });
    expect(nextStepText(r)).toBe("Wave 2 can no longer reach 38/39 ok (2 failed, cancelled or refused): the rollout pauses when its devices finish");
  });

  it("names the completion on the last wave, and nothing once over", () => {
    const r = rollout({ currentWave: 2, waves: [wave({}), wave({}), wave({ index: 2, size: 100, needed: 95, succeeded: 60, updating: 40 })] });
    expect(nextStepText(r)).toBe("Completes when all 100 devices of wave 3 are final with at least 95 ok, now 60");
    expect(nextStepText({ ...r, state: "completed" })).toBeNull();
    expect(nextStepText({ ...r, state: "aborted" })).toBeNull();
    expect(nextStepText(rollout({ currentWave: -1, waves: [wave({ started: false })] }))).toBe("Wave 1 starts at the next step");
  });

  it("says the error threshold in devices", () => {
    expect(errorBudgetText(rollout({ errorBudget: { devices: 42, failed: 1, tolerated: 2 } }))).toBe(
      "Pauses above 2 of 42 failed (error threshold 5% of the started waves), now 1",
    );
    expect(errorBudgetText(rollout({ errorBudget: { devices: 3, failed: 0, tolerated: 0 } }))).toBe(
      "Pauses at the first failure (error threshold 5% of the started waves), now 0",
    );
    expect(errorBudgetText(rollout({ errorThreshold: 100, errorBudget: { devices: 65, failed: 2, tolerated: 65 } }))).toBe(
      "Failures never pause it (error threshold 100%), now 2 failed",
    );
    expect(errorBudgetText(rollout({ state: "completed", errorBudget: { devices: 3, failed: 0, tolerated: 0 } }))).toBeNull();
  });
});

describe("the state in words", () => {
  it("makes a completion with failures a warning, never neutral", () => {
    expect(stateBadge({ state: "completed", total: wave({ failed: 19, refused: 1 }) })).toEqual({ label: "completed with 20 failures", tone: "warn" });
    expect(stateBadge({ state: "completed", total: wave({ failed: 1 }) })).toEqual({ label: "completed with 1 failure", tone: "warn" });
    expect(stateBadge({ state: "completed", total: wave({}) })).toEqual({ label: "completed", tone: "ok" });
    expect(stateBadge({ state: "paused", total: wave({}) }).tone).toBe("warn");
    expect(stateBadge({ state: "running", total: wave({}) }).tone).toBe("active");
  });
});

describe("the wizard's failure budget", () => {
  it("says what each wave tolerates, with Rust's figures", () => {
    const b = { size: 39, needed: 38, tolerates: 1, startedDevices: 42, failuresBeforePause: 2 };
    expect(budgetText(b, 95)).toBe("95% of 39 devices: 38 must succeed, tolerates 1 failure");
    expect(budgetText({ ...b, size: 1, needed: 1, tolerates: 0 }, 95)).toBe("95% of 1 device: 1 must succeed, tolerates 0 failures");
    expect(pauseText(b, 1)).toBe("pauses above 2 failures in waves 1–2 (42 devices)");
    expect(pauseText({ ...b, failuresBeforePause: 0 }, 0)).toBe("pauses at the first failure");
    expect(pauseText({ ...b, failuresBeforePause: 42 }, 1)).toBe("failures never pause it");
  });
});

describe("a held rollout", () => {
  const hold = (kind: "approval" | "window") => ({
    kind,
    wave: 1,
    until: kind === "window" ? "2026-11-30T21:00:00.000Z" : null,
    untilLocal: kind === "window" ? "Mon 2026-11-30 22:00 CET" : null,
    message: kind === "window" ? "Wave 2 (39 devices) waits until Mon 2026-11-30 22:00 CET: no maintenance window is open" : "Wave 2 (39 devices) waits for approval. Wave 1: 3 of 3 updated",
  });
  it("says what holds it, in the step's words, while running only", () => {
    const r = rollout({ currentWave: 0, waves: [wave({ size: 3, needed: 3, succeeded: 3 }), wave({ index: 1, size: 39, started: false })], hold: hold("window") });
    expect(nextStepText(r)).toBe("Wave 2 (39 devices) waits until Mon 2026-11-30 22:00 CET: no maintenance window is open");
    expect(stateBadge(r)).toEqual({ label: "scheduled", tone: "active" });
    expect(stateBadge({ ...r, hold: hold("approval") })).toEqual({ label: "awaiting approval", tone: "warn" });
    expect(nextStepText({ ...r, state: "paused" })).toMatch(/^Wave 2 can start/);
    expect(stateBadge({ ...r, state: "paused" }).label).toBe("paused");
  });
});

describe("driverText", () => {
  const driver = (over: Partial<NonNullable<RolloutView["driver"]>>): NonNullable<RolloutView["driver"]> => ({
    kind: "runner",
    host: "ops-1",
    pid: 812,
    this: false,
    expiresAt: "2026-12-07T10:00:30Z",
    expired: false,
    lastStepAt: "2026-12-07T10:00:00Z",
    lastStepSecondsAgo: 3,
    fence: 2,
    label: "runner on ops-1 (pid 812)",
    ...over,
  });
  it("names a runner that drives the rollout and says it goes on without the window", () => {
    const t = driverText({ state: "running", driver: driver({}) });
    expect(t?.text).toBe("Moved on by runner on ops-1 (pid 812), last step 3 s ago. It goes on with this window closed.");
    expect(t?.tone).toBe("muted");
  });
  it("says what quitting does when this window drives it", () => {
    const t = driverText({ state: "running", driver: driver({ kind: "app", this: true, label: "this window" }) });
    expect(t?.text).toMatch(/^Moved on by this window\. If you quit the app, a runner/);
  });
  it("warns of a driver whose lease ran out, in minutes past a minute", () => {
    const t = driverText({ state: "running", driver: driver({ expired: true, lastStepSecondsAgo: 150 }) });
    expect(t).toEqual({
      text: "Its driver, runner on ops-1 (pid 812), stopped, last step 3 min ago. This window takes it over at its next refresh, or a runner does.",
      tone: "warn",
    });
  });
  it("says a step of the last two seconds was just now", () => {
    expect(driverText({ state: "running", driver: driver({ lastStepSecondsAgo: 1 }) })?.text).toContain("(pid 812), last step just now.");
  });
  it("says nothing once the rollout no longer runs", () => {
    expect(driverText({ state: "completed", driver: driver({}) })).toBeNull();
    expect(driverText({ state: "paused", driver: null })).toBeNull();
  });
});
