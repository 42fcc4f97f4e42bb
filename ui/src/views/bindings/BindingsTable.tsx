import { useEffect } from "preact/hooks";
import { countLabel, PagedTable, useWideWindow, type Column } from "../../components/DataTable";
import { DeviceLabel } from "../../components/DeviceLabel";
import { Time } from "../../components/Time";
import { ipc, type BindingKind, type BindingView } from "../../ipc";
import { usePagedList } from "../../lib/usePagedList";
import { StatusTag } from "./BindingEditor";
import { kindInfo, pageRequest, type BindingFilters } from "./kinds";
import { StoredSecret } from "./SecretField";
import "./bindings.css";

function columns(kind: BindingKind, head: Column["head"], wide: boolean): Column[] {
  const own: Column[] =
    kind === "lora"
      ? [
          ...(wide ? [{ field: "applicationServerId", label: "Application server", width: "140px" }] : []),
          { field: "status", label: "Status", width: "146px" },
        ]
      : kind === "http"
        ? [{ field: "type", label: "Type", width: "130px" }]
        : [{ field: "username", label: "Username", width: "22%" }];
  return [
    { field: null, label: "Pick", width: "30px", head },
    { field: "deviceId", label: "Device" },
    ...own,
    { field: null, label: kindInfo(kind).secretLabel, width: "176px" },
    { field: "createdAt", label: "Created", width: "132px" },
    { field: null, label: "", width: "108px" },
  ];
}

/**
 * One kind's bindings for the filters, sortable, a page at a time, one line per row; secrets
 * masked. Bindings can be picked for a deletion of several at once.
 */
export function BindingsTable({
  kind,
  filters,
  sort,
  onSort,
  reloadKey,
  onCount,
  onEdit,
  onDelete,
  onSync,
  syncing,
  picked,
  onPick,
  onItems,
}: {
  kind: BindingKind;
  filters: BindingFilters;
  sort: string | null;
  onSort: (s: string) => void;
  reloadKey: number;
  onCount: (label: string) => void;
  onEdit: (b: BindingView) => void;
  onDelete: (b: BindingView) => void;
  onSync: (b: BindingView) => void;
  /** The binding a sync is running for. */
  syncing: string | null;
  picked: ReadonlySet<string>;
  /** Picks or unpicks bindings (by id); `null` toggles every one shown. */
  onPick: (ids: string[] | null, on: boolean) => void;
  /** The bindings shown, whenever they change. */
  onItems: (items: BindingView[]) => void;
}) {
  const { pager, state, sentinel } = usePagedList<BindingView>(
    async (next) => ipc.listBindings(kind, pageRequest(kind, filters, sort, next)),
    [kind, sort, reloadKey, ...Object.values(filters)],
  );
  const count = countLabel(state, `${kindInfo(kind).label} binding`);
  useEffect(() => onCount(count), [count]);
  useEffect(() => onItems(state.items), [state.items]);
  const info = kindInfo(kind);
  // A narrow window leaves out the application server (the editor shows it).
  const wide = useWideWindow(1100);
  const allPicked = state.items.length > 0 && state.items.every((b) => picked.has(b.id));
  const head = (
    <input
      type="checkbox"
      aria-label="Pick every binding shown"
      title="Pick every binding shown"
      checked={allPicked}
      disabled={state.items.length === 0}
      data-testid="pick-all-bindings"
      onChange={() => onPick(null, !allPicked)}
    />
  );
  return (
    <PagedTable
      {...{ state, pager, sentinel, sort, onSort }}
      what={`${info.label} bindings`}
      emptyText="No bindings match these filters. Create one with “New binding”."
      columns={columns(kind, head, wide)}
      testid="bindings-table"
      compact
    >
      {state.items.map((b) => (
        <tr key={b.id} data-testid="binding-row" data-id={b.id} data-device={b.deviceId} class={picked.has(b.id) ? "picked" : undefined}>
          <td class="select-cell">
            <input
              type="checkbox"
              checked={picked.has(b.id)}
              aria-label={`Pick the binding of device ${b.deviceId}`}
              data-testid="pick-binding"
              onChange={(e) => onPick([b.id], e.currentTarget.checked)}
            />
          </td>
          <td class="device-cell">
            <DeviceLabel id={b.deviceId} />
          </td>
          {kind === "lora" && (
            <>
              {wide && (
                <td title={b.applicationServerId ?? undefined}>
                  <code>{b.applicationServerId}</code>
                </td>
              )}
              <td>
                <span class="binding-status">
                  <StatusTag status={b.status} />
                  <button
                    type="button"
                    class="button button-small"
                    disabled={syncing === b.id}
                    onClick={() => onSync(b)}
                    title="Fetch the latest state from the LoRaWAN network server"
                    data-testid="sync-binding"
                  >
                    {syncing === b.id ? "Syncing…" : "Sync"}
                  </button>
                </span>
              </td>
            </>
          )}
          {kind === "http" && <td data-testid="binding-type">{b.type}</td>}
          {kind === "mqtt" && (
            <td title={b.username ?? undefined}>
              <code>{b.username}</code>
            </td>
          )}
          <td class="secret-cell">
            <StoredSecret kind={kind} id={b.id} label={info.secretLabel} hasSecret={b.hasSecret} />
          </td>
          <td title={b.modifiedAt && b.modifiedAt !== b.createdAt ? `Modified ${b.modifiedAt}` : undefined}>
            <Time at={b.createdAt} />
          </td>
          <td class="actions-cell">
            <div class="row-actions">
              <button type="button" class="button button-small" onClick={() => onEdit(b)} data-testid="edit-binding">
                Edit
              </button>
              <button type="button" class="button button-small button-danger-quiet" onClick={() => onDelete(b)} data-testid="delete-binding">
                Delete
              </button>
            </div>
          </td>
        </tr>
      ))}
    </PagedTable>
  );
}

