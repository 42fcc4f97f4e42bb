import "./downlinks.css";
import type { Intent } from "../../lib/palette";
import { useEffect, useState } from "preact/hooks";
import { BulkResult } from "../../components/BulkResult";
import { useConfirm } from "../../components/Confirm";
import { DeviceLabel } from "../../components/DeviceLabel";
import { FilterSelect, FilterText } from "../../components/FilterText";
import { ErrorBox, Loading, NoticeRow, type Notice } from "../../components/States";
import { TimeFilters } from "../../components/TimeFilters";
import { errorMessage, IpcError, ipc, type DownlinkKind, type DownlinkView, type KindInfo, type Link } from "../../ipc";
import { bulkReport, stillShown, toggled, toggledAll, type BulkReport } from "../../lib/bulk";
import { actingLabel } from "../../lib/forms";
import { useSession } from "../../session";
import { ActuatorComposer } from "./ActuatorComposer";
import { BetaComposer } from "./BetaComposer";
import { ConnectionComposer } from "./ConnectionComposer";
import { DownlinkDetailDialog } from "./DownlinkDetail";
import { DownlinksTable, LiveIndicator, NO_FILTERS, type DownlinkFilters } from "./DownlinksTable";
import { BulkCancelChoice, CancelChoice } from "./parts";
import { listRequest } from "./request";

/** The service's own words for a refusal (its problem detail), else the message. */
function serviceWords(e: unknown): string {
  if (e instanceof IpcError && e.detail.problem?.detail) {
    const p = e.detail.problem;
    return `${p.status ?? e.detail.status ?? ""} ${p.title ?? ""}: ${p.detail}`.trim();
  }
  return errorMessage(e);
}

/**
 * Downlinks of the active profile and customer, one kind at a time: actuator-style and the
 * connection-specific kinds. Each kind has its list with every filter the service offers,
 * sorting and paging, a composer, a detail with the status timeline, cancellation of one or
 * several, and a CSV export of what the filters show.
 */
export function DownlinksView({ link = null, intent = null }: { link?: Link | null; intent?: Intent | null }) {
  const { info } = useSession();
  const [kinds, setKinds] = useState<KindInfo[] | null>(null);
  const [kindsError, setKindsError] = useState<unknown>(null);
  const [kind, setKind] = useState<DownlinkKind>("actuator");
  const [filters, setFilters] = useState<DownlinkFilters>(NO_FILTERS);
  const [filterGen, setFilterGen] = useState(0);
  const [sort, setSort] = useState<string | null>("-createdAt");
  const [badFilter, setBadFilter] = useState<string | null>(null);
  const [count, setCount] = useState("");
  const [composing, setComposing] = useState(false);
  const [composingBeta, setComposingBeta] = useState(false);
  // The downlink whose detail is open.
  const [open, setOpen] = useState<{ kind: DownlinkKind; id: string } | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [bulk, setBulk] = useState<BulkReport | null>(null);
  // The downlinks a bulk action was asked for, to name them in its result.
  const [bulkItems, setBulkItems] = useState<Map<string, DownlinkView>>(new Map());
  const [reloadKey, setReloadKey] = useState(0);
  const [refreshKey, setRefreshKey] = useState(0);
  const [items, setItems] = useState<{ list: DownlinkView[]; ready: boolean }>({ list: [], ready: false });
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState<"cancelling" | "exporting" | null>(null);
  const [confirmElement, confirm] = useConfirm();

  useEffect(() => {
    ipc.downlinkKinds().then(setKinds, setKindsError);
  }, []);
  // A downlink no longer shown (filtered out, or the list reloaded) is no longer picked.
  useEffect(() => setPicked((p) => stillShown(p, items.list.filter((d) => !d.isFinal).map((d) => d.id))), [items.list]);

  const current = kinds?.find((k) => k.kind === kind) ?? null;
  const has = (f: string) => current?.filters.includes(f) ?? false;
  const apply = (field: keyof DownlinkFilters, v: string) => setFilters((f) => ({ ...f, [field]: v }));
  const anyFilter = Object.values(filters).some((v) => v.trim() !== "");
  const clear = () => {
    setFilters(NO_FILTERS);
    setFilterGen((g) => g + 1);
  };
  const byId = new Map(items.list.map((d) => [d.id, d]));
  const pickedItems = [...picked].map((id) => byId.get(id)).filter((d): d is DownlinkView => !!d);

  const switchKind = (k: DownlinkKind) => {
    setKind(k);
    setFilters(NO_FILTERS);
    setFilterGen((g) => g + 1);
    setBadFilter(null);
    setPicked(new Set());
    setBulk(null);
  };

  useEffect(() => {
    if (intent?.what === "new-downlink") setComposing(true);
  }, [intent]);

  // A link names a downlink by id alone: it is looked up in each kind this service has, and
  // opened in the first that knows it.
  useEffect(() => {
    if (link?.kind !== "downlink" || !kinds) return;
    let live = true;
    (async () => {
      for (const k of kinds) {
        try {
          await ipc.getDownlink(k.kind, link.id);
        } catch (e) {
          if (e instanceof IpcError && (e.code === "not_found" || e.code === "bad_request")) continue;
          throw e;
        }
        if (!live) return;
        switchKind(k.kind);
        setOpen({ kind: k.kind, id: link.id });
        return;
      }
      if (live) setNotice({ kind: "error", text: `No downlink ${link.id} of any kind in this customer's downlinks.` });
    })().catch((e) => live && setNotice({ kind: "error", text: `Downlink ${link.id} could not be opened: ${errorMessage(e)}` }));
    return () => {
      live = false;
    };
  }, [link, kinds]);

  /**
   * A forced cancellation stops a downlink even on its way to the device: chosen in the first
   * confirmation, it asks once more, for the word typed.
   */
  const confirmForced = (what: string) =>
    info
      ? confirm({
          title: "Force the cancellation?",
          body: (
            <p data-testid="confirm-forced">
              Forced stops {what} even while on the way to the device, which may then be left with
              part of it.
            </p>
          ),
          confirmLabel: "Force the cancellation",
          dismissLabel: "Don't force",
          danger: true,
          acting: { profile: info.profile, customer: info.acting },
          typeToConfirm: "force",
        })
      : Promise.resolve(false);

  const cancel = async (d: DownlinkView) => {
    if (!info || !current) return;
    const forced = { current: false };
    const ok = await confirm({
      title: `Cancel this ${current.label} downlink?`,
      body: <CancelChoice downlink={d} forced={forced} />,
      confirmLabel: "Ask to cancel",
      dismissLabel: "Keep it",
      danger: true,
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    if (forced.current && !(await confirmForced("this downlink"))) return;
    try {
      await ipc.cancelDownlink({ kind: d.kind, id: d.id, forced: forced.current, actingFor: info.acting?.id ?? null });
      setNotice({
        kind: "ok",
        text: `Cancellation${forced.current ? " (forced)" : ""} accepted (202); only the status afterwards tells whether the service cancelled it, and the list follows.`,
        id: d.id,
      });
      setRefreshKey((k) => k + 1);
    } catch (e) {
      setNotice({ kind: "error", text: `The service did not cancel it. It said: ${serviceWords(e)}`, id: d.id });
    }
  };

  /** One confirmation for every picked downlink; each one's outcome afterwards. */
  const cancelPicked = async () => {
    if (!info || !current || pickedItems.length === 0) return;
    const chosen = pickedItems;
    const forced = { current: false };
    const n = chosen.length;
    const ok = await confirm({
      title: `Cancel ${n} ${current.label} downlink${n === 1 ? "" : "s"} for ${actingLabel(info.acting)}?`,
      body: <BulkCancelChoice downlinks={chosen} kind={current} forced={forced} />,
      confirmLabel: `Ask to cancel ${n}`,
      dismissLabel: "Keep them",
      danger: true,
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    const forcedCount = forced.current ? chosen.filter((d) => d.cancel.state !== "queued").length : 0;
    if (forcedCount > 0 && !(await confirmForced(forcedCount === 1 ? "one downlink" : `${forcedCount} downlinks`))) return;
    setBusy("cancelling");
    setNotice(null);
    try {
      const outcomes = await ipc.cancelDownlinks({
        items: chosen.map((d) => ({ kind: d.kind, id: d.id, forced: forced.current && d.cancel.state !== "queued" })),
        actingFor: info.acting?.id ?? null,
      });
      setBulkItems(new Map(chosen.map((d) => [d.id, d])));
      setBulk(bulkReport(outcomes, "Asked to cancel", `${current.label} downlink`));
      setPicked(new Set(outcomes.filter((o) => !o.done).map((o) => o.id)));
      setRefreshKey((k) => k + 1);
    } catch (e) {
      setNotice({ kind: "error", text: `Nothing was cancelled: ${serviceWords(e)}` });
    } finally {
      setBusy(null);
    }
  };

  /** Every downlink the filters show (all pages), as CSV, to a file chosen in the save dialog. */
  const exportCsv = async () => {
    if (!current) return;
    const path = await ipc.pickSaveFile({
      title: `Export the ${current.label} downlinks as CSV`,
      defaultName: `${current.kind}-downlinks.csv`,
      filters: [{ name: "CSV", extensions: ["csv"] }],
    });
    if (!path) return;
    setBusy("exporting");
    try {
      const rows = await ipc.exportDownlinksCsv(listRequest(current, filters, sort, null), path);
      setNotice({ kind: "ok", text: `Exported ${rows} ${current.label} downlink${rows === 1 ? "" : "s"} to ${path}.` });
    } catch (e) {
      setNotice({ kind: "error", text: `The export failed: ${errorMessage(e)}` });
    } finally {
      setBusy(null);
    }
  };

  return (
    <section class="view view-dense" aria-labelledby="downlinks-title">
      {confirmElement}
      <div class="view-head">
        <h1 id="downlinks-title">Downlinks</h1>
        <span class="muted" data-testid="downlink-count">
          {count}
        </span>
        <span class="spacer" />
        {current && (
          <button type="button" class="button" data-testid="export-downlinks" disabled={busy !== null} onClick={exportCsv}>
            {busy === "exporting" ? "Exporting…" : "Export CSV…"}
          </button>
        )}
        {current?.kind === "actuator" && (
          <button type="button" class="button" data-testid="new-beta-downlink" onClick={() => setComposingBeta(true)}>
            Beta (deprecated)…
          </button>
        )}
        {current && (
          <button type="button" class="button button-primary" data-testid="new-downlink" onClick={() => setComposing(true)}>
            New {current.label} downlink…
          </button>
        )}
      </div>

      {kindsError !== null && <ErrorBox error={kindsError} />}
      {!kinds && kindsError === null && <Loading label="Loading…" />}
      {kinds && (
        <div class="tabs" role="tablist" aria-label="Downlink kinds">
          {kinds.map((k) => (
            <button
              key={k.kind}
              type="button"
              role="tab"
              class={k.kind === kind ? "tab active" : "tab"}
              aria-selected={k.kind === kind}
              data-testid={`kind-${k.kind}`}
              onClick={() => switchKind(k.kind)}
            >
              {k.label}
            </button>
          ))}
        </div>
      )}

      {current && (
        <div class="filters list-toolbar" data-testid="downlink-filters" key={`${kind}|${filterGen}`}>
          {has("q") && (
            <span class={badFilter === "q" ? "invalid" : undefined}>
              <FilterText idPrefix="downlinks" label="Search" name="q" value={filters.q} onApply={apply} placeholder="reference, network id or message" />
            </span>
          )}
          {has("deviceId") && (
            <span class={badFilter === "deviceId" ? "invalid" : undefined}>
              <FilterText
                idPrefix="downlinks"
                label={current.kind === "sms" ? "Device UUID" : "Device id"}
                name="deviceId"
                value={filters.deviceId}
                onApply={apply}
                placeholder="any id form"
              />
            </span>
          )}
          {has("status") && (
            <FilterSelect label="Status" name="status" value={filters.status} options={current.statuses.map((s) => ({ value: s, label: s }))} onApply={apply} />
          )}
          <TimeFilters idPrefix="downlinks" value={filters} onApply={apply} fields={current.filters} invalid={badFilter} />
          {anyFilter && (
            <button type="button" class="button button-quiet" onClick={clear} data-testid="clear-filters">
              Clear filters
            </button>
          )}
          <span class="spacer" />
          <LiveIndicator items={items.list} ready={items.ready} />
        </div>
      )}

      {picked.size > 0 && current && (
        <div class="bulk-bar" data-testid="downlinks-bulk-bar">
          <strong>{picked.size} picked</strong>
          <button type="button" class="button button-small button-danger" disabled={busy !== null} onClick={cancelPicked} data-testid="bulk-cancel">
            {busy === "cancelling" ? "Cancelling…" : `Cancel ${picked.size}…`}
          </button>
          <button type="button" class="button button-small button-quiet" onClick={() => setPicked(new Set())}>
            Clear the picks
          </button>
        </div>
      )}

      {notice && <NoticeRow notice={notice} onDismiss={() => setNotice(null)} testid="downlink-notice" />}
      {bulk && <BulkResult report={bulk} name={(id) => <BulkName id={id} item={bulkItems.get(id) ?? byId.get(id)} />} onDismiss={() => setBulk(null)} testid="downlinks-bulk-result" />}

      {current && (
        <DownlinksTable
          key={current.kind}
          kind={current}
          filters={filters}
          sort={sort}
          onSort={setSort}
          reloadKey={reloadKey}
          refreshKey={refreshKey}
          onOpen={setOpen}
          onCancel={cancel}
          onCount={setCount}
          onFilterError={setBadFilter}
          picked={picked}
          onPick={(ids, on) =>
            setPicked((p) =>
              ids === null
                ? toggledAll(p, items.list.filter((d) => !d.isFinal).map((d) => d.id))
                : ids.reduce((acc, id) => toggled(acc, id, on), p),
            )
          }
          onItems={(list, ready) => setItems({ list, ready })}
        />
      )}

      {composing && current?.kind === "actuator" && (
        <ActuatorComposer
          onClose={() => setComposing(false)}
          onSent={(d) => {
            setComposing(false);
            setNotice({ kind: "ok", text: `Sent${d.dryRun ? " as a dry run" : ""}: the list follows it until it is final.`, id: d.id });
            setReloadKey((k) => k + 1);
          }}
        />
      )}
      {composingBeta && <BetaComposer onClose={() => setComposingBeta(false)} />}
      {composing && current && current.kind !== "actuator" && (
        <ConnectionComposer
          kind={current}
          onClose={() => setComposing(false)}
          onSent={(d) => {
            setComposing(false);
            setNotice({ kind: "ok", text: `Sent the ${current.label} downlink${d.dryRun ? " as a dry run" : ""}.`, id: d.id });
            setReloadKey((k) => k + 1);
          }}
        />
      )}
      {open && current && (
        <DownlinkDetailDialog
          key={open.id}
          kind={open.kind}
          id={open.id}
          kindLabel={current.label}
          onClose={() => setOpen(null)}
          onCancel={cancel}
        />
      )}
    </section>
  );
}

/** A downlink of a bulk result: its device and id. */
function BulkName({ id, item }: { id: string; item: DownlinkView | undefined }) {
  return (
    <>
      {item && (
        <>
          <DeviceLabel id={item.device} inline copy={false} />{" "}
        </>
      )}
      <code title={id}>{id.slice(0, 8)}</code>
    </>
  );
}
