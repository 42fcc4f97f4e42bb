import { useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { FilterSelect, FilterText } from "../../components/FilterText";
import { errorMessage, ipc, type BindingKind, type BindingView } from "../../ipc";
import { NoticeRow, type Notice } from "../../components/States";
import { useSession } from "../../session";
import { BindingEditor } from "./BindingEditor";
import { BindingsTable } from "./BindingsTable";
import { hasFilters, HTTP_TYPES, kindInfo, KINDS, NO_FILTERS, type BindingFilters } from "./kinds";


/**
 * Connector bindings of the active profile and customer: one kind at a time (LoRa, HTTP, MQTT),
 * filtered and sorted as the service allows; created, edited (a full replacement), deleted and,
 * for LoRa, synchronised from the network server. Secrets stay masked until asked for.
 */
export function BindingsView() {
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
  const k = kindInfo(kind);
  const timeFiltered = !!(filters.createdSince || filters.createdBefore || filters.modifiedSince || filters.modifiedBefore);

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
            The {k.label} binding of device <code>{b.deviceId}</code>
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
      await ipc.deleteBinding(kind, b.id, info.acting?.id ?? null);
      setNotice({ kind: "ok", text: `Deleted the ${k.label} binding of device ${b.deviceId}.` });
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
          The service fetches the latest state of device <code>{b.deviceId}</code> from the LoRaWAN network server into
          its binding (now <strong>{b.status}</strong>): a device that has joined becomes ACTIVE.
        </p>
      ),
      confirmLabel: "Sync",
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    setSyncing(b.id);
    try {
      const synced = await ipc.syncLoraBinding(b.id, info.acting?.id ?? null);
      const text =
        synced.status === b.status
          ? `Synced device ${b.deviceId}: still ${synced.status}${synced.status === "INVENTORY" ? " (it has not joined the network yet)" : ""}.`
          : `Synced device ${b.deviceId}: ${b.status} → ${synced.status}.`;
      setNotice({ kind: "ok", text });
      setReloadKey((r) => r + 1);
    } catch (e) {
      setNotice({ kind: "error", text: `The sync failed: ${errorMessage(e)}` });
    } finally {
      setSyncing(null);
    }
  };

  return (
    <section class="view" aria-labelledby="bindings-title">
      {confirmElement}
      <div class="view-head">
        <h1 id="bindings-title">Bindings</h1>
        <span class="muted" data-testid="binding-count">
          {count}
        </span>
        <span class="spacer" />
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
            }}
          >
            {t.label}
          </button>
        ))}
      </div>

      <div class="filters" data-testid="binding-filters" key={`${kind}|${filterGen}`}>
        <FilterText idPrefix="bindings" label="Device" name="deviceId" value={filters.deviceId} onApply={apply} placeholder="any id form" />
        <FilterText idPrefix="bindings" label="Owner (client id)" name="clientId" value={filters.clientId} onApply={apply} placeholder="any" />
        {kind === "http" && (
          <FilterSelect label="Type" name="type" value={filters.type} options={HTTP_TYPES.map((t) => ({ value: t, label: t }))} onApply={apply} />
        )}
        {kind === "mqtt" && (
          <FilterText idPrefix="bindings" label="Username (exact)" name="username" value={filters.username} onApply={apply} placeholder="urn:dev:imei:…:" />
        )}
        <details class="time-filters" open={timeFiltered} data-testid="time-filters">
          <summary>{timeFiltered ? "Time filters (on)" : "Time filters"}</summary>
          <div class="filters">
            <FilterText idPrefix="bindings" label="Created since (UTC)" name="createdSince" type="datetime-local" value={filters.createdSince} onApply={apply} />
            <FilterText idPrefix="bindings" label="Created before (UTC)" name="createdBefore" type="datetime-local" value={filters.createdBefore} onApply={apply} />
            <FilterText idPrefix="bindings" label="Modified since (UTC)" name="modifiedSince" type="datetime-local" value={filters.modifiedSince} onApply={apply} />
            <FilterText idPrefix="bindings" label="Modified before (UTC)" name="modifiedBefore" type="datetime-local" value={filters.modifiedBefore} onApply={apply} />
          </div>
        </details>
        {hasFilters(filters) && (
          <button type="button" class="button button-quiet" onClick={clear} data-testid="clear-filters">
            Clear filters
          </button>
        )}
      </div>

      {notice && <NoticeRow notice={notice} onDismiss={() => setNotice(null)} testid="bindings-notice" />}
      {editing && (
        <BindingEditor
          kind={kind}
          binding={editing.binding}
          onClose={() => setEditing(null)}
          onSaved={(b, created) => {
            setNotice({
              kind: "ok",
              text: created
                ? `Created the ${k.label} binding of device ${b.deviceId}.`
                : `Saved the ${k.label} binding of device ${b.deviceId}${b.status ? ` (status ${b.status})` : ""}.`,
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
