// What Home computes without drawing: the first steps still to take, status names in words,
// and which rollouts need an eye.

import type { Count, RolloutView } from "../../ipc";
import { compareStatus } from "../../lib/status";

export { statusWord } from "../../lib/status";

export type Step = { id: "scan" | "package" | "profile" | "set-target"; title: string; text: string };

/**
 * What to do first, in order, from what the app knows: the fleet never scanned or empty, the
 * built-in simulator still in use, rollouts not set up for the profile.
 */
export function firstSteps(s: { scanned: boolean; states: number; simulator: boolean; setTarget: boolean | null; profile: string }): Step[] {
  const steps: Step[] = [];
  const empty = !s.scanned || s.states === 0;
  if (!s.scanned)
    steps.push({
      id: "scan",
      title: "Scan the fleet",
      text: "Reads every device's firmware state from the service into this computer's fleet database; the health below, the dashboard and its history work from it.",
    });
  if (empty)
    steps.push({
      id: "package",
      title: "Create a package",
      text: "A rollout sends a package: in Firmware, open a module and add a package with its version and file.",
    });
  if (empty && s.simulator)
    steps.push({
      id: "profile",
      title: "Connect your service",
      text: "This is the built-in simulator with demo devices. In Settings, add a profile with your service's address and API key (the secret goes to the system keychain).",
    });
  if (s.setTarget === false)
    steps.push({
      id: "set-target",
      title: "Set up rollouts",
      text: `Profile ${s.profile} has no set-target operation yet: in Settings, edit the profile and fill in how your service sets a device's target version.`,
    });
  return steps;
}

/** Counts in rollout order (pending, downloading, …, none), then unknown statuses by name. */
export function inStatusOrder(counts: readonly Count[]): Count[] {
  return [...counts].sort((a, b) => compareStatus(a.key, b.key));
}

/** Running and paused rollouts: paused first (they wait for the operator), newest first. */
export function activeRollouts(list: readonly RolloutView[]): RolloutView[] {
  const rank = (r: RolloutView) => (r.state === "paused" ? 0 : 1);
  return list
    .filter((r) => r.state === "running" || r.state === "paused")
    .sort((a, b) => rank(a) - rank(b) || b.createdAt.localeCompare(a.createdAt));
}

/** "Wave 2 of 3 · 37 of 120 succeeded, 2 failed": where a rollout stands, in one line. */
export function rolloutLine(r: RolloutView): string {
  const waves = r.waves.length;
  const wave = r.currentWave < 0 ? "Not started" : `Wave ${Math.min(r.currentWave + 1, waves)} of ${waves}`;
  const t = r.total;
  const parts = [`${t.succeeded.toLocaleString("en-US")} of ${t.size.toLocaleString("en-US")} succeeded`];
  if (t.failed) parts.push(`${t.failed.toLocaleString("en-US")} failed`);
  if (t.updating) parts.push(`${t.updating.toLocaleString("en-US")} updating`);
  return `${wave} · ${parts.join(", ")}`;
}
