// Running and paused rollouts of the active profile and customer, for the places outside the
// dashboard that must show them (the Rollouts nav item, the status bar): one poll shared by
// every reader, running only while something reads it.

import { useEffect, useState } from "preact/hooks";
import { ipc, type RolloutCounts } from "../ipc";

/** How often the counts are read while shown. */
export const COUNTS_POLL_MS = 2000;

let current: RolloutCounts | null = null;
const readers = new Set<(c: RolloutCounts | null) => void>();
let timer: ReturnType<typeof setTimeout> | undefined;

async function poll() {
  clearTimeout(timer);
  try {
    current = await ipc.rolloutCounts();
  } catch {
    current = null; // no session or no fleet database: nothing to show
  }
  readers.forEach((r) => r(current));
  if (readers.size > 0) timer = setTimeout(poll, COUNTS_POLL_MS);
}

/** Reads the counts again now (after the operator paused, resumed, aborted or started one). */
export function refreshRolloutCounts() {
  if (readers.size > 0) void poll();
}

/** The counts, kept current while the component is mounted; null until known or when unknown. */
export function useRolloutCounts(): RolloutCounts | null {
  const [counts, setCounts] = useState<RolloutCounts | null>(current);
  useEffect(() => {
    readers.add(setCounts);
    if (readers.size === 1) void poll();
    return () => {
      readers.delete(setCounts);
      if (readers.size === 0) clearTimeout(timer);
    };
  }, []);
  return counts;
}

/** The badges' count, words (the status bar's; the nav item's tooltip) and tone: paused rollouts wait for the operator, so they come first. */
export function countsBadge(
  c: RolloutCounts | null,
): { count: number; text: string; title: string; tone: "warn" | "active" } | null {
  if (!c) return null;
  if (c.paused > 0) {
    const also = c.running ? ` · ${c.running} running` : "";
    return {
      count: c.paused,
      text: `${c.paused} paused${also}`,
      tone: "warn",
      title: `${c.paused === 1 ? "1 rollout is" : `${c.paused} rollouts are`} paused: resume or abort in Rollouts > Rollouts${
        c.running ? `; ${c.running} running` : ""
      }`,
    };
  }
  if (c.running > 0)
    return {
      count: c.running,
      text: `${c.running} running`,
      tone: "active",
      title: `${c.running === 1 ? "1 rollout" : `${c.running} rollouts`} running`,
    };
  return null;
}
