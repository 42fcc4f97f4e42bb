import { useEffect } from "preact/hooks";
import { countLabel, PagedTable, type Column } from "../../components/DataTable";
import { Time } from "../../components/Time";
import { shortId } from "../../lib/format";
import { usePagedList } from "../../lib/usePagedList";
import { ipc, type FirmwarePackage } from "../../ipc";
import { needsSpecColumn } from "./columns";
import type { Filters } from "./filters";

/** The fields the packages list sorts by (a remembered sort is one of them). */
export const PACKAGE_SORTS = ["firmwareVersion", "moduleId", "deviceSpecificationId", "createdAt"] as const;

/**
 * Packages for the filters, each with its module and device specification embedded, one line
 * each. The device specification has a column only when the module names do not already say it.
 */
export function PackagesTable({
  filters,
  sort,
  onSort,
  reloadKey,
  onEdit,
  onFiles,
  onDelete,
  onCount,
  onItems,
  dragOver,
}: {
  filters: Filters;
  sort: string | null;
  onSort: (s: string) => void;
  reloadKey: number;
  onEdit: (p: FirmwarePackage) => void;
  onFiles: (p: FirmwarePackage) => void;
  onItems: (items: FirmwarePackage[]) => void;
  /** The package a file is being dragged over, if any. */
  dragOver: string | null;
  onDelete: (p: FirmwarePackage) => void;
  onCount: (label: string) => void;
}) {
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
  const specColumn = needsSpecColumn(
    state.items.map((p) => ({ moduleName: p._embedded?.module?.name, specName: p._embedded?.deviceSpecification?.name })),
    !!filters.spec || !!filters.module,
  );
  const columns: Column[] = [
    { field: "firmwareVersion", label: "Version", width: "110px" },
    { field: "moduleId", label: "Module", width: "24%" },
    ...(specColumn ? [{ field: "deviceSpecificationId", label: "Device specification", width: "18%" }] : []),
    { field: null, label: "Description" },
    { field: null, label: "Files", width: "20%" },
    { field: "createdAt", label: "Created", width: "136px" },
    { field: null, label: "", width: "150px" },
  ];
  return (
    <PagedTable
      {...{ state, pager, sentinel, sort, onSort }}
      what="firmware packages"
      emptyText="No firmware packages match these filters. Create one from a module."
      columns={columns}
      testid="packages-table"
      compact
    >
      {state.items.map((p) => {
        const module = p._embedded?.module;
        const spec = p._embedded?.deviceSpecification;
        const files = [
          p.firmwareFileName ? `Firmware file: ${p.firmwareFileName}` : "No firmware file yet",
          p.releaseNotesFileName ? `Release notes: ${p.releaseNotesFileName}` : "No release notes",
        ].join("\n");
        return (
          <tr
            key={p.id}
            data-testid="package-row"
            data-id={p.id}
            data-package-id={p.id}
            class={dragOver === p.id ? "drop-target" : undefined}
          >
            <td data-testid="package-version" title={`${p.firmwareVersion}\nPackage id ${p.id}`}>
              <strong>{p.firmwareVersion}</strong>
            </td>
            <td title={`${module?.name ?? "Name not known"}\nModule id ${p.moduleId}`}>
              {module?.name ?? <code>{shortId(p.moduleId)}</code>}
            </td>
            {specColumn && (
              <td title={`${spec?.name ?? "Name not known"}\nSpecification id ${p.deviceSpecificationId}`}>
                {spec?.name ?? <code>{shortId(p.deviceSpecificationId)}</code>}
              </td>
            )}
            <td data-testid="package-description" title={p.description ?? undefined}>
              {p.description ?? <span class="muted">—</span>}
            </td>
            <td class="files-cell" title={files}>
              {p.firmwareFileName ? <code>{p.firmwareFileName}</code> : <span class="muted">no firmware file yet</span>}
              {p.releaseNotesFileName && <span class="muted"> · notes</span>}
            </td>
            <td>
              <Time at={p.createdAt} />
            </td>
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
