import { useEffect, useRef, useState } from "preact/hooks";
import { ErrorBox, Loading, NoticeRow, type Notice } from "../../components/States";
import { errorMessage, ipc, type DeviceChoice, type DeviceQuery, type FleetHome, type FleetStatus } from "../../ipc";
import { formatTimestamp } from "../../lib/format";
import { useSession } from "../../session";
import { DevicesTab } from "./DevicesTab";
import { durationText, intervalText, num, refreshModeText, scanFraction, scanText } from "./fleet";
import { HistoryTab } from "./HistoryTab";
import { OverviewTab } from "./OverviewTab";
import { RolloutsTab } from "./RolloutsTab";
import { RolloutWizard } from "./RolloutWizard";
import "./rollouts.css";

type Tab = "overview" | "devices" | "history" | "rollouts";
const TABS: { id: Tab; label: string }[] = [
  { id: "overview", label: "Overview" },
  { id: "devices", label: "Devices" },
  { id: "history", label: "History" },
  { id: "rollouts", label: "Rollouts" },
];
const INTERVALS = [5, 15, 30, 60, 300, 900];

/** Polls the fleet's scan state: every 400 ms while a scan runs, else every second. */
function useFleetStatus() {
  const [status, setStatus] = useState<FleetStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const scanning = useRef(false);
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const s = await ipc.fleetStatus();
        if (!alive) return;
        scanning.current = !!s.scanning;
        setStatus(s);
        setError(null);
      } catch (e) {
        if (alive) setError(e);
      }
      if (alive) timer = setTimeout(tick, scanning.current ? 400 : 1000);
    };
    tick();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, []);
  return { status, error, setStatus };
}

/**
 * The rollout dashboard: the active customer's fleet as the local fleet database holds it
 * (scanned from the service, refreshed on a timer), per module; the device table; history;
 * and rollouts in waves.
 */
export function FleetView() {
  const { info } = useSession();
  const { status, error: statusError, setStatus } = useFleetStatus();
  const [home, setHome] = useState<FleetHome | null>(null);
  const [homeError, setHomeError] = useState<unknown>(null);
  const [tab, setTab] = useState<Tab>("overview");
  const [moduleId, setModuleId] = useState<string | null>(null);
  const [query, setQuery] = useState<DeviceQuery>({});
  const [notice, setNotice] = useState<Notice | null>(null);
  const [wizard, setWizard] = useState<{ choice: DeviceChoice | null } | null>(null);
  const started = useRef(false);
  const revision = status?.revision ?? -1;

  // Reload what is shown whenever the fleet changed (a refresh ended, a rollout moved).
  useEffect(() => {
    if (revision < 0) return;
    ipc.fleetHome().then(
      (h) => {
        setHome(h);
        setHomeError(null);
        setModuleId((m) => (m && h.modules.some((x) => x.moduleId === m) ? m : (h.modules[0]?.moduleId ?? null)));
      },
      setHomeError,
    );
  }, [revision]);

  // A scope never scanned is scanned when the dashboard first opens.
  useEffect(() => {
    if (!status || started.current) return;
    started.current = true;
    if (!status.info.lastFullScan && !status.scanning && !status.busyElsewhere) {
      ipc.fleetScan(true).then(setStatus, (e) => setNotice({ kind: "error", text: `The scan did not start: ${errorMessage(e)}` }));
    }
  }, [status]);

  const scan = async (full: boolean) => {
    try {
      setStatus(await ipc.fleetScan(full));
    } catch (e) {
      setNotice({ kind: "error", text: `The scan did not start: ${errorMessage(e)}` });
    }
  };
  const cancel = async () => {
    await ipc.fleetCancelScan();
  };
  const setRefresh = async (seconds: number, auto: boolean) => {
    try {
      setStatus(await ipc.fleetSetRefresh(seconds, auto));
    } catch (e) {
      setNotice({ kind: "error", text: errorMessage(e) });
    }
  };

  const openDevices = (q: DeviceQuery) => {
    setQuery(q);
    setTab("devices");
  };

  if (!status && statusError) return <ErrorBox error={statusError} />;

  const p = status?.scanning;
  const fraction = p ? scanFraction(p) : null;
  const info2 = status?.info;

  return (
    <section class="view fleet" aria-labelledby="fleet-title">
      <div class="view-head">
        <h1 id="fleet-title">Rollouts</h1>
        <span class="muted" data-testid="fleet-summary">
          {info2 ? `${num(info2.states)} firmware states` : ""}
          {info2?.lastRefresh ? ` · refreshed ${formatTimestamp(info2.lastRefresh, true)} UTC` : ""}
        </span>
        <span class="spacer" />
        <button
          type="button"
          class="button button-primary"
          data-testid="new-rollout"
          disabled={!home?.setTarget.available || !home.modules.length}
          title={
            home && !home.setTarget.available
              ? "Rollouts need the profile's set-target operation: Settings > profile > Set-target operation"
              : undefined
          }
          onClick={() => setWizard({ choice: null })}
        >
          New rollout…
        </button>
      </div>

      <div class="scanbar card" data-testid="scanbar">
        {p ? (
          <>
            <div class="scan-progress" role="progressbar" aria-valuemin={0} aria-valuemax={100}
              aria-valuenow={fraction !== null ? Math.round(fraction * 100) : undefined} aria-label="Scan progress">
              <div class={fraction === null ? "scan-fill scan-indeterminate" : "scan-fill"} style={fraction !== null ? { width: `${fraction * 100}%` } : undefined} />
            </div>
            <span class="scan-text" data-testid="scan-progress">{scanText(p)}</span>
            <button type="button" class="button button-small" onClick={cancel} data-testid="scan-cancel">
              Cancel
            </button>
          </>
        ) : (
          <>
            <span class="scan-text" data-testid="scan-last">
              {status?.busyElsewhere
                ? "A scan of another customer is under way…"
                : status?.last
                  ? `Last ${status.last.kind === "full" ? "full scan" : "refresh"}: ${num(status.last.states)} states read in ${durationText(status.last.elapsedMs)}, ${num(status.last.changed)} changed${status.last.removed ? `, ${num(status.last.removed)} gone` : ""}`
                  : info2?.lastFullScan
                    ? `Scanned ${formatTimestamp(info2.lastFullScan, true)} UTC`
                    : "Not scanned yet"}
            </span>
            <button type="button" class="button button-small" onClick={() => scan(false)} disabled={!info2?.lastRefresh} data-testid="scan-refresh"
              title={
                status?.mode.incremental === false
                  ? "Read every state again and keep what changed (this service cannot list only the changed ones)"
                  : "Read only the states modified since the last refresh (modifiedSince)"
              }>
              Refresh
            </button>
            <button type="button" class="button button-small" onClick={() => scan(true)} data-testid="scan-full" title="Read every state again">
              Full scan
            </button>
          </>
        )}
        <span class="spacer" />
        <label class="refresh-choice">
          <input
            type="checkbox"
            checked={status?.autoRefresh ?? true}
            data-testid="auto-refresh"
            onChange={(e) => setRefresh(status?.intervalSeconds ?? 15, e.currentTarget.checked)}
          />{" "}
          Refresh every
        </label>
        <select
          aria-label="Refresh interval"
          data-testid="refresh-interval"
          onChange={(e) => setRefresh(Number(e.currentTarget.value), status?.autoRefresh ?? true)}
        >
          {INTERVALS.map((s) => (
            <option key={s} value={s} selected={status?.intervalSeconds === s}>
              {intervalText(s)}
            </option>
          ))}
        </select>
        {status && status.runningRollouts > 0 && (
          <span class="tag tag-active" data-testid="running-rollouts">
            {status.runningRollouts} running
          </span>
        )}
      </div>
      {status?.info.lastRefresh && (
        <div class={status.mode.incremental ? "muted refresh-mode" : "notice refresh-mode"} data-testid="refresh-mode">
          {refreshModeText(status)}
        </div>
      )}
      {status?.error && !p && (
        <div class="result result-error" role="alert" data-testid="scan-error">
          The last refresh failed: {status.error}
        </div>
      )}
      {home && !home.setTarget.available && (
        <div class="notice" data-testid="set-target-unavailable">
          <strong>Rollouts are not set up for profile {home.setTarget.profile}.</strong> Scans, the overview, the device
          table and history work as usual. Setting a target version is not described in the service's reference, so the
          console has to be told how your service does it: open <strong>Settings</strong>, edit profile{" "}
          <strong>{home.setTarget.profile}</strong> and fill in <strong>Set-target operation</strong> (method, path and
          body, as your service documents them), then use “Test on one device” to check it.
        </div>
      )}
      {notice && <NoticeRow notice={notice} onDismiss={() => setNotice(null)} testid="fleet-notice" />}

      <div class="tabs" role="tablist" aria-label="Dashboard">
        {TABS.map((t) => (
          <button key={t.id} type="button" role="tab" class={t.id === tab ? "tab active" : "tab"} aria-selected={t.id === tab}
            data-testid={`fleet-tab-${t.id}`} onClick={() => setTab(t.id)}>
            {t.label}
          </button>
        ))}
      </div>

      {homeError ? (
        <ErrorBox error={homeError} />
      ) : !home ? (
        <Loading label="Reading the fleet database…" />
      ) : home.modules.length === 0 ? (
        p ? (
          <Loading label="Scanning the fleet: the overview appears when the first scan ends…" />
        ) : (
          <div class="state state-empty" data-testid="fleet-empty">
            <strong>No firmware states known.</strong>
            <p>{info2?.lastFullScan ? "The service listed no firmware states for this customer." : "Scan the fleet to see it here."}</p>
          </div>
        )
      ) : (
        <>
          {tab === "overview" && (
            <OverviewTab home={home} moduleId={moduleId} onModule={setModuleId} revision={revision} onDevices={openDevices} />
          )}
          {tab === "devices" && (
            <DevicesTab
              home={home}
              query={query}
              onQuery={setQuery}
              revision={revision}
              canRollOut={home.setTarget.available}
              onRollOut={(choice) => setWizard({ choice })}
              onNotice={setNotice}
            />
          )}
          {tab === "history" && <HistoryTab home={home} moduleId={moduleId} onModule={setModuleId} revision={revision} />}
          {tab === "rollouts" && <RolloutsTab home={home} revision={revision} onNotice={setNotice} />}
        </>
      )}

      {wizard && info && home && (
        <RolloutWizard
          home={home}
          moduleId={wizard.choice?.kind === "query" ? (wizard.choice.query.moduleId ?? moduleId) : moduleId}
          choice={wizard.choice}
          onClose={() => setWizard(null)}
          onStarted={(r) => {
            setWizard(null);
            setTab("rollouts");
            setNotice({ kind: "ok", text: `Started the rollout of ${r.version} to ${num(r.total.size)} devices of ${r.moduleName}.` });
          }}
        />
      )}
    </section>
  );
}
