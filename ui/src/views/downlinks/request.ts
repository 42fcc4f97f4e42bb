import type { DownlinkPageRequest, KindInfo } from "../../ipc";
import { serviceTime } from "../../lib/timeWindow";

/** Filters as applied (text as typed; times in local time; Rust reads and checks them). */
export type DownlinkFilters = {
  q: string;
  deviceId: string;
  status: string;
  createdBefore: string;
  createdSince: string;
  modifiedBefore: string;
  modifiedSince: string;
};

export const NO_FILTERS: DownlinkFilters = {
  q: "",
  deviceId: "",
  status: "",
  createdBefore: "",
  createdSince: "",
  modifiedBefore: "",
  modifiedSince: "",
};

const orNull = (s: string) => (s.trim() === "" ? null : s);

/** The list request of `kind` for the filters and sort (the same for a page and the CSV export). */
export function listRequest(kind: KindInfo, filters: DownlinkFilters, sort: string | null, next: string | null): DownlinkPageRequest {
  const actuator = kind.kind === "actuator";
  return {
    kind: kind.kind,
    next,
    sort,
    q: actuator ? orNull(filters.q) : null,
    deviceId: actuator ? null : orNull(filters.deviceId),
    status: actuator ? null : orNull(filters.status),
    createdBefore: serviceTime(filters.createdBefore),
    createdSince: serviceTime(filters.createdSince),
    modifiedBefore: serviceTime(filters.modifiedBefore),
    modifiedSince: serviceTime(filters.modifiedSince),
    limit: null,
  };
}
