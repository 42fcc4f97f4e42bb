import { describe, expect, it } from "vitest";
import type { RolloutView, WaveView } from "../../ipc";
import { activeRollouts, firstSteps, inStatusOrder, rolloutLine, statusWord } from "./home";

const base = { scanned: true, states: 120, simulator: false, setTarget: true as boolean | null, profile: "prod" };

describe("what to do first", () => {
  it("a fresh start on the simulator: scan, create a package, connect a service", () => {
    const steps = firstSteps({ ...base, scanned: false, states: 0, simulator: true });
    expect(steps.map((s) => s.id)).toEqual(["scan", "package", "profile"]);
  });
  it("scanned but the service holds no states: no scan step, a package step", () => {
    expect(firstSteps({ ...base, states: 0 }).map((s) => s.id)).toEqual(["package"]);
  });
  it("a fleet in use asks nothing, unless rollouts are not set up, naming the profile", () => {
    expect(firstSteps(base)).toEqual([]);
    expect(firstSteps({ ...base, simulator: true })).toEqual([]);
    const steps = firstSteps({ ...base, setTarget: false });
    expect(steps.map((s) => s.id)).toEqual(["set-target"]);
    expect(steps[0].text).toContain("prod");
    // Not known yet: no step.
    expect(firstSteps({ ...base, setTarget: null })).toEqual([]);
  });
});

describe("statuses", () => {
  it("in words, unknown ones as sent", () => {
    expect(statusWord("none")).toBe("No target yet");
    expect(statusWord("FAILED")).toBe("Failed");
    expect(statusWord("ROLLED_BACK")).toBe("ROLLED_BACK");
  });
  it("in rollout order, unknown ones after", () => {
    const c = (key: string, count = 1) => ({ key, label: key, count });
    expect(inStatusOrder([c("none", 9), c("ZZZ"), c("FAILED"), c("PENDING"), c("SUCCEEDED", 50)]).map((x) => x.key)).toEqual([
      "PENDING",
      "SUCCEEDED",
      "FAILED",
      "none",
      "ZZZ",
    ]);
  });
});

const wave = (w: Partial<WaveView>): WaveView => ({
  index: 0, percent: 100, size: 0, started: false, set: 0, succeeded: 0, failed: 0, replaced: 0, updating: 0, refused: 0, retrying: 0, retried: 0, retries: 0, needed: 0, ...w,
});
const rollout = (r: Partial<RolloutView>): RolloutView =>
  ({ id: "r", moduleId: "m", moduleName: "Main", version: "1.2.1", state: "running", reason: null, currentWave: 0, successThreshold: 95,
    errorThreshold: 5, devices: { kind: "all" }, waves: [wave({}), wave({})], total: wave({ size: 120 }), createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z", events: [], ...r }) as unknown as RolloutView;

describe("rollouts that need an eye", () => {
  it("running and paused only, paused first, then the newest", () => {
    const list = [
      rollout({ id: "old", createdAt: "2026-01-01T00:00:00Z" }),
      rollout({ id: "done", state: "completed" }),
      rollout({ id: "new", createdAt: "2026-02-01T00:00:00Z" }),
      rollout({ id: "paused", state: "paused", createdAt: "2025-12-01T00:00:00Z" }),
      rollout({ id: "gone", state: "aborted" }),
    ];
    expect(activeRollouts(list).map((r) => r.id)).toEqual(["paused", "new", "old"]);
  });
  it("says where one stands in a line", () => {
    expect(rolloutLine(rollout({ currentWave: 1, total: wave({ size: 1200, succeeded: 1037, failed: 2, updating: 30 }) }))).toBe(
      "Wave 2 of 2 · 1,037 of 1,200 succeeded, 2 failed, 30 updating",
    );
    expect(rolloutLine(rollout({ currentWave: -1 }))).toBe("Not started · 0 of 120 succeeded");
  });
});
