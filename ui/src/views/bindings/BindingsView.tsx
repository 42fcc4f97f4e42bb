import { useEffect, useState } from "preact/hooks";
import { BulkResult } from "../../components/BulkResult";
import { useConfirm } from "../../components/Confirm";
import { DeviceLabel, knownLabel as label } from "../../components/DeviceLabel";
import { FilterSelect, FilterText } from "../../components/FilterText";
import { errorMessage, IpcError, ipc, type BindingKind, type BindingView, type Link } from "../../ipc";
import type { Intent } from "../../lib/palette";
import { NoticeRow, type Notice } from "../../components/States";
import { TimeFilters } from "../../components/TimeFilters";
import { bulkReport, stillShown, toggled, toggledAll, type BulkReport } from "../../lib/bulk";
import { deviceText } from "../../lib/deviceLabels";
import { actingLabel } from "../../lib/forms";
import { useSession } from "../../session";
import { BindingEditor } from "./BindingEditor";
import { BindingsTable } from "./BindingsTable";
import { hasFilters, HTTP_TYPES, kindInfo, KINDS, NO_FILTERS, pageRequest, type BindingFilters } from "./kinds";


/**
 * Connector bindings of the active profile and customer: one kind at a time (LoRa, HTTP, MQTT),
 * filtered and sorted as the service allows; created, edited (a full replacement), deleted and,
 * for LoRa, synchronised from the network server. Secrets stay masked until asked for.
 */
export function BindingsView({ link = null, intent = null }: { link?: Link | null; intent?: Intent | null }) {
  const { info } = useSession();
  const [kind, setKind] = useState<BindingKind>("lora");
  const [filters, setFilters] = useState<BindingFilters>(NO_FILTERS);
  const [filterGen, setFilterGen] = useState(0);
  const [count, setCount] = useState("");
  const [editing, setEditing] = useState<{ binding: BindingView | null } | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [reloadKey, setReloadKey] = useState(0);
  const [syncing, setSyncing] = useState<string | null>(null);
  const [confirmElement, confirm] = useConfirm();
  const [sort, setSort] = useState<string | null>("-createdAt");
  const [items, setItems] = useState<BindingView[]>([]);
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [bulk, setBulk] = useState<BulkReport | null>(null);
  // The bindings a bulk action was asked for, to name them in its result (some may be gone).
  const [bulkItems, setBulkItems] = useState<Map<string, BindingView>>(new Map());
  const [busy, setBusy] = useState<"deleting" | "exporting" | null>(null);

  useEffect(() => {
    if (intent?.what === "new-binding") setEditing({ binding: null });
  }, [intent]);

  // A link names a binding by id alone: each kind is asked, and the first that holds it opens.
  useEffect(() => {
    if (link?.kind !== "binding") return;
    let live = true;
    (async () => {
      for (const k of KINDS) {
        let b: BindingView;
        try {
          b = await ipc.getBinding(k.id, link.id);
        } catch (e) {
          if (e instanceof IpcError && (e.code === "not_found" || e.code === "bad_request")) continue;
          throw e;
        }
        if (!live) return;
        setKind(k.id);
        setEditing({ binding: b });
        return;
      }
      if (live) setNotice({ kind: "error", text: `No binding ${link.id} of any kind in this customer's bindings.` });
    })().catch((e) => live && setNotice({ kind: "error", text: `Binding ${link.id} could not be opened: ${errorMessage(e)}` }));
    return () => {
      live = false;
    };
  }, [link]);
  const k = kindInfo(kind);
  // A binding no longer shown (filtered out, or deleted) is no longer picked.
  useEffect(() => setPicked((p) => stillShown(p, items.map((b) => b.id))), [items]);
  const byId = new Map(items.map((b) => [b.id, b]));
  const pickedItems = [...picked].map((id) => byId.get(id)).filter((b): b is BindingView => !!b);

  const apply = (field: keyof BindingFilters, v: string) => setFilters((f) => ({ ...f, [field]: v }));
  const clear = () => {
    setFilters(NO_FILTERS);
    setFilterGen((g) => g + 1);
  };

  const remove = async (b: BindingView) => {
    if (!info) return;
    const ok = await confirm({
      title: `Delete this ${k.label} binding?`,
      body: (
        <>
          <p>
            The {k.label} binding of device <DeviceLabel id={b.deviceId} inline copy={false} />
            {b.username ? (
              <>
                {" "}
                (username <code>{b.username}</code>)
              </>
            ) : null}{" "}
            is deleted with its {k.secretLabel.toLowerCase()}. This cannot be undone.
          </p>
          <p class="status-error" data-testid="delete-disruptive">
            <strong>Disruptive:</strong> the device can no longer reach the platform through the {k.label} connector until
            it is bound again.
          </p>
        </>
      ),
      confirmLabel: "Delete binding",
      danger: true,
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    try {
      await ipc.deleteBinding({ kind, id: b.id, actingFor: info.acting?.id ?? null });
      setNotice({ kind: "ok", text: `Deleted the ${k.label} binding of device ${deviceText(b.deviceId, label(b.deviceId))}.` });
      setReloadKey((r) => r + 1);
    } catch (e) {
      setNotice({ kind: "error", text: `The binding was not deleted: ${errorMessage(e)}` });
    }
  };

  const sync = async (b: BindingView) => {
    if (!info) return;
    const ok = await confirm({
      title: "Sync from the network server?",
      body: (
        <p>
          The service fetches the latest state of device <DeviceLabel id={b.deviceId} inline copy={false} /> from the LoRaWAN network server into
          its binding (now <strong>{b.status}</strong>): a device that has joined becomes ACTIVE.
        </p>
      ),
      confirmLabel: "Sync",
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    setSyncing(b.id);
    try {
      const synced = await ipc.syncLoraBinding({ id: b.id, actingFor: info.acting?.id ?? null });
      const text =
        synced.status === b.status
          ? `Synced device ${deviceText(b.deviceId, label(b.deviceId))}: still ${synced.status}${synced.status === "INVENTORY" ? " (it has not joined the network yet)" : ""}.`
          : `Synced device ${deviceText(b.deviceId, label(b.deviceId))}: ${b.status} → ${synced.status}.`;
      setNotice({ kind: "ok", text });
      setReloadKey((r) => r + 1);
    } catch (e) {
      setNotice({ kind: "error", text: `The sync failed: ${errorMessage(e)}` });
    } finally {
      setSyncing(null);
    }
  };

  /** One confirmation for every picked binding; each one's outcome afterwards. */
  const removePicked = async () => {
    if (!info || pickedItems.length === 0) return;
    const chosen = pickedItems;
    const n = chosen.length;
    const ok = await confirm({
      title: `Delete ${n} ${k.label} binding${n === 1 ? "" : "s"} for ${actingLabel(info.acting)}?`,
      body: (
        <>
          <p data-testid="bulk-delete-summary">
            <strong>
              {n} {k.label} binding{n === 1 ? "" : "s"}
            </strong>{" "}
            {n === 1 ? "is" : "are"} deleted with {n === 1 ? "its" : "their"} {k.secretLabel.toLowerCase()}
            {n === 1 ? "" : "s"}. This cannot be undone.
          </p>
          <ul class="bulk-list" data-testid="bulk-delete-list">
            {chosen.map((b) => (
              <li key={b.id} data-testid="bulk-delete-item" data-id={b.id}>
                <DeviceLabel id={b.deviceId} copy={false} />
                {b.username && <code class="muted">{b.username}</code>}
                {b.status && <span class="muted">{b.status}</span>}
              </li>
            ))}
          </ul>
          <p class="status-error" data-testid="delete-disruptive">
            <strong>Disruptive:</strong> {n === 1 ? "the device" : "these devices"} can no longer reach the platform through the{" "}
            {k.label} connector until bound again. Each is deleted on its own; one refused does not stop the others.
          </p>
        </>
      ),
      confirmLabel: `Delete ${n} binding${n === 1 ? "" : "s"}`,
      danger: true,
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    setBusy("deleting");
    setNotice(null);
    try {
      const outcomes = await ipc.deleteBindings({ kind, ids: chosen.map((b) => b.id), actingFor: info.acting?.id ?? null });
      setBulkItems(new Map(chosen.map((b) => [b.id, b])));
      setBulk(bulkReport(outcomes, "Deleted", `${k.label} binding`));
      setPicked(new Set(outcomes.filter((o) => !o.done).map((o) => o.id)));
      setReloadKey((r) => r + 1);
    } catch (e) {
      setNotice({ kind: "error", text: `Nothing was deleted: ${errorMessage(e)}` });
    } finally {
      setBusy(null);
    }
  };

  /** Every binding the filters show (all pages), as CSV without secrets, to a file chosen in the save dialog. */
  const exportCsv = async () => {
    const path = await ipc.pickSaveFile({
      title: `Export the ${k.label} bindings as CSV`,
      defaultName: `${kind}-bindings.csv`,
      filters: [{ name: "CSV", extensions: ["csv"] }],
    });
    if (!path) return;
    setBusy("exporting");
    try {
      const rows = await ipc.exportBindingsCsv(kind, pageRequest(kind, filters, sort, null), path);
      setNotice({ kind: "ok", text: `Exported ${rows} ${k.label} binding${rows === 1 ? "" : "s"} to ${path} (no secrets).` });
    } catch (e) {
      setNotice({ kind: "error", text: `The export failed: ${errorMessage(e)}` });
    } finally {
      setBusy(null);
    }
  };

  return (
    <section class="view view-dense" aria-labelledby="bindings-title">
      {confirmElement}
      <div class="view-head">
        <h1 id="bindings-title">Bindings</h1>
        <span class="muted" data-testid="binding-count">
          {count}
        </span>
        <span class="spacer" />
        <button type="button" class="button" onClick={exportCsv} disabled={busy !== null} data-testid="export-bindings">
          {busy === "exporting" ? "Exporting…" : "Export CSV…"}
        </button>
        <button type="button" class="button button-primary" onClick={() => setEditing({ binding: null })} data-testid="new-binding">
          New {k.label} binding…
        </button>
      </div>

      <div class="tabs" role="tablist" aria-label="Connector">
        {KINDS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            class={t.id === kind ? "tab active" : "tab"}
            aria-selected={t.id === kind}
            data-testid={`kind-${t.id}`}
            onClick={() => {
              // Filters belong to one kind: a device uses one connection, a type or username one kind.
              setKind(t.id);
              setFilters(NO_FILTERS);
              setNotice(null);
              setBulk(null);
              setPicked(new Set());
            }}
          >
            {t.label}
          </button>
        ))}
      </div>

      <div class="filters list-toolbar" data-testid="binding-filters" key={`${kind}|${filterGen}`}>
        <FilterText idPrefix="bindings" label="Device" name="deviceId" value={filters.deviceId} onApply={apply} placeholder="any id form" />
        <FilterText idPrefix="bindings" label="Owner (client id)" name="clientId" value={filters.clientId} onApply={apply} placeholder="any" />
        {kind === "http" && (
          <FilterSelect label="Type" name="type" value={filters.type} options={HTTP_TYPES.map((t) => ({ value: t, label: t }))} onApply={apply} />
        )}
        {kind === "mqtt" && (
          <FilterText idPrefix="bindings" label="Username (exact)" name="username" value={filters.username} onApply={apply} placeholder="urn:dev:imei:…:" />
        )}
        <TimeFilters idPrefix="bindings" value={filters} onApply={apply} />
        {hasFilters(filters) && (
          <button type="button" class="button button-quiet" onClick={clear} data-testid="clear-filters">
            Clear filters
          </button>
        )}
      </div>

      {picked.size > 0 && (
        <div class="bulk-bar" data-testid="bindings-bulk-bar">
          <strong>{picked.size} picked</strong>
          <button type="button" class="button button-small button-danger" disabled={busy !== null} onClick={removePicked} data-testid="bulk-delete">
            {busy === "deleting" ? "Deleting…" : `Delete ${picked.size}…`}
          </button>
          <button type="button" class="button button-small button-quiet" onClick={() => setPicked(new Set())}>
            Clear the picks
          </button>
        </div>
      )}
      {notice && <NoticeRow notice={notice} onDismiss={() => setNotice(null)} testid="bindings-notice" />}
      {bulk && (
        <BulkResult
          report={bulk}
          name={(id) => {
            const b = bulkItems.get(id) ?? byId.get(id);
            return b ? <DeviceLabel id={b.deviceId} inline copy={false} /> : <code>{id}</code>;
          }}
          onDismiss={() => setBulk(null)}
          testid="bindings-bulk-result"
        />
      )}
      {editing && (
        <BindingEditor
          kind={kind}
          binding={editing.binding}
          onClose={() => setEditing(null)}
          onSaved={(b, created) => {
            setNotice({
              kind: "ok",
              text: created
                ? `Created the ${k.label} binding of device ${deviceText(b.deviceId, label(b.deviceId))}.`
                : `Saved the ${k.label} binding of device ${deviceText(b.deviceId, label(b.deviceId))}${b.status ? ` (status ${b.status})` : ""}.`,
            });
            setEditing(null);
            setReloadKey((r) => r + 1);
          }}
        />
      )}

      <BindingsTable
        key={kind}
        kind={kind}
        filters={filters}
        sort={sort}
        onSort={setSort}
        picked={picked}
        onPick={(ids, on) =>
          setPicked((p) => (ids === null ? toggledAll(p, items.map((b) => b.id)) : ids.reduce((acc, id) => toggled(acc, id, on), p)))
        }
        onItems={setItems}
        reloadKey={reloadKey}
        onCount={setCount}
        onEdit={(b) => setEditing({ binding: b })}
        onDelete={remove}
        onSync={sync}
        syncing={syncing}
      />
    </section>
  );
}
