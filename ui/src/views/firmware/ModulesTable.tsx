import { useEffect } from "preact/hooks";
import { countLabel, PagedTable, type Column } from "../../components/DataTable";
import { Time } from "../../components/Time";
import { shortId } from "../../lib/format";
import { usePagedList } from "../../lib/usePagedList";
import { ipc, type FirmwareModule } from "../../ipc";
import { needsSpecColumn } from "./columns";
import type { Filters } from "./filters";

/** The fields the modules list sorts by (a remembered sort is one of them). */
export const MODULE_SORTS = ["name", "firmwareVersionAttributeName", "deviceSpecificationId", "createdAt", "modifiedAt"] as const;

/**
 * Firmware modules for the filters, one line each: first page at once, more on scroll. The
 * device specification has a column only when the module names do not already say it.
 */
export function ModulesTable({
  filters,
  sort,
  onSort,
  specName,
  onNewPackage,
  onShowPackages,
  onOpen,
  onCount,
}: {
  filters: Filters;
  sort: string | null;
  onSort: (s: string) => void;
  specName: (id: string) => string | null;
  onNewPackage: (m: FirmwareModule) => void;
  onShowPackages: (m: FirmwareModule) => void;
  /** Opens the module's detail. */
  onOpen: (m: FirmwareModule) => void;
  onCount: (label: string) => void;
}) {
  const { pager, state, sentinel } = usePagedList<FirmwareModule>(
    async (next) => ipc.listModules({ next, sort, deviceSpecificationId: filters.spec, clientId: filters.client, limit: null }),
    [sort, filters.spec, filters.client],
  );
  const count = countLabel(state, "module");
  useEffect(() => onCount(count), [count]);
  const specColumn = needsSpecColumn(
    state.items.map((m) => ({ moduleName: m.name, specName: specName(m.deviceSpecificationId) })),
    !!filters.spec,
  );
  const columns: Column[] = [
    { field: "name", label: "Name" },
    { field: "firmwareVersionAttributeName", label: "Version attribute", width: "150px" },
    ...(specColumn ? [{ field: "deviceSpecificationId", label: "Device specification", width: "22%" }] : []),
    { field: "createdAt", label: "Created", width: "136px" },
    { field: "modifiedAt", label: "Modified", width: "136px" },
    { field: null, label: "", width: "214px" },
  ];
  return (
    <PagedTable
      {...{ state, pager, sentinel, sort, onSort }}
      what="firmware modules"
      emptyText="No firmware modules match these filters."
      columns={columns}
      testid="modules-table"
      compact
    >
      {state.items.map((m) => {
        const spec = specName(m.deviceSpecificationId);
        return (
          <tr key={m.id} data-testid="module-row" data-id={m.id}>
            <td data-testid="module-name" title={`${m.name}\nModule id ${m.id}`}>
              {m.name}
            </td>
            <td title={m.firmwareVersionAttributeName}>
              <code>{m.firmwareVersionAttributeName}</code>
            </td>
            {specColumn && (
              <td title={`${spec ?? "Name not known"}\nSpecification id ${m.deviceSpecificationId}`}>
                {spec ?? <code>{shortId(m.deviceSpecificationId)}</code>}
              </td>
            )}
            <td>
              <Time at={m.createdAt} />
            </td>
            <td>
              <Time at={m.modifiedAt} />
            </td>
            <td class="actions-cell">
              <div class="row-actions">
                <button
                  type="button"
                  class="button button-small"
                  onClick={() => onOpen(m)}
                  data-testid="module-details"
                  aria-label={`Details of ${m.name}`}
                >
                  Details
                </button>
                <button type="button" class="button button-small" onClick={() => onShowPackages(m)} data-testid="show-packages">
                  Packages
                </button>
                <button
                  type="button"
                  class="button button-small"
                  onClick={() => onNewPackage(m)}
                  data-testid="new-package"
                  aria-label={`New package of ${m.name}`}
                >
                  New package
                </button>
              </div>
            </td>
          </tr>
        );
      })}
    </PagedTable>
  );
}
