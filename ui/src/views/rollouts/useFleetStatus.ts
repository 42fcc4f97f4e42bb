import { useCallback, useLayoutEffect, useState } from "preact/hooks";
import { events } from "../../bindings";
import { ipc, type FleetStatus } from "../../ipc";
import { subscribe } from "../../lib/useEvent";

/**
 * The fleet's scan state: read once, then kept current by the `fleetChanged` event Rust sends
 * after every change (a scan started, each page read, its end, a rollout moved, the settings).
 */
export function useFleetStatus() {
  const [status, setShown] = useState<FleetStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Answers and events are not ordered between them: an answer older than what is shown (a
  // scan's start arriving after its end was pushed) is dropped; the revision grows with every
  // finished refresh and change.
  const setStatus = useCallback(
    (s: FleetStatus) => setShown((shown) => (shown && s.revision < shown.revision ? shown : s)),
    [],
  );
  // Asked as the view is put on the page, not after its first paint (when a plain effect runs):
  // on a cold start the first frame took 50 to 90 ms, which the read waited out for nothing.
  useLayoutEffect(() => {
    let alive = true;
    // A change pushed before the first answer arrives is newer than it: that answer is dropped.
    let pushed = false;
    const stop = subscribe(events.fleetChanged, (e) => {
      if (!e.status) return;
      pushed = true;
      setStatus(e.status);
      setError(null);
    });
    ipc.fleetStatus().then(
      (s) => {
        if (!alive || pushed) return;
        setStatus(s);
        setError(null);
      },
      (e) => alive && setError(e),
    );
    return () => {
      alive = false;
      stop();
    };
  }, []);
  return { status, error, setStatus };
}
