import { useEffect, useRef, useState } from "preact/hooks";
import { useFollow } from "../../lib/follow";
import { isString, oneOf, useRemembered } from "../../lib/remember";
import { ErrorBox, Loading, NoticeRow, type Notice } from "../../components/States";
import { errorMessage, ipc, type DeviceChoice, type DeviceQuery, type Link } from "../../ipc";
import { Time } from "../../components/Time";
import { useSession } from "../../session";
import { DevicesTab } from "./DevicesTab";
import { durationText, FLEET_TABS, intervalText, isDeviceQuery, num, refreshModeText, REMEMBER, scanFraction, scanText, type FleetTab } from "./fleet";
import { HistoryTab } from "./HistoryTab";
import { OverviewTab } from "./OverviewTab";
import { RolloutsTab } from "./RolloutsTab";
import { RolloutWizard } from "./RolloutWizard";
import { useFleetStatus } from "./useFleetStatus";
import "./rollouts.css";

type Tab = FleetTab;
const isTab = oneOf(...FLEET_TABS);
const isModule = (v: unknown): v is string | null => v === null || isString(v);
const TABS: { id: Tab; label: string }[] = [
  { id: "overview", label: "Overview" },
  { id: "devices", label: "Devices" },
  { id: "history", label: "History" },
  { id: "rollouts", label: "Rollouts" },
];
const INTERVALS = [5, 15, 30, 60, 300, 900];

/**
 * The rollout dashboard: the active customer's fleet as the local fleet database holds it
 * (scanned from the service, refreshed on a timer), per module; the device table; history;
 * and rollouts in waves.
 */
export function FleetView({ link = null }: { link?: Link | null }) {
  const { info } = useSession();
  const { status, error: statusError, setStatus } = useFleetStatus();
  // Tab, module, and the device table's filters and sort: as left last time.
  const [tab, setTab] = useRemembered<Tab>(REMEMBER.tab, "overview", isTab);
  const [moduleId, setModuleId] = useRemembered<string | null>(REMEMBER.module, null, isModule);
  const [query, setQuery] = useRemembered<DeviceQuery>(REMEMBER.query, {}, isDeviceQuery);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [wizard, setWizard] = useState<{ choice: DeviceChoice | null; version?: string; waves?: string } | null>(null);
  const started = useRef(false);
  const [tools, setTools] = useState<HTMLDivElement | null>(null);
  const revision = status?.revision ?? -1;

  // A link to a device opens the device table filtered to it; to a rollout, the rollouts.
  useEffect(() => {
    if (link?.kind === "device") {
      setQuery({ device: link.id });
      setTab("devices");
    } else if (link?.kind === "rollout") {
      setTab("rollouts");
    }
  }, [link]);

  // Read again whenever the fleet changed (a refresh ended, a rollout moved: lib/follow.ts).
  const { answer: home, error: homeError } = useFollow(revision, () => ipc.fleetHome(), {
    revisionOf: (h) => h.status.revision,
  });
  // The module shown: the one chosen last while the fleet still has it, else the first.
  const shownModule = home && moduleId && home.modules.some((x) => x.moduleId === moduleId) ? moduleId : (home?.modules[0]?.moduleId ?? null);

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
    <section class={tab === "devices" ? "view fleet fleet-fill" : "view fleet"} aria-labelledby="fleet-title">
      {/* One row: the heading, the fleet database's scan state and refresh, and the main action. */}
      <div class="view-head scanbar fleet-head" data-testid="scanbar">
        <h1 id="fleet-title">Rollouts</h1>
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
            <span
              class="scan-text"
              data-testid="scan-last"
              title={[
                info2 ? `${num(info2.states)} firmware states in this computer's fleet database` : "",
                status?.info.lastRefresh && status.mode.incremental ? refreshModeText(status) : "",
              ].filter(Boolean).join("\n")}
            >
              {status?.busyElsewhere ? (
                "A scan of another customer is under way…"
              ) : status?.last ? (
                <>
                  Last {status.last.kind === "full" ? "full scan" : "refresh"}
                  {info2?.lastRefresh ? (
                    <>
                      {" "}
                      <Time at={info2.lastRefresh} relative />
                    </>
                  ) : null}
                  : {num(status.last.states)} states read in {durationText(status.last.elapsedMs)}, {num(status.last.changed)} changed
                  {status.last.removed ? `, ${num(status.last.removed)} gone` : ""}
                </>
              ) : info2?.lastFullScan ? (
                <>
                  {num(info2.states)} states, scanned <Time at={info2.lastFullScan} relative />
                </>
              ) : (
                "Not scanned yet"
              )}
            </span>
            <button type="button" class="button button-small" onClick={() => scan(false)} disabled={!info2?.lastRefresh} data-testid="scan-refresh"
              title={
                status?.mode.incremental === false
                  ? "Read every state again and keep what changed (this service cannot list only the changed ones)"
                  : "Read only the states changed since the last refresh"
              }>
              Refresh
            </button>
            <button type="button" class="button button-small" onClick={() => scan(true)} data-testid="scan-full" title="Read every state again">
              Full scan
            </button>
          </>
        )}
        <label class="refresh-choice">
          <input
            type="checkbox"
            checked={status?.autoRefresh ?? true}
            data-testid="auto-refresh"
            onChange={(e) => setRefresh(status?.intervalSeconds ?? 15, e.currentTarget.checked)}
          />{" "}
          every
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
          <span class="tag tag-running" data-testid="running-rollouts">
            {status.runningRollouts} running
          </span>
        )}
        {status && status.pausedRollouts > 0 && (
          <span class="tag tag-warn" data-testid="paused-rollouts" title="Paused rollouts wait for you: resume or abort them in the Rollouts tab">
            {status.pausedRollouts} paused
          </span>
        )}
        <button
          type="button"
          class="button button-small button-primary"
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
      {status?.info.lastRefresh && !status.mode.incremental && (
        <div class="notice refresh-mode" data-testid="refresh-mode">
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
          table and history work as usual. Setting a target version is not described in the service's API documentation, so the
          console has to be told how your service does it: open <strong>Settings</strong>, edit profile{" "}
          <strong>{home.setTarget.profile}</strong> and fill in <strong>Set-target operation</strong> (method, path and
          body, as your service documents them), then use “Test on one device” to check it.
        </div>
      )}
      {notice && <NoticeRow notice={notice} onDismiss={() => setNotice(null)} testid="fleet-notice" />}

      <div class="tab-row">
        <div class="tabs" role="tablist" aria-label="Dashboard">
          {TABS.map((t) => (
            <button key={t.id} type="button" role="tab" class={t.id === tab ? "tab active" : "tab"} aria-selected={t.id === tab}
              data-testid={`fleet-tab-${t.id}`} onClick={() => setTab(t.id)}>
              {t.label}
            </button>
          ))}
        </div>
        {/* The open tab's own actions (the device table's count, export and rollout), beside the tabs. */}
        <div class="table-toolbar tab-tools" ref={setTools} />
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
            <OverviewTab
              home={home}
              moduleId={shownModule}
              onModule={setModuleId}
              revision={revision}
              onDevices={openDevices}
              onRollOut={(choice, version) => setWizard({ choice, version, waves: "100" })}
              onNotice={setNotice}
            />
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
              toolbar={tools}
            />
          )}
          {tab === "history" && <HistoryTab home={home} moduleId={shownModule} onModule={setModuleId} revision={revision} onDevices={openDevices} />}
          {tab === "rollouts" && (
            <RolloutsTab home={home} revision={revision} onNotice={setNotice} linked={link?.kind === "rollout" ? link : null} />
          )}
        </>
      )}

      {wizard && info && home && (
        <RolloutWizard
          home={home}
          moduleId={wizard.choice?.kind === "query" ? (wizard.choice.query.moduleId ?? shownModule) : shownModule}
          choice={wizard.choice}
          initialVersion={wizard.version}
          initialWaves={wizard.waves}
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
