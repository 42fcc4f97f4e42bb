import { useEffect, useRef, useState } from "preact/hooks";
import { ipc, type FleetStatus } from "../../ipc";

/** Polls the fleet's scan state: every 400 ms while a scan runs, else every second. */
export function useFleetStatus() {
  const [status, setStatus] = useState<FleetStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const scanning = useRef(false);
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const s = await ipc.fleetStatus();
        if (!alive) return;
        scanning.current = !!s.scanning;
        setStatus(s);
        setError(null);
      } catch (e) {
        if (alive) setError(e);
      }
      if (alive) timer = setTimeout(tick, scanning.current ? 400 : 1000);
    };
    tick();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, []);
  return { status, error, setStatus };
}
