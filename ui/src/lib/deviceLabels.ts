// Devices by name: what Rust knows of each device id (`device_labels`: the service's device
// listing, read once per profile and customer). Ids asked for in the same moment (a page of a
// list rendering) go to Rust in one call; answers are kept per session scope.

import { useEffect, useState } from "preact/hooks";
import type { DeviceLabel } from "../ipc";

/** Most ids Rust takes in one call (`dcs_console::devices::MAX_IDS`). */
export const MAX_IDS = 500;

/** The network id beside a name: `IMEI 354000000000001`, `DevEUI 70b3d57ed0000002`, or null. */
export function networkText(l: Pick<DeviceLabel, "imei" | "devEui">): string | null {
  if (l.devEui) return `DevEUI ${l.devEui}`;
  if (l.imei) return `IMEI ${l.imei}`;
  return null;
}

/**
 * An id as shown when the device is not known: without the optional trailing `:` of the URN
 * forms (`urn:dev:imei:354…:` reads as `urn:dev:imei:354…`); the exact id stays in the title
 * and what is copied.
 */
export function displayId(id: string): string {
  const t = id.trim();
  return /^urn:dev:/i.test(t) && t.endsWith(":") ? t.slice(0, -1) : t;
}

/** A device in a sentence: `T1-00001 (IMEI 354…)`, or its id when unknown. */
export function deviceText(id: string, l: DeviceLabel | null | undefined): string {
  if (l?.known && l.name) {
    const net = networkText(l);
    return net ? `${l.name} (${net})` : l.name;
  }
  return displayId(id);
}

/** The tooltip of a device: name, network id, UUID and the id as the service wrote it. */
export function deviceTitle(id: string, l: DeviceLabel | null | undefined): string {
  const lines: string[] = [];
  if (l?.known && l.name) lines.push(l.name + (l.description ? ` — ${l.description}` : ""));
  const net = l ? networkText(l) : null;
  if (net) lines.push(net);
  if (l?.uuid) lines.push(`UUID ${l.uuid}`);
  if (!l?.uuid || displayId(id) !== l.uuid) lines.push(`Id: ${id}`);
  if (l && !l.known) lines.push("Not in the service's device list");
  return lines.join("\n");
}

type Fetch = (ids: string[]) => Promise<DeviceLabel[]>;

/**
 * Batches label requests: ids asked for before the next flush go out together (in chunks of
 * MAX_IDS), each id once per scope; listeners hear when their id is answered.
 */
export class LabelStore {
  private known = new Map<string, DeviceLabel>();
  private pending = new Set<string>();
  private asked = new Set<string>();
  private listeners = new Map<string, Set<() => void>>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private scope = "";

  constructor(private fetch: Fetch, private delayMs = 10) {}

  /** Forgets every answer when the scope (profile and customer) changes. */
  setScope(scope: string) {
    if (scope === this.scope) return;
    this.scope = scope;
    this.known.clear();
    this.asked.clear();
    this.pending.clear();
    for (const set of this.listeners.values()) for (const fn of set) fn();
  }

  get(id: string): DeviceLabel | null {
    return this.known.get(id) ?? null;
  }

  /** Asks for `id` (once) and calls `fn` when its answer arrives; returns the unsubscribe. */
  want(id: string, fn: () => void): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(fn);
    if (!this.known.has(id) && !this.asked.has(id) && id.trim() !== "") {
      this.pending.add(id);
      this.schedule();
    }
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(id);
    };
  }

  private schedule() {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.delayMs);
  }

  private async flush() {
    const ids = [...this.pending];
    this.pending.clear();
    const scope = this.scope;
    for (const id of ids) this.asked.add(id);
    for (let i = 0; i < ids.length; i += MAX_IDS) {
      const chunk = ids.slice(i, i + MAX_IDS);
      try {
        const labels = await this.fetch(chunk);
        if (scope !== this.scope) return;
        for (const l of labels) {
          this.known.set(l.id, l);
          for (const fn of this.listeners.get(l.id) ?? []) fn();
        }
      } catch {
        // Unanswered ids are shown as ids; asked again after a scope change.
      }
    }
  }
}

let store: LabelStore | null = null;

/** The app's one store (created on first use with the real command). */
export function labelStore(fetch: Fetch): LabelStore {
  if (!store) store = new LabelStore(fetch);
  return store;
}

/** The label of `id` from `s` in `scope`, re-rendering when it arrives. */
export function useLabel(s: LabelStore, scope: string, id: string): DeviceLabel | null {
  const [, tick] = useState(0);
  useEffect(() => {
    s.setScope(scope);
    return s.want(id, () => tick((n) => n + 1));
  }, [s, scope, id]);
  return s.get(id);
}
