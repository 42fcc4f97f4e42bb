import { useEffect, useState } from "preact/hooks";
import { countLabel, PagedTable, type Column } from "../../components/DataTable";
import { ipc, type DownlinkView, type KindInfo } from "../../ipc";
import { formatTimestamp } from "../../lib/format";
import { usePagedList } from "../../lib/usePagedList";
import { StatusBadge } from "./parts";
import { LIST_REFRESH_MS, refreshPlan, retriesLabel, retriesShort } from "./timing";

/** Filters as applied (text as typed; Rust reads and checks them). */
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

/**
 * One kind's downlinks, newest first, sortable by the fields the client sorts by, a page at a
 * time. While any downlink shown is still in progress the pages shown are fetched again every
 * few seconds (and the indicator says so); it stops once all are final.
 */
export function DownlinksTable({
  kind,
  filters,
  reloadKey,
  refreshKey,
  onOpen,
  onCancel,
  onCount,
  onFilterError,
}: {
  kind: KindInfo;
  filters: DownlinkFilters;
  reloadKey: number;
  /** Changes when the list should be fetched again in place (e.g. after a cancellation). */
  refreshKey: number;
  onOpen: (d: DownlinkView) => void;
  onCancel: (d: DownlinkView) => void;
  onCount: (label: string) => void;
  /** The filter the last failure concerns, if it concerns one. */
  onFilterError: (field: string | null) => void;
}) {
  const [sort, setSort] = useState<string | null>("-createdAt");
  const actuator = kind.kind === "actuator";
  const { pager, state, sentinel } = usePagedList<DownlinkView>(
    async (next) => {
      try {
        const page = await ipc.listDownlinks({
          kind: kind.kind,
          next,
          sort,
          q: actuator ? orNull(filters.q) : null,
          deviceId: actuator ? null : orNull(filters.deviceId),
          status: actuator ? null : orNull(filters.status),
          createdBefore: orNull(filters.createdBefore),
          createdSince: orNull(filters.createdSince),
          modifiedBefore: orNull(filters.modifiedBefore),
          modifiedSince: orNull(filters.modifiedSince),
          limit: null,
        });
        onFilterError(null);
        return page;
      } catch (e) {
        const field = (e as { field?: string | null }).field ?? null;
        onFilterError(field);
        throw e;
      }
    },
    [kind.kind, sort, reloadKey, ...Object.values(filters)],
  );

  const count = countLabel(state, `${kind.label} downlink`);
  useEffect(() => onCount(count), [count]);

  const plan = refreshPlan(state.items, state.status === "ready");
  useEffect(() => {
    if (!plan.active) return;
    const t = setTimeout(() => pager.refresh(), LIST_REFRESH_MS);
    return () => clearTimeout(t);
  }, [plan.active, state.items, state.error]);
  useEffect(() => {
    if (refreshKey > 0) pager.refresh();
  }, [refreshKey]);

  const sortable = (f: string) => (kind.sortFields.includes(f) ? f : null);
  const columns: Column[] = [
    { field: sortable("status"), label: "Status" },
    { field: sortable(actuator ? "networkId" : "deviceId"), label: "Device" },
    actuator ? { field: sortable("externalReference"), label: "Reference" } : { field: null, label: "Failure reason" },
    { field: null, label: "Retries" },
    { field: sortable("createdAt"), label: "Created (UTC)" },
    { field: sortable("modifiedAt"), label: "Modified (UTC)" },
    { field: null, label: "" },
  ];

  return (
    <>
      <div class="live-row">
        {plan.text && (
          <span class={plan.active ? "live live-on" : "live"} data-testid="auto-refresh" data-active={plan.active ? "true" : "false"}>
            <span class="live-dot" aria-hidden="true" />
            {plan.text}
          </span>
        )}
      </div>
      <PagedTable
        {...{ state, pager, sentinel, sort }}
        onSort={setSort}
        what={`${kind.label} downlinks`}
        emptyText="None match these filters. Send one with the button above."
        columns={columns}
        testid="downlinks-table"
      >
        {state.items.map((d) => (
          <tr key={d.id} data-testid="downlink-row" data-id={d.id} data-status={d.status} class="clickable" onClick={() => onOpen(d)}>
            <td class="status-cell">
              <StatusBadge status={d.status} outcome={d.outcome} title={d.statusExplanation} />
              {d.dryRun && <span class="tag">dry run</span>}
            </td>
            <td class="mono device-cell" title={d.device}>
              {d.device}
            </td>
            {actuator ? (
              <td class="wrap">{d.externalReference ?? <span class="muted">—</span>}</td>
            ) : (
              <td class="wrap" title={d.failureExplanation ?? undefined}>
                {d.failureReason ? <code>{d.failureReason}</code> : <span class="muted">—</span>}
              </td>
            )}
            <td class="muted small" title={retriesLabel(d.retryCount, d.retryLimit) ?? undefined}>
              {retriesShort(d.retryCount, d.retryLimit)}
            </td>
            <td class="when">
              <When iso={d.createdAt} />
            </td>
            <td class="when">
              <When iso={d.modifiedAt} />
            </td>
            <td class="actions-cell">
              <div class="row-actions">
                <button
                  type="button"
                  class="button button-small"
                  data-testid="downlink-details"
                  onClick={(e) => {
                    e.stopPropagation();
                    onOpen(d);
                  }}
                >
                  Details
                </button>
                {!d.isFinal && (
                  <button
                    type="button"
                    class="button button-small button-danger-quiet"
                    data-testid="downlink-cancel"
                    onClick={(e) => {
                      e.stopPropagation();
                      onCancel(d);
                    }}
                  >
                    Cancel…
                  </button>
                )}
              </div>
            </td>
          </tr>
        ))}
      </PagedTable>
    </>
  );
}

/** A time as date over time of day (UTC, with seconds: the simulator's clock runs fast). */
function When({ iso }: { iso: string | null }) {
  const [date, time] = formatTimestamp(iso, true).split(" ");
  return (
    <>
      <span>{date}</span>
      <span class="muted">{time}</span>
    </>
  );
}
