// What Rust pushes (the typed `events` of bindings.ts, see src-tauri/src/events.rs) reaches the
// views through these two: a subscription that can be dropped before it has settled, and a hook
// holding one while a component is mounted. No view asks Rust on a timer whether something changed.

import { useEffect, useRef } from "preact/hooks";

/** One of the generated events (`events.fleetChanged`...): anything with a typed `listen`. */
export type PushedEvent<T> = { listen: (cb: (e: { payload: T }) => void) => Promise<() => void> };

/**
 * Calls `handler` with the payload of every `event` until the answer is called. Safe to drop at
 * once (the subscription is undone when it settles); a subscription that fails (no Tauri, as in
 * unit tests) calls nothing.
 */
export function subscribe<T>(event: PushedEvent<T>, handler: (payload: T) => void): () => void {
  let gone = false;
  let unlisten: (() => void) | null = null;
  try {
    event
      .listen((e) => {
        if (!gone) handler(e.payload);
      })
      .then(
        (u) => (gone ? u() : (unlisten = u)),
        () => undefined,
      );
  } catch {
    // Not in the app (no event system): nothing is pushed.
  }
  return () => {
    gone = true;
    unlisten?.();
  };
}

/** `handler` gets every payload of `event` while the component is mounted (subscribed again when `deps` change). */
export function useEvent<T>(event: PushedEvent<T>, handler: (payload: T) => void, deps: unknown[] = []): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => subscribe(event, (p) => latest.current(p)), deps);
}
