// Fetching what an area's screen loads apart when the operator is about to open it (a control
// that leads there pointed at or focused, or its palette entry made the active one), so that the
// click finds it loaded; opened before that, the screen's skeleton stands in meanwhile.
//
// The dashboard carries the chart library and the virtualized table: loaded apart, so the first
// screen does not wait for them, and not after the first screen either: fetched then whether or
// not it was opened, it and the Markdown renderer (components/Markdown) held 6 to 7.5 MiB more
// at idle (bench/app-idle.sh --release: PSS 250 to 244 MiB).

import type { Area } from "./areas";

export const loadFleet = () => import("./views/rollouts/FleetView");

/** Starts fetching what `area`'s screen loads apart (once; a failure is met again when it opens). */
export function prepareArea(area: Area): void {
  if (area === "rollouts") void loadFleet().catch(() => undefined);
}

/** The handlers that make a control leading to `area` fetch its screen when pointed at or focused. */
export function intentTo(area: Area): { onPointerEnter: () => void; onFocus: () => void } {
  const prepare = () => prepareArea(area);
  return { onPointerEnter: prepare, onFocus: prepare };
}
