import { useEffect, useState } from "preact/hooks";
import { countLabel, PagedTable, type Column } from "../../components/DataTable";
import { ipc, type BindingKind, type BindingView } from "../../ipc";
import { formatTimestamp } from "../../lib/format";
import { usePagedList } from "../../lib/usePagedList";
import { StatusTag } from "./BindingEditor";
import { kindInfo, pageRequest, type BindingFilters } from "./kinds";
import { StoredSecret } from "./SecretField";

function columns(kind: BindingKind): Column[] {
  const own: Column[] =
    kind === "lora"
      ? [
          { field: "applicationServerId", label: "Application server" },
          { field: "status", label: "Status" },
        ]
      : kind === "http"
        ? [{ field: "type", label: "Type" }]
        : [{ field: "username", label: "Username" }];
  return [
    { field: "deviceId", label: "Device" },
    ...own,
    { field: null, label: kindInfo(kind).secretLabel },
    { field: "createdAt", label: "Created (UTC)" },
    { field: "modifiedAt", label: "Modified (UTC)" },
    { field: null, label: "" },
  ];
}

/** One kind's bindings for the filters, sortable, a page at a time; secrets masked. */
export function BindingsTable({
  kind,
  filters,
  reloadKey,
  onCount,
  onEdit,
  onDelete,
  onSync,
  syncing,
}: {
  kind: BindingKind;
  filters: BindingFilters;
  reloadKey: number;
  onCount: (label: string) => void;
  onEdit: (b: BindingView) => void;
  onDelete: (b: BindingView) => void;
  onSync: (b: BindingView) => void;
  /** The binding a sync is running for. */
  syncing: string | null;
}) {
  const [sort, setSort] = useState<string | null>("-createdAt");
  const { pager, state, sentinel } = usePagedList<BindingView>(
    async (next) => ipc.listBindings(kind, pageRequest(kind, filters, sort, next)),
    [kind, sort, reloadKey, ...Object.values(filters)],
  );
  const count = countLabel(state, `${kindInfo(kind).label} binding`);
  useEffect(() => onCount(count), [count]);
  const info = kindInfo(kind);
  return (
    <PagedTable
      {...{ state, pager, sentinel, sort }}
      onSort={setSort}
      what={`${info.label} bindings`}
      emptyText="No bindings match these filters. Create one with “New binding”."
      columns={columns(kind)}
      testid="bindings-table"
    >
      {state.items.map((b) => (
        <tr key={b.id} data-testid="binding-row" data-id={b.id} data-device={b.deviceId}>
          <td title={`binding ${b.id}`}>
            <code class="device-id">{b.deviceId}</code>
          </td>
          {kind === "lora" && (
            <>
              <td>
                <code>{b.applicationServerId}</code>
              </td>
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
            <td class="wrap">
              <code>{b.username}</code>
            </td>
          )}
          <td class="secret-cell">
            <StoredSecret kind={kind} id={b.id} label={info.secretLabel} hasSecret={b.hasSecret} />
          </td>
          <td class="when">{formatTimestamp(b.createdAt)}</td>
          <td class="when">{formatTimestamp(b.modifiedAt)}</td>
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
