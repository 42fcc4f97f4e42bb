import { useState } from "preact/hooks";
import type { Area } from "../../areas";
import { ErrorBox, Loading } from "../../components/States";
import { Time } from "../../components/Time";
import { errorMessage, ipc, type DeviceQuery } from "../../ipc";
import { useFollow } from "../../lib/follow";
import { remember } from "../../lib/remember";
import { statusColor } from "../../lib/status";
import { intentTo } from "../../prepare";
import { useSession } from "../../session";
import { num, REMEMBER, scanText, type FleetTab } from "../rollouts/fleet";
import { useFleetStatus } from "../rollouts/useFleetStatus";
import { activeRollouts, firstSteps, inStatusOrder, rolloutLine, statusWord, type Step } from "./home";
import "./home.css";

/**
 * A control's handlers to open the dashboard on a tab (and the device table on a query, both
 * remembered, which is how it opens there), with its chunk fetched as the control is pointed at
 * or focused (prepare.ts): every control that opens it gets both.
 */
function opensFleet(go: (a: Area) => void, tab: FleetTab, query?: DeviceQuery) {
  return {
    onClick: (e: Event) => {
      e.preventDefault();
      remember(REMEMBER.tab, tab);
      if (query) remember(REMEMBER.query, query);
      go("rollouts");
    },
    ...intentTo("rollouts"),
  };
}

/**
 * The first screen: the fleet's health as the fleet database holds it (and when it was last
 * refreshed), rollouts running or paused, recent failures by reason, and what to do first.
 */
export function HomeView({ go }: { go: (a: Area) => void }) {
  const { info } = useSession();
  const { status, error: statusError, setStatus } = useFleetStatus();
  const [scanError, setScanError] = useState<string | null>(null);
  const revision = status?.revision ?? -1;

  // The fleet database, read beside the status's first read rather than after its answer (a
  // round trip the first screen waited for), and again as the fleet changes (lib/follow.ts).
  const { answer, error } = useFollow(
    revision,
    () => Promise.all([ipc.fleetHealth(), ipc.fleetHome(), ipc.rollouts()]),
    { revisionOf: ([, fh]) => fh.status.revision },
  );
  const [health, home, rollouts] = answer ?? [null, null, null];

  const scan = async () => {
    setScanError(null);
    try {
      setStatus(await ipc.fleetScan(true));
    } catch (e) {
      setScanError(`The scan did not start: ${errorMessage(e)}`);
    }
  };

  const scanned = !!status?.info.lastFullScan;
  const steps =
    status && health && info
      ? firstSteps({ scanned, states: health.states, simulator: info.simulator, setTarget: home ? home.setTarget.available : null, profile: info.profile })
      : [];
  const active = rollouts ? activeRollouts(rollouts) : [];
  const p = status?.scanning;

  return (
    <section class="view home" aria-labelledby="home-title" data-testid="home">
      <div class="view-head">
        <h1 id="home-title">Home</h1>
        <span class="muted">
          {info ? `Profile ${info.profile}` : ""}
          {info ? (info.acting ? ` · acting for ${info.acting.label}` : " · your own environment") : ""}
        </span>
      </div>
      {statusError && !status ? <ErrorBox error={statusError} /> : null}
      {error ? <ErrorBox error={error} /> : null}

      {steps.length > 0 && (
        <div class="card home-steps" data-testid="home-steps">
          <h2>{scanned && health?.states ? "Still to set up" : "Get started"}</h2>
          <ol>
            {steps.map((s) => (
              <StepItem key={s.id} step={s} go={go} onScan={scan} scanning={!!p} />
            ))}
          </ol>
          {scanError && (
            <div class="result result-error" role="alert">
              {scanError}
            </div>
          )}
        </div>
      )}

      <div class="home-grid">
        <div class="card" data-testid="home-health">
          <div class="card-head">
            <h2>Fleet health</h2>
            <span class="spacer" />
            <span class="muted home-refreshed" data-testid="home-refreshed">
              {p ? (
                scanText(p)
              ) : status?.info.lastRefresh ? (
                <>
                  Refreshed <Time at={status.info.lastRefresh} relative />
                </>
              ) : status ? (
                "Not scanned yet"
              ) : (
                ""
              )}
            </span>
          </div>
          {!health || !status ? (
            <Loading label="Reading the fleet database…" />
          ) : health.states === 0 ? (
            <p class="muted" data-testid="home-health-empty">
              {p ? "Scanning: the counts appear when the first scan ends." : scanned ? "The service listed no firmware states." : "Nothing scanned yet."}
            </p>
          ) : (
            <>
              <p class="home-totals" data-testid="home-totals">
                <strong data-testid="home-devices">{num(health.devices)}</strong> devices ·{" "}
                <strong data-testid="home-states">{num(health.states)}</strong> firmware states in{" "}
                <strong data-testid="home-modules">{num(health.modules)}</strong> modules
              </p>
              <ul class="home-statuses" aria-label="Firmware states by update status">
                {inStatusOrder(health.byStatus).map((c) => (
                  <li key={c.key}>
                    <button
                      type="button"
                      class="home-status"
                      data-testid="home-status"
                      data-status={c.key}
                      title={`Show the ${num(c.count)} states ${c.key === "none" ? "without a target" : `with status ${c.key}`}`}
                      {...opensFleet(go, "devices", { status: c.key })}
                    >
                      <span class="status-dot" style={{ background: statusColor(c.key) }} aria-hidden="true" />
                      <span class="home-status-word">{statusWord(c.key)}</span>
                      <span class="home-status-count" data-testid="home-status-count">
                        {num(c.count)}
                      </span>
                      <span class="muted home-status-pct">{Math.round((c.count * 100) / health.states)}%</span>
                    </button>
                  </li>
                ))}
                <li>
                  <button
                    type="button"
                    class="home-status"
                    data-testid="home-drift"
                    title="States whose current version differs from their target"
                    {...opensFleet(go, "devices", { drift: true })}
                  >
                    <span class="status-dot status-dot-ring" aria-hidden="true" />
                    <span class="home-status-word">Not on target</span>
                    <span class="home-status-count" data-testid="home-drift-count">
                      {num(health.drift)}
                    </span>
                    <span class="muted home-status-pct">{Math.round((health.drift * 100) / health.states)}%</span>
                  </button>
                </li>
              </ul>
            </>
          )}
        </div>

        <div class="card" data-testid="home-rollouts">
          <div class="card-head">
            <h2>Rollouts</h2>
            <span class="spacer" />
            <button type="button" class="button button-small" {...opensFleet(go, "rollouts")} data-testid="home-open-rollouts">
              All rollouts
            </button>
          </div>
          {!rollouts ? (
            <Loading label="Reading the rollouts…" />
          ) : active.length === 0 ? (
            <p class="muted" data-testid="home-no-rollouts">
              No rollout is running or paused.
            </p>
          ) : (
            <ul class="home-rollouts">
              {active.map((r) => (
                <li key={r.id} data-testid="home-rollout" data-state={r.state}>
                  <a
                    href="#/rollouts"
                    {...opensFleet(go, "rollouts")}
                  >
                    <span class={r.state === "paused" ? "tag tag-warn" : "tag tag-active"}>{r.state}</span>{" "}
                    <strong>
                      {r.version} to {r.moduleName}
                    </strong>
                  </a>
                  <div class="muted home-rollout-line">
                    {rolloutLine(r)}
                    {r.state === "paused" && r.reason ? ` · ${r.reason}` : ""}
                  </div>
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>

      <div class="card" data-testid="home-failures">
        <div class="card-head">
          <h2>Recent failures</h2>
          <span class="muted">failed updates by reason, the latest first</span>
          <span class="spacer" />
          {health && health.failures.length > 0 && (
            <button type="button" class="button button-small" {...opensFleet(go, "devices", { status: "FAILED" })} data-testid="home-show-failed">
              Show failed devices
            </button>
          )}
        </div>
        {!health ? null : health.failures.length === 0 ? (
          <p class="muted">{health.states ? "No device failed its last update." : "Nothing scanned yet."}</p>
        ) : (
          <table class="table home-failures">
            <thead>
              <tr>
                <th>Reason</th>
                <th class="num">Devices</th>
                <th class="num">Modules</th>
                <th>Latest</th>
              </tr>
            </thead>
            <tbody>
              {health.failures.map((f) => (
                <tr key={f.details} data-testid="home-failure">
                  <td class="home-reason" title={f.details}>
                    {f.details}
                  </td>
                  <td class="num">{num(f.count)}</td>
                  <td class="num">{num(f.modules)}</td>
                  <td>
                    <Time at={f.latest} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}

function StepItem({ step, go, onScan, scanning }: { step: Step; go: (a: Area) => void; onScan: () => void; scanning: boolean }) {
  const action =
    step.id === "scan" ? (
      <button type="button" class="button button-primary button-small" onClick={onScan} disabled={scanning} data-testid="home-scan">
        {scanning ? "Scanning…" : "Scan the fleet"}
      </button>
    ) : step.id === "package" ? (
      <button type="button" class="button button-small" onClick={() => go("firmware")} data-testid="home-go-firmware">
        Open Firmware
      </button>
    ) : (
      <button type="button" class="button button-small" onClick={() => go("settings")} data-testid={`home-go-${step.id}`}>
        Open Settings
      </button>
    );
  return (
    <li class="home-step" data-testid="home-step" data-step={step.id}>
      <div>
        <strong>{step.title}</strong>
        <p class="muted">{step.text}</p>
      </div>
      {action}
    </li>
  );
}
