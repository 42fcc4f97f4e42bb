import { BarChart } from "../../components/charts/BarChart";
import { ErrorBox, Loading } from "../../components/States";
import type { Notice } from "../../components/States";
import { StuckCard } from "./StuckCard";
import { useFollow } from "../../lib/follow";
import { ipc, type Count, type DeviceChoice, type DeviceQuery, type FleetHome, type ModuleOverview, type ModuleSummary } from "../../ipc";
import { Time } from "../../components/Time";
import { shortId } from "../../lib/format";
import { StatusBar } from "../../components/charts/StatusBar";
import { num } from "./fleet";

const bars = (counts: Count[]) => counts.map((c) => ({ label: c.label, value: c.count }));

/** Modules grouped by device specification, each with its health. */
export function ModuleList({ modules, current, onModule }: { modules: ModuleSummary[]; current: string | null; onModule: (id: string) => void }) {
  const specs = new Map<string, ModuleSummary[]>();
  for (const m of modules) {
    const k = m.specName ?? m.specId ?? "(no specification)";
    specs.set(k, [...(specs.get(k) ?? []), m]);
  }
  return (
    <nav class="module-list card" aria-label="Modules" data-testid="module-list">
      {[...specs.entries()].map(([spec, mods]) => (
        <div key={spec} class="module-group">
          <div class="module-spec" title="Device specification">
            {spec} <span class="muted">· {num(mods.reduce((a, m) => Math.max(a, m.devices), 0))} devices</span>
          </div>
          {mods.map((m) => (
            <button
              key={m.moduleId}
              type="button"
              class={m.moduleId === current ? "module-item active" : "module-item"}
              aria-current={m.moduleId === current ? "true" : undefined}
              data-testid="module-item"
              data-module={m.moduleId}
              onClick={() => onModule(m.moduleId)}
            >
              <span class="module-name">{m.name.replace(` (${m.specName})`, "")}</span>
              <ModuleHealth m={m} />
            </button>
          ))}
        </div>
      ))}
    </nav>
  );
}

/** A module's devices needing attention, each figure with its word ("3 failed"). */
function ModuleHealth({ m }: { m: ModuleSummary }) {
  const parts: [string, number, string][] = [
    ["failed", m.failed, "badge-failed"],
    ["updating", m.updating, "badge-updating"],
    ["not on target", m.drift, "badge-drift"],
  ];
  const shown = parts.filter(([, n]) => n > 0);
  return (
    <span class="module-health" data-testid="module-health">
      {shown.length === 0 ? (
        <span class="muted">{num(m.devices)} devices, all settled</span>
      ) : (
        shown.map(([word, n, cls]) => (
          <span key={word} class={`badge ${cls}`}>
            {num(n)} {word}
          </span>
        ))
      )}
    </span>
  );
}

function Kpi({ label, value, sub, tone, testid }: { label: string; value: string; sub?: string; tone?: string; testid: string }) {
  return (
    <div class={`kpi ${tone ? `kpi-${tone}` : ""}`} data-testid={testid}>
      <span class="kpi-label">{label}</span>
      <strong class="kpi-value">{value}</strong>
      {sub && <span class="kpi-sub muted">{sub}</span>}
    </div>
  );
}

/** The overview of one module: versions, statuses, targets and owners as charts; failures. */
export function OverviewTab({
  home,
  moduleId,
  onModule,
  revision,
  onDevices,
  onRollOut,
  onNotice,
}: {
  home: FleetHome;
  moduleId: string | null;
  onModule: (id: string) => void;
  revision: number;
  onDevices: (q: DeviceQuery) => void;
  onRollOut: (choice: DeviceChoice, version: string | undefined) => void;
  onNotice: (n: Notice) => void;
}) {
  const { answer: overview, error } = useFollow(
    revision,
    (): Promise<ModuleOverview | null> => (moduleId ? ipc.fleetOverview(moduleId) : Promise.resolve(null)),
    { key: moduleId ?? "" },
  );

  const m = overview?.module;
  const pct = (n: number) => (m && m.devices ? `${Math.round((n * 100) / m.devices)}%` : "");
  const go = (extra: DeviceQuery) => moduleId && onDevices({ moduleId, ...extra });
  const owners = overview?.byCustomer ?? [];

  return (
    <div class="overview">
      <ModuleList modules={home.modules} current={moduleId} onModule={onModule} />
      <div class="overview-main">
        {error ? (
          <ErrorBox error={error} />
        ) : !overview || !m || m.moduleId !== moduleId ? (
          <Loading label="Summing up the module…" />
        ) : (
          <>
            <div class="card-head">
              <h2 data-testid="overview-title">{m.name}</h2>
              <span class="muted">{m.specName ?? m.specId}</span>
            </div>
            <div class="kpis">
              <Kpi label="Devices" value={num(m.devices)} testid="kpi-devices" />
              <Kpi
                label="Top version"
                value={m.topVersion ?? "—"}
                sub={m.topVersion ? `${num(m.topVersionDevices)} devices, ${pct(m.topVersionDevices)}` : undefined}
                testid="kpi-top"
              />
              <Kpi label="Drift" value={num(m.drift)} sub={`${pct(m.drift)} not on target`} tone={m.drift ? "warn" : undefined} testid="kpi-drift" />
              <Kpi label="Updating" value={num(m.updating)} sub={pct(m.updating)} tone={m.updating ? "info" : undefined} testid="kpi-updating" />
              <Kpi label="Failed" value={num(m.failed)} sub={pct(m.failed)} tone={m.failed ? "bad" : undefined} testid="kpi-failed" />
            </div>
            <StuckCard
              moduleId={m.moduleId}
              moduleName={m.name}
              revision={revision}
              canRollOut={home.setTarget.available}
              onDevices={onDevices}
              onRollOut={onRollOut}
              onNotice={onNotice}
            />
            <div class="card chart-card" data-testid="chart-status">
              <StatusBar counts={overview.byStatus} total={m.devices} onSelect={(st) => go({ status: st })} />
            </div>
            <div class="charts">
              <div class="card chart-card" data-testid="chart-version">
                <BarChart title="Devices by current version" items={bars(overview.byVersion)} onSelect={(v) => go({ version: v })} testid="bars-version" />
              </div>
              <div class="card chart-card" data-testid="chart-target">
                <BarChart title="Devices by target version" items={bars(overview.byTarget)} onSelect={(v) => go({ target: v })} testid="bars-target" />
              </div>
              {owners.length > 1 && (
                <div class="card chart-card" data-testid="chart-customer">
                  <BarChart
                    title="Devices by owner"
                    items={owners.map((c) => ({ label: c.key === c.label ? shortId(c.label) : c.label, value: c.count }))}
                    onSelect={(label) => {
                      const owner = owners.find((c) => c.label === label || shortId(c.key) === label);
                      if (owner) go({ clientId: owner.key });
                    }}
                    testid="bars-customer"
                  />
                </div>
              )}
            </div>
            <div class="card">
              <div class="card-head">
                <h3>Failures</h3>
                <span class="muted">
                  {m.failed === 1 ? "1 device" : `${num(m.failed)} devices`} failed their last update, by reason
                </span>
                <span class="spacer" />
                {m.failed > 0 && (
                  <button type="button" class="button button-small" onClick={() => go({ status: "FAILED" })} data-testid="show-failed">
                    Show failed devices
                  </button>
                )}
              </div>
              {overview.failures.length === 0 ? (
                <p class="muted">No device of this module failed its last update.</p>
              ) : (
                // Fixed columns: a long reason is cut (whole in its tooltip), so the table never
                // scrolls sideways in a narrow window.
                <table class="table table-compact" data-testid="failures">
                  <thead>
                    <tr>
                      <th>Reason</th>
                      <th style={{ width: "84px" }}>Target</th>
                      <th class="num" style={{ width: "72px" }}>
                        Devices
                      </th>
                      <th style={{ width: "132px" }}>Latest</th>
                    </tr>
                  </thead>
                  <tbody>
                    {overview.failures.map((f) => (
                      <tr key={`${f.details}|${f.target}`}>
                        <td class="failure-reason" title={f.details}>
                          {f.details}
                        </td>
                        <td class="mono">{f.target ?? "—"}</td>
                        <td class="num">{num(f.count)}</td>
                        <td>
                          <Time at={f.latest} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </div>
            {home.customerScopes.length > 0 && <CustomerScopes home={home} />}
          </>
        )}
      </div>
    </div>
  );
}

/** For resellers: each customer's fleet as last scanned (switch to a customer to scan it). */
function CustomerScopes({ home }: { home: FleetHome }) {
  return (
    <div class="card" data-testid="customer-scopes">
      <div class="card-head">
        <h3>Customers</h3>
        <span class="muted">each customer's fleet as last scanned; switch to a customer in the header to scan or roll out there</span>
      </div>
      <table class="table">
        <thead>
          <tr>
            <th>Customer</th>
            <th class="num">Devices</th>
            <th class="num">States</th>
            <th class="num">Drift</th>
            <th class="num">Failed</th>
            <th>Last refresh</th>
          </tr>
        </thead>
        <tbody>
          {home.customerScopes.map((c) => (
            <tr key={c.customerId} class={c.active ? "row-active" : undefined}>
              <td>
                {c.label} {c.active && <span class="tag tag-active">active</span>}
              </td>
              <td class="num">{c.lastRefresh ? num(c.devices) : "—"}</td>
              <td class="num">{c.lastRefresh ? num(c.states) : "—"}</td>
              <td class="num">{c.lastRefresh ? num(c.drift) : "—"}</td>
              <td class="num">{c.lastRefresh ? num(c.failed) : "—"}</td>
              <td>{c.lastRefresh ? <Time at={c.lastRefresh} relative /> : "not scanned"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
