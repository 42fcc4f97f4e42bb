import { useEffect } from "preact/hooks";
import { countLabel, PagedTable, useWideWindow, type Column } from "../../components/DataTable";
import { DeviceLabel } from "../../components/DeviceLabel";
import { Time } from "../../components/Time";
import { ipc, type DownlinkView, type KindInfo } from "../../ipc";
import { watchDownlinkList } from "../../lib/downlinkWatch";
import { usePagedList } from "../../lib/usePagedList";
import { StatusBadge } from "./parts";
import { listRequest, type DownlinkFilters } from "./request";
import { refreshPlan, retriesLabel, retriesShort } from "./timing";

export { NO_FILTERS, type DownlinkFilters } from "./request";

/**
 * One kind's downlinks, newest first, sortable by the fields the client sorts by, a page at a
 * time, one line per row. While any downlink shown is still in progress Rust watches the pages
 * shown (asking the service every few seconds) and pushes their changes (and the indicator says
 * so); it stops once all are final.
 * Downlinks in progress can be picked for a cancellation of several at once.
 */
export function DownlinksTable({
  kind,
  filters,
  sort,
  onSort,
  reloadKey,
  refreshKey,
  onOpen,
  onCancel,
  onCount,
  onFilterError,
  picked,
  onPick,
  onItems,
}: {
  kind: KindInfo;
  filters: DownlinkFilters;
  sort: string | null;
  onSort: (s: string) => void;
  reloadKey: number;
  /** Changes when the list should be fetched again in place (e.g. after a cancellation). */
  refreshKey: number;
  onOpen: (d: DownlinkView) => void;
  onCancel: (d: DownlinkView) => void;
  onCount: (label: string) => void;
  /** The filter the last failure concerns, if it concerns one. */
  onFilterError: (field: string | null) => void;
  picked: ReadonlySet<string>;
  /** Picks or unpicks downlinks (by id); `null` toggles every pickable one shown. */
  onPick: (ids: string[] | null, on: boolean) => void;
  /** The downlinks shown, whenever they change, and whether the list has loaded. */
  onItems: (items: DownlinkView[], ready: boolean) => void;
}) {
  const actuator = kind.kind === "actuator";
  const { pager, state, sentinel } = usePagedList<DownlinkView>(
    async (next) => {
      try {
        const page = await ipc.listDownlinks(listRequest(kind, filters, sort, next));
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
  useEffect(() => onItems(state.items, state.status === "ready"), [state.items, state.status]);

  const plan = refreshPlan(state.items, state.status === "ready");
  // While a downlink shown is in progress, Rust asks for the pages shown again at the same pace
  // and pushes what changed; the watch follows the pages loaded and stops once all are final.
  const pages = pager.pageCount;
  useEffect(() => {
    if (!plan.active) return;
    return watchDownlinkList(listRequest(kind, filters, sort, null), pages, (p) => pager.apply(p, pages));
  }, [plan.active, pages, kind.kind, sort, reloadKey, ...Object.values(filters)]);
  useEffect(() => {
    if (refreshKey > 0) void pager.refresh();
  }, [refreshKey]);

  // A narrow window leaves out the failure reason, the retries and the modified time (the detail has them).
  const wide = useWideWindow(1100);
  const pickable = state.items.filter((d) => !d.isFinal);
  const allPicked = pickable.length > 0 && pickable.every((d) => picked.has(d.id));
  const sortable = (f: string) => (kind.sortFields.includes(f) ? f : null);
  const columns: Column[] = [
    {
      field: null,
      label: "Pick",
      width: "30px",
      head: (
        <input
          type="checkbox"
          aria-label="Pick every downlink in progress shown"
          title="Pick every downlink in progress shown"
          checked={allPicked}
          disabled={pickable.length === 0}
          data-testid="pick-all-downlinks"
          onChange={() => onPick(null, !allPicked)}
        />
      ),
    },
    // Room for the longest status badge and a "dry run" tag beside it where the window allows.
    { field: sortable("status"), label: "Status", width: wide ? "196px" : "136px" },
    { field: sortable(actuator ? "networkId" : "deviceId"), label: "Device" },
    ...(actuator
      ? [{ field: sortable("externalReference"), label: "Reference", width: "11%" }]
      : wide
        ? [{ field: null, label: "Failure reason", width: "22%" }]
        : []),
    ...(kind.retries && wide ? [{ field: null, label: "Retries", width: "56px" }] : []),
    { field: sortable("createdAt"), label: "Created", width: "132px" },
    ...(wide ? [{ field: sortable("modifiedAt"), label: "Modified", width: "132px" }] : []),
    { field: null, label: "", width: "128px" },
  ];

  return (
    <>
      <PagedTable
        {...{ state, pager, sentinel, sort, onSort }}
        what={`${kind.label} downlinks`}
        emptyText="None match these filters. Send one with the button above."
        columns={columns}
        testid="downlinks-table"
        compact
      >
        {state.items.map((d) => (
          <tr
            key={d.id}
            data-testid="downlink-row"
            data-id={d.id}
            data-status={d.status}
            class={picked.has(d.id) ? "clickable picked" : "clickable"}
            onClick={() => onOpen(d)}
          >
            <td class="select-cell" onClick={(e) => e.stopPropagation()}>
              <input
                type="checkbox"
                checked={picked.has(d.id)}
                disabled={d.isFinal}
                aria-label={`Pick downlink ${d.id}`}
                title={d.isFinal ? `${d.status}: final, nothing to cancel` : "Pick for a cancellation of several"}
                data-testid="pick-downlink"
                onChange={(e) => onPick([d.id], e.currentTarget.checked)}
              />
            </td>
            <td class="status-cell" title={[d.statusExplanation, d.dryRun ? "dry run: not delivered to the device" : null].filter(Boolean).join(" · ") || undefined}>
              <StatusBadge status={d.status} outcome={d.outcome} title={d.statusExplanation} />
              {d.dryRun && <span class="tag">dry run</span>}
            </td>
            <td class="device-cell">
              <DeviceLabel id={d.device} />
            </td>
            {actuator ? (
              <td title={d.externalReference ?? undefined}>{d.externalReference ?? <span class="muted">—</span>}</td>
            ) : (
              wide && (
                <td title={[d.failureReason, d.failureExplanation].filter(Boolean).join(": ") || undefined}>
                  {d.failureReason ? <code class="code-word">{d.failureReason}</code> : <span class="muted">—</span>}
                </td>
              )
            )}
            {kind.retries && wide && (
              <td class="muted" title={retriesLabel(d.retryCount, d.retryLimit) ?? undefined}>
                {retriesShort(d.retryCount, d.retryLimit)}
              </td>
            )}
            <td>
              <Time at={d.createdAt} />
            </td>
            {wide && (
              <td>
                <Time at={d.modifiedAt} />
              </td>
            )}
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

/** The auto-refresh indicator of a list of downlinks. */
export function LiveIndicator({ items, ready }: { items: DownlinkView[]; ready: boolean }) {
  const plan = refreshPlan(items, ready);
  if (!plan.text) return null;
  return (
    <span class={plan.active ? "live live-on" : "live"} data-testid="auto-refresh" data-active={plan.active ? "true" : "false"}>
      <span class="live-dot" aria-hidden="true" />
      {plan.text}
    </span>
  );
}
