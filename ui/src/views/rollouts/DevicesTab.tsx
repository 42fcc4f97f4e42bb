import { createPortal } from "preact/compat";
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { DeviceLabel } from "../../components/DeviceLabel";
import { Time } from "../../components/Time";
import type { Notice } from "../../components/States";
import { FilterSelect, FilterText } from "../../components/FilterText";
import { VirtualTable, type VirtualColumn } from "../../components/VirtualTable";
import { errorMessage, ipc, type DeviceChoice, type DeviceQuery, type DeviceRow, type FleetHome } from "../../ipc";
import { count as selectedCount, emptySelection, isEmpty, toWire, type Selection } from "../../lib/selection";
import { STATUSES, statusColor } from "../../lib/status";
import { useFollow } from "../../lib/follow";
import { cleanQuery, num, queryText } from "./fleet";

export function StatusDot({ status }: { status: string | null }) {
  const s = status ?? "none";
  return (
    <span class="status-dot-cell">
      <span class="status-dot" style={{ background: statusColor(s) }} aria-hidden="true" />
      {status ?? <span class="muted">no target</span>}
    </span>
  );
}

/**
 * Every firmware state of the scope in one virtualized table (100,000 rows and more): filters
 * by module, version, target, status, specification, owner and device (any id form), sort by
 * any column, multi-select, CSV export of the selection or of all that match, and a rollout to
 * the selected devices.
 */
export function DevicesTab({
  home,
  query,
  onQuery,
  revision,
  canRollOut,
  onRollOut,
  onNotice,
  toolbar,
}: {
  home: FleetHome;
  query: DeviceQuery;
  /** A new query, or a change of the latest one (two quick changes must not lose the first). */
  onQuery: (q: DeviceQuery | ((latest: DeviceQuery) => DeviceQuery)) => void;
  revision: number;
  canRollOut: boolean;
  onRollOut: (choice: DeviceChoice) => void;
  onNotice: (n: Notice) => void;
  /** Where the count and the actions go (beside the dashboard's tabs); in place without it. */
  toolbar?: HTMLElement | null;
}) {
  const q = useMemo(() => cleanQuery(query), [query]);
  const queryKey = JSON.stringify(q);
  const counted = useFollow(revision, () => ipc.fleetCount(q), { key: queryKey });
  // The count shown only beside the query it is for; one that failed counts none.
  const total = !counted.current ? null : counted.error ? 0 : counted.answer;
  const countError = counted.current && counted.error ? errorMessage(counted.error) : null;
  const [selection, setSelection] = useState<Selection>(emptySelection());
  const [exporting, setExporting] = useState(false);
  const set = (field: keyof DeviceQuery, v: string | boolean) => onQuery((latest) => ({ ...latest, [field]: v }));

  useEffect(() => setSelection(emptySelection()), [queryKey]);

  const fetchRows = useCallback((offset: number, limit: number) => ipc.fleetRows(q, offset, limit), [queryKey]);

  const module = home.modules.find((m) => m.moduleId === q.moduleId) ?? null;
  const specs = [...new Map(home.modules.filter((m) => m.specId).map((m) => [m.specId!, m.specName ?? m.specId!])).entries()];
  const picked = total !== null ? selectedCount(selection, total) : 0;

  const columns: VirtualColumn<DeviceRow>[] = [
    // By name, with the IMEI or DevEUI beside it; the UUID in the tooltip (DeviceLabel's own).
    { key: "device", header: "Device", width: 222, grow: 2, sortKey: "device", render: (r) => <DeviceLabel id={r.deviceId} /> },
    ...(q.moduleId ? [] : [{ key: "module", header: "Module", width: 130, grow: 1, sortKey: "module", render: (r: DeviceRow) => r.module.replace(/ \([^)]*\)$/, ""), title: (r: DeviceRow) => r.module }]),
    { key: "version", header: "Current", width: 72, sortKey: "version", render: (r) => <span class="mono">{r.current ?? "—"}</span> },
    { key: "target", header: "Target", width: 72, sortKey: "target", render: (r) => <span class="mono">{r.target ?? "—"}</span> },
    { key: "status", header: "Status", width: 142, sortKey: "status", render: (r) => <StatusDot status={r.status ?? null} /> },
    { key: "details", header: "Details", width: 100, grow: 1, render: (r) => r.details ?? "", title: (r) => r.details ?? "" },
    { key: "statusAt", header: "Status since", width: 140, sortKey: "statusAt", render: (r) => <Time at={r.statusAt} /> },
  ];

  const exportCsv = async () => {
    const path = await ipc.pickSaveFile({ defaultName: "firmware-states.csv", title: "Export the devices as CSV", filters: [{ name: "CSV", extensions: ["csv"] }] });
    if (!path) return;
    setExporting(true);
    try {
      const n = await ipc.fleetExportCsv(q, isEmpty(selection) ? null : toWire(selection), path);
      onNotice({ kind: "ok", text: `Exported ${num(n)} rows to ${path}.` });
    } catch (e) {
      onNotice({ kind: "error", text: `The export failed: ${errorMessage(e)}` });
    } finally {
      setExporting(false);
    }
  };

  const actions = (
    <>
      <span class="device-count" data-testid="device-count" title={total === null ? undefined : queryText(q)}>
        {total === null ? "Counting…" : `${num(total)} ${total === 1 ? "row" : "rows"}: ${queryText(q)}`}
        {picked > 0 && <strong data-testid="selected-count"> · {num(picked)} selected</strong>}
      </span>
      <span class="spacer" />
      {picked > 0 && (
        <button type="button" class="button button-quiet button-small" onClick={() => setSelection(emptySelection())}>
          Clear selection
        </button>
      )}
      <button type="button" class="button button-small" onClick={exportCsv} disabled={exporting || !total} data-testid="export-csv">
        {exporting ? "Exporting…" : picked > 0 ? `Export ${num(picked)} selected as CSV…` : "Export all as CSV…"}
      </button>
      <button
        type="button"
        class="button button-small button-primary"
        disabled={!canRollOut || !module || !total}
        title={!module ? "Choose a module first: a rollout updates one module" : undefined}
        data-testid="rollout-selection"
        onClick={() => onRollOut({ kind: "query", query: q, selection: isEmpty(selection) ? null : toWire(selection) })}
      >
        {picked > 0 ? `Roll out to ${num(picked)} selected…` : "Roll out to these…"}
      </button>
    </>
  );

  return (
    <div class="devices">
      <div class="filters" data-testid="device-filters">
        <label>
          <span>Module</span>
          <select data-testid="filter-module" onChange={(e) => {
            const moduleId = e.currentTarget.value || null;
            onQuery((latest) => ({ ...latest, moduleId, version: null, target: null }));
          }}>
            <option value="" selected={!q.moduleId}>
              All modules
            </option>
            {home.modules.map((m) => (
              <option key={m.moduleId} value={m.moduleId} selected={q.moduleId === m.moduleId}>
                {m.name}
              </option>
            ))}
          </select>
        </label>
        <FilterText idPrefix="devices" label="Current version" name="version" value={query.version ?? ""} onApply={set} placeholder="any; none" />
        <FilterText idPrefix="devices" label="Target" name="target" value={query.target ?? ""} onApply={set} placeholder="any; none" />
        <FilterSelect
          label="Status"
          name="status"
          value={q.status ?? ""}
          options={STATUSES.map((st) => ({ value: st, label: st === "none" ? "none (no target)" : st }))}
          onApply={set}
        />
        <FilterSelect label="Specification" name="specId" value={q.specId ?? ""} options={specs.map(([id, name]) => ({ value: id, label: name }))} onApply={set} />
        <FilterText idPrefix="devices" label="Device" name="device" value={query.device ?? ""} onApply={set} placeholder="any id form, or a UUID's start" />
        <label class="filter-check">
          <input type="checkbox" checked={!!q.drift} data-testid="filter-drift" onChange={(e) => set("drift", e.currentTarget.checked)} />
          <span>Drift only</span>
        </label>
        {Object.keys(q).length > 0 && (
          <button type="button" class="button button-quiet" onClick={() => onQuery({})} data-testid="clear-device-filters">
            Clear filters
          </button>
        )}
      </div>
      {countError && (
        <div class="result result-error" role="alert" data-testid="device-filter-error">
          {countError}
        </div>
      )}
      {toolbar === undefined ? <div class="table-toolbar">{actions}</div> : toolbar ? createPortal(actions, toolbar) : null}
      <VirtualTable<DeviceRow>
        count={total ?? 0}
        fetchRows={fetchRows}
        queryKey={queryKey}
        dataVersion={revision}
        rowKey={(r) => r.key}
        columns={columns}
        sort={q.sort ?? null}
        onSort={(s) => set("sort", s)}
        selection={selection}
        onSelection={setSelection}
        label="Firmware states"
        noun="rows"
        emptyText="No device matches these filters."
        testid="device-table"
        height={toolbar === undefined ? "calc(100vh - 300px)" : "100%"}
        rowHeight={22}
      />
    </div>
  );
}
