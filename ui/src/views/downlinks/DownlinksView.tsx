import "./downlinks.css";
import { useEffect, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { ErrorBox, Loading, NoticeRow, type Notice } from "../../components/States";
import { errorMessage, IpcError, ipc, type DownlinkKind, type DownlinkView, type KindInfo } from "../../ipc";
import { useSession } from "../../session";
import { ActuatorComposer } from "./ActuatorComposer";
import { BetaComposer } from "./BetaComposer";
import { ConnectionComposer } from "./ConnectionComposer";
import { DownlinkDetailDialog } from "./DownlinkDetail";
import { DownlinksTable, NO_FILTERS, type DownlinkFilters } from "./DownlinksTable";
import { CancelChoice } from "./parts";

const TIME_FILTERS: { id: keyof DownlinkFilters; label: string }[] = [
  { id: "createdSince", label: "Created since" },
  { id: "createdBefore", label: "Created before" },
  { id: "modifiedSince", label: "Modified since" },
  { id: "modifiedBefore", label: "Modified before" },
];

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
 * sorting and paging, a composer, a detail with the status timeline, and cancellation.
 */
export function DownlinksView() {
  const { info } = useSession();
  const [kinds, setKinds] = useState<KindInfo[] | null>(null);
  const [kindsError, setKindsError] = useState<unknown>(null);
  const [kind, setKind] = useState<DownlinkKind>("actuator");
  const [typed, setTyped] = useState<DownlinkFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<DownlinkFilters>(NO_FILTERS);
  const [badFilter, setBadFilter] = useState<string | null>(null);
  const [count, setCount] = useState("");
  const [composing, setComposing] = useState(false);
  const [composingBeta, setComposingBeta] = useState(false);
  const [open, setOpen] = useState<DownlinkView | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [reloadKey, setReloadKey] = useState(0);
  const [refreshKey, setRefreshKey] = useState(0);
  const [confirmElement, confirm] = useConfirm();

  useEffect(() => {
    ipc.downlinkKinds().then(setKinds, setKindsError);
  }, []);

  const current = kinds?.find((k) => k.kind === kind) ?? null;
  const has = (f: string) => current?.filters.includes(f) ?? false;
  const apply = (patch?: Partial<DownlinkFilters>) => setFilters({ ...typed, ...patch });
  const filterInput = (id: keyof DownlinkFilters, label: string, placeholder: string, mono = false, cls = "") => (
    <label>
      <span>{label}</span>
      <input
        data-testid={`filter-${id}`}
        class={[mono ? "mono" : "", cls].join(" ").trim() || undefined}
        placeholder={placeholder}
        value={typed[id]}
        aria-invalid={badFilter === id ? true : undefined}
        onInput={(e) => setTyped((t) => ({ ...t, [id]: e.currentTarget.value }))}
        onBlur={() => apply()}
        onKeyDown={(e) => e.key === "Enter" && apply()}
      />
    </label>
  );
  const anyFilter = Object.values(filters).some((v) => v.trim() !== "");

  const switchKind = (k: DownlinkKind) => {
    setKind(k);
    setTyped(NO_FILTERS);
    setFilters(NO_FILTERS);
    setBadFilter(null);
  };

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
    try {
      await ipc.cancelDownlink(d.kind, d.id, forced.current, info.acting?.id ?? null);
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

  return (
    <section class="view" aria-labelledby="downlinks-title">
      {confirmElement}
      <div class="view-head">
        <h1 id="downlinks-title">Downlinks</h1>
        <span class="muted" data-testid="downlink-count">
          {count}
        </span>
        <span class="spacer" />
        {current && (
          <button type="button" class="button button-primary" data-testid="new-downlink" onClick={() => setComposing(true)}>
            New {current.label} downlink…
          </button>
        )}
        {current?.kind === "actuator" && (
          <button type="button" class="button" data-testid="new-beta-downlink" onClick={() => setComposingBeta(true)}>
            Beta (deprecated)…
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
        <div class="filters" data-testid="downlink-filters">
          {has("q") && filterInput("q", "Search", "reference, network id or message")}
          {has("deviceId") && filterInput("deviceId", current.kind === "sms" ? "Device UUID" : "Device id", "any id form", true)}
          {has("status") && (
            <label>
              <span>Status</span>
              <select
                data-testid="filter-status"
                onChange={(e) => {
                  const status = e.currentTarget.value;
                  setTyped((t) => ({ ...t, status }));
                  apply({ status });
                }}
              >
                <option value="" selected={filters.status === ""}>
                  Any
                </option>
                {current.statuses.map((s) => (
                  <option key={s} value={s} selected={filters.status === s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
          )}
          {TIME_FILTERS.filter((f) => has(f.id)).map((f) =>
            filterInput(f.id, `${f.label} (UTC)`, "e.g. 2026-01-05 08:00", true, "filter-time"),
          )}
          {anyFilter && (
            <button
              type="button"
              class="button button-quiet"
              onClick={() => {
                setTyped(NO_FILTERS);
                setFilters(NO_FILTERS);
              }}
            >
              Clear filters
            </button>
          )}
        </div>
      )}

      {notice && <NoticeRow notice={notice} onDismiss={() => setNotice(null)} testid="downlink-notice" />}

      {current && (
        <DownlinksTable
          key={current.kind}
          kind={current}
          filters={filters}
          reloadKey={reloadKey}
          refreshKey={refreshKey}
          onOpen={setOpen}
          onCancel={cancel}
          onCount={setCount}
          onFilterError={setBadFilter}
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
