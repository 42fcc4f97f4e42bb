// Running and paused rollouts of the active profile and customer, for the places outside the
// dashboard that must show them (the Rollouts nav item, the status bar): read once, then kept
// current by the `fleetChanged` event Rust sends after every change of a rollout, shared by
// every reader and subscribed only while something reads it.

import { useEffect, useState } from "preact/hooks";
import { events } from "../bindings";
import { ipc, type RolloutCounts } from "../ipc";
import { useSession } from "../session";
import { subscribe } from "./useEvent";

let current: RolloutCounts | null = null;
const readers = new Set<(c: RolloutCounts | null) => void>();
let unsubscribe: (() => void) | null = null;
/** Grows with every read asked and every push: an answer older than a push is dropped. */
let generation = 0;
/** The profile and customer last read (the readers share one read per switch). */
let readScope: string | null = null;

function show(c: RolloutCounts | null) {
  current = c;
  readers.forEach((r) => r(current));
}

async function read() {
  const asked = ++generation;
  let c: RolloutCounts | null;
  try {
    c = await ipc.rolloutCounts();
  } catch {
    c = null; // no session or no fleet database: nothing to show
  }
  if (asked === generation) show(c);
}

/** Reads the counts again now (after the operator paused, resumed, aborted or started one, or switched profile or customer). */
export function refreshRolloutCounts() {
  if (readers.size > 0) void read();
}

/** The counts, kept current while the component is mounted; null until known or when unknown. */
export function useRolloutCounts(): RolloutCounts | null {
  const [counts, setCounts] = useState<RolloutCounts | null>(current);
  // Another profile or customer has other rollouts: read them once when it changes.
  const { info } = useSession();
  const scope = info ? `${info.profile}|${info.acting?.id ?? ""}` : "";
  useEffect(() => {
    readers.add(setCounts);
    if (readers.size === 1) {
      unsubscribe = subscribe(events.fleetChanged, (e) => {
        generation++;
        show(e.counts);
      });
    }
    return () => {
      readers.delete(setCounts);
      if (readers.size === 0) {
        unsubscribe?.();
        unsubscribe = null;
        readScope = null;
      }
    };
  }, []);
  useEffect(() => {
    if (scope === readScope) return;
    readScope = scope;
    void read();
  }, [scope]);
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
