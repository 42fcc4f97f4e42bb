// How a rollout's progress reads, apart from layout: a wave's bar (finished devices filled,
// devices still updating only outlined, so a wave whose targets were just set never looks done),
// what the next step waits for, the state in words, and each wave's failure budget. The numbers
// of the rules (devices needed, failures tolerated) are Rust's (crates/console rollout.rs), so
// the dashboard, the wizard and `dcs` say the same.

import type { RolloutView, WaveBudget, WaveView } from "../../ipc";

const nf = new Intl.NumberFormat("en-US");
const num = (n: number) => nf.format(n);
const plural = (n: number, one: string, many = `${one}s`) => `${num(n)} ${n === 1 ? one : many}`;

export type SegmentKey = "succeeded" | "failed" | "replaced" | "refused" | "updating" | "waiting";
/** `final`: the devices of this part will not change any more (drawn filled); else outlined. */
export type Segment = { key: SegmentKey; count: number; fraction: number; final: boolean };

/** What each part means, for the legend, tooltips and the bar's accessible name. */
export const SEGMENT_LABEL: Record<SegmentKey, string> = {
  succeeded: "succeeded",
  failed: "failed",
  replaced: "cancelled or replaced",
  refused: "refused by the service",
  updating: "updating (target set, not finished)",
  waiting: "not started",
};

/** The parts of a wave's bar, in drawing order; `waiting`: devices whose target is not set yet. */
export function waveSegments(w: WaveView): Segment[] {
  const waiting = Math.max(0, w.size - w.set - w.refused);
  const parts: [SegmentKey, number, boolean][] = [
    ["succeeded", w.succeeded, true],
    ["failed", w.failed, true],
    ["replaced", w.replaced, true],
    ["refused", w.refused, true],
    ["updating", w.updating, false],
    ["waiting", waiting, false],
  ];
  return parts
    .filter(([, n]) => n > 0)
    .map(([key, count, final]) => ({ key, count, final, fraction: w.size ? count / w.size : 0 }));
}

/** The share of a wave's devices that are final (what the filled part of its bar shows). */
export function finishedFraction(w: WaveView): number {
  return waveSegments(w).reduce((a, s) => a + (s.final ? s.fraction : 0), 0);
}

/** A wave's success share, as the threshold compares it. */
export function successPercent(w: WaveView): number {
  return w.size ? (w.succeeded * 100) / w.size : 0;
}

/** How a rollout's state tag reads: a completion with failures is a warning, not neutral. */
export function stateBadge(r: Pick<RolloutView, "state" | "total"> & { hold?: RolloutView["hold"] }): { label: string; tone: "active" | "warn" | "ok" | "bad" | "quiet" } {
  const failed = r.total.failed + r.total.refused;
  switch (r.state) {
    case "running":
      if (r.hold?.kind === "approval") return { label: "awaiting approval", tone: "warn" };
      if (r.hold) return { label: "scheduled", tone: "active" };
      return { label: "running", tone: "active" };
    case "paused":
      return { label: "paused", tone: "warn" };
    case "completed":
      return failed > 0 ? { label: `completed with ${plural(failed, "failure")}`, tone: "warn" } : { label: "completed", tone: "ok" };
    case "aborted":
      return { label: "aborted", tone: "bad" };
    default:
      return { label: String(r.state), tone: "quiet" };
  }
}

/**
 * What the rollout waits for now, in one sentence: the next wave's start ("Wave 3 starts at 38/39
 * ok, now 37"), the completion, or that the wave can no longer reach it. Null once it is over.
 */
export function nextStepText(r: Pick<RolloutView, "state" | "currentWave" | "waves"> & { hold?: RolloutView["hold"] }): string | null {
  if (r.state === "completed" || r.state === "aborted") return null;
  // What holds the next wave back (the schedule, or the operator's approval), as the step said it.
  if (r.state === "running" && r.hold) return r.hold.message;
  const paused = r.state === "paused";
  if (r.currentWave < 0) return paused ? "Wave 1 starts when the rollout is resumed" : "Wave 1 starts at the next step";
  const w = r.waves[r.currentWave];
  if (!w) return null;
  const n = r.currentWave + 1;
  const last = r.currentWave + 1 >= r.waves.length;
  const lost = w.failed + w.replaced + w.refused;
  const reached = w.succeeded >= w.needed;
  if (!reached && w.size - lost < w.needed) {
    return `Wave ${n} can no longer reach ${num(w.needed)}/${num(w.size)} ok (${num(lost)} failed, cancelled or refused): ${
      paused ? "resume with a lower success threshold to go on" : "the rollout pauses when its devices finish"
    }`;
  }
  if (last) {
    const goal = `Completes when all ${num(w.size)} devices of wave ${n} are final with at least ${num(w.needed)} ok, now ${num(w.succeeded)}`;
    return paused ? `${goal}; resume to go on` : goal;
  }
  if (paused) {
    return reached
      ? `Wave ${n + 1} can start: ${num(w.succeeded)}/${num(w.size)} ok (needs ${num(w.needed)}); resume to go on`
      : `Wave ${n + 1} starts at ${num(w.needed)}/${num(w.size)} ok, now ${num(w.succeeded)}, once resumed`;
  }
  return reached
    ? `Wave ${n + 1} starts at the next step: ${num(w.succeeded)}/${num(w.size)} ok (needs ${num(w.needed)})`
    : `Wave ${n + 1} starts at ${num(w.needed)}/${num(w.size)} ok, now ${num(w.succeeded)}`;
}

/** The error threshold over the started waves: "Pauses above 2 of 42 failed (5%), now 1". */
export function errorBudgetText(r: Pick<RolloutView, "state" | "errorBudget" | "errorThreshold">): string | null {
  const b = r.errorBudget;
  if (r.state === "completed" || r.state === "aborted" || b.devices === 0) return null;
  if (b.tolerated >= b.devices) return `Failures never pause it (error threshold ${r.errorThreshold ?? 0}%), now ${num(b.failed)} failed`;
  const limit = b.tolerated === 0 ? "at the first failure" : `above ${num(b.tolerated)} of ${num(b.devices)} failed`;
  return `Pauses ${limit} (error threshold ${r.errorThreshold ?? 0}% of the started waves), now ${num(b.failed)}`;
}

/** A wave's failure budget in the wizard: "95% of 39 devices: 38 must succeed, tolerates 1 failure". */
export function budgetText(b: WaveBudget, successThreshold: number | null): string {
  return `${successThreshold ?? 0}% of ${plural(b.size, "device")}: ${num(b.needed)} must succeed, tolerates ${plural(b.tolerates, "failure")}`;
}

/** The error threshold per wave, in the wizard: "pauses at the first failure" / "above 2 failed of waves 1–2". */
export function pauseText(b: WaveBudget, index: number): string {
  const waves = index === 0 ? "wave 1" : `waves 1–${index + 1}`;
  if (b.failuresBeforePause >= b.startedDevices) return "failures never pause it";
  return b.failuresBeforePause === 0
    ? `pauses at the first failure`
    : `pauses above ${plural(b.failuresBeforePause, "failure")} in ${waves} (${num(b.startedDevices)} devices)`;
}

/**
 * Who moves a rollout on (the holder of its lease: this window, the app elsewhere, `dcs rollout
 * watch` or a runner) and what closing this window does to it; null once it no longer runs.
 */
export function driverText(r: Pick<RolloutView, "state" | "driver">): { text: string; tone: "muted" | "warn" } | null {
  if (r.state !== "running") return null;
  const d = r.driver;
  if (!d) return { text: "Not moved on yet: this window's next refresh (or a runner) takes it.", tone: "muted" };
  const ago = d.lastStepSecondsAgo;
  const last = ago === null ? "" : ago < 2 ? ", last step just now" : `, last step ${ago < 60 ? `${ago} s` : `${Math.round(ago / 60)} min`} ago`;
  if (d.expired && d.this) {
    return { text: "Moved on by this window at its next refresh.", tone: "muted" };
  }
  if (d.expired) {
    return {
      text: `Its driver, ${d.label}, stopped${last}. This window takes it over at its next refresh, or a runner does.`,
      tone: "warn",
    };
  }
  if (d.this) {
    return {
      text: `Moved on by this window. If you quit the app, a runner on the same fleet takes it over; without one it waits until the app opens again.`,
      tone: "muted",
    };
  }
  return { text: `Moved on by ${d.label}${last}. It goes on with this window closed.`, tone: "muted" };
}
