import { useEffect, useState } from "preact/hooks";
import { countLabel, PagedTable, type Column } from "../../components/DataTable";
import { formatTimestamp, shortId } from "../../lib/format";
import { usePagedList } from "../../lib/usePagedList";
import { ipc, type FirmwareModule } from "../../ipc";
import type { Filters } from "./filters";

const COLUMNS: Column[] = [
  { field: "name", label: "Name" },
  { field: "firmwareVersionAttributeName", label: "Version attribute" },
  { field: "deviceSpecificationId", label: "Device specification" },
  { field: "createdAt", label: "Created (UTC)" },
  { field: "modifiedAt", label: "Modified (UTC)" },
  { field: null, label: "" },
];

/** Firmware modules for the filters: first page at once, more on scroll. */
export function ModulesTable({
  filters,
  specName,
  onNewPackage,
  onShowPackages,
  onOpen,
  onCount,
}: {
  filters: Filters;
  specName: (id: string) => string | null;
  onNewPackage: (m: FirmwareModule) => void;
  onShowPackages: (m: FirmwareModule) => void;
  /** Opens the module's detail. */
  onOpen: (m: FirmwareModule) => void;
  onCount: (label: string) => void;
}) {
  const [sort, setSort] = useState<string | null>("name");
  const { pager, state, sentinel } = usePagedList<FirmwareModule>(
    async (next) => ipc.listModules({ next, sort, deviceSpecificationId: filters.spec, clientId: filters.client, limit: null }),
    [sort, filters.spec, filters.client],
  );
  const count = countLabel(state, "module");
  useEffect(() => onCount(count), [count]);
  return (
    <PagedTable
      {...{ state, pager, sentinel, sort }}
      onSort={setSort}
      what="firmware modules"
      emptyText="No firmware modules match these filters."
      columns={COLUMNS}
      testid="modules-table"
    >
      {state.items.map((m) => (
        <tr key={m.id} data-testid="module-row" data-id={m.id}>
          <td data-testid="module-name" title={m.id}>
            {m.name}
          </td>
          <td>
            <code>{m.firmwareVersionAttributeName}</code>
          </td>
          <td class="wrap" title={m.deviceSpecificationId}>{specName(m.deviceSpecificationId) ?? <code>{shortId(m.deviceSpecificationId)}</code>}</td>
          <td class="when">{formatTimestamp(m.createdAt)}</td>
          <td class="when">{formatTimestamp(m.modifiedAt)}</td>
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
      ))}
    </PagedTable>
  );
}
