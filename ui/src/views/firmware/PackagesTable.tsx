import { useEffect, useState } from "preact/hooks";
import { countLabel, PagedTable, type Column } from "../../components/DataTable";
import { formatTimestamp, shortId } from "../../lib/format";
import { usePagedList } from "../../lib/usePagedList";
import { ipc, type FirmwarePackage } from "../../ipc";
import type { Filters } from "./filters";

const COLUMNS: Column[] = [
  { field: "firmwareVersion", label: "Version" },
  { field: "moduleId", label: "Module" },
  { field: "deviceSpecificationId", label: "Device specification" },
  { field: null, label: "Description" },
  { field: null, label: "Files" },
  { field: "createdAt", label: "Created (UTC)" },
  { field: null, label: "" },
];

/** Packages for the filters, each with its module and device specification embedded. */
export function PackagesTable({
  filters,
  reloadKey,
  onEdit,
  onFiles,
  onDelete,
  onCount,
  onItems,
  dragOver,
}: {
  filters: Filters;
  reloadKey: number;
  onEdit: (p: FirmwarePackage) => void;
  onFiles: (p: FirmwarePackage) => void;
  onItems: (items: FirmwarePackage[]) => void;
  /** The package a file is being dragged over, if any. */
  dragOver: string | null;
  onDelete: (p: FirmwarePackage) => void;
  onCount: (label: string) => void;
}) {
  const [sort, setSort] = useState<string | null>("-createdAt");
  const { pager, state, sentinel } = usePagedList<FirmwarePackage>(
    async (next) =>
      ipc.listPackages({
        next,
        sort,
        deviceSpecificationId: filters.spec,
        moduleId: filters.module,
        clientId: filters.client,
        limit: null,
      }),
    [sort, filters.spec, filters.module, filters.client, reloadKey],
  );
  const count = countLabel(state, "package");
  useEffect(() => onCount(count), [count]);
  useEffect(() => onItems(state.items), [state.items]);
  return (
    <PagedTable
      {...{ state, pager, sentinel, sort }}
      onSort={setSort}
      what="firmware packages"
      emptyText="No firmware packages match these filters. Create one from a module."
      columns={COLUMNS}
      testid="packages-table"
    >
      {state.items.map((p) => {
        const module = p._embedded?.module;
        const spec = p._embedded?.deviceSpecification;
        return (
          <tr
            key={p.id}
            data-testid="package-row"
            data-id={p.id}
            data-package-id={p.id}
            class={dragOver === p.id ? "drop-target" : undefined}
          >
            <td data-testid="package-version" title={p.id}>
              <strong>{p.firmwareVersion}</strong>
            </td>
            <td class="wrap" title={p.moduleId}>{module?.name ?? <code>{shortId(p.moduleId)}</code>}</td>
            <td class="wrap" title={p.deviceSpecificationId}>{spec?.name ?? <code>{shortId(p.deviceSpecificationId)}</code>}</td>
            <td class="wrap description-cell" data-testid="package-description">
              {p.description ?? <span class="muted">—</span>}
            </td>
            <td class="files-cell">
              <div title="Firmware file">
                {p.firmwareFileName ? <code>{p.firmwareFileName}</code> : <span class="muted">no firmware file yet</span>}
              </div>
              {p.releaseNotesFileName && (
                <div class="muted" title="Release notes">
                  notes: <code>{p.releaseNotesFileName}</code>
                </div>
              )}
            </td>
            <td class="when">{formatTimestamp(p.createdAt)}</td>
            <td class="actions-cell">
              <div class="row-actions">
                <button type="button" class="button button-small" onClick={() => onFiles(p)} data-testid="package-files">
                  Files
                </button>
                <button type="button" class="button button-small" onClick={() => onEdit(p)} data-testid="edit-package">
                  Edit
                </button>
                <button
                  type="button"
                  class="button button-small button-danger-quiet"
                  onClick={() => onDelete(p)}
                  data-testid="delete-package"
                >
                  Delete
                </button>
              </div>
            </td>
          </tr>
        );
      })}
    </PagedTable>
  );
}
