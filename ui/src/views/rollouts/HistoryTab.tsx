import { StackedTimeline, type TimeMark } from "../../components/charts/StackedTimeline";
import { ErrorBox, Loading } from "../../components/States";
import { Time } from "../../components/Time";
import { useFollow } from "../../lib/follow";
import { ipc, type FleetHome, type HistoryPoint, type WaveStart } from "../../ipc";
import { useRemembered } from "../../lib/remember";
import { CompareCard } from "./CompareCard";
import { historySpan, isHours, num, REMEMBER } from "./fleet";
import type { DeviceQuery } from "../../ipc";

const RANGES: { hours: number | null; label: string }[] = [
  { hours: 1, label: "Last hour" },
  { hours: 24, label: "Last 24 hours" },
  { hours: 24 * 7, label: "Last 7 days" },
  { hours: null, label: "All" },
];

/**
 * Devices per update status over time, from the snapshots taken after every refresh (kept in
 * the fleet database, so across restarts).
 */
export function HistoryTab({
  home,
  moduleId,
  onModule,
  revision,
  onDevices,
}: {
  home: FleetHome;
  moduleId: string | null;
  onModule: (id: string) => void;
  revision: number;
  onDevices: (q: DeviceQuery) => void;
}) {
  const [hours, setHours] = useRemembered<number | null>(REMEMBER.hours, 24, isHours);
  const { answer, error } = useFollow(
    revision,
    (): Promise<[HistoryPoint[], WaveStart[]] | null> =>
      moduleId ? Promise.all([ipc.fleetHistory(moduleId, hours), ipc.fleetWaveStarts(moduleId, hours)]) : Promise.resolve(null),
    { key: `${moduleId}|${hours}` },
  );
  const [points, waves] = answer ?? [null, []];

  const first = points?.[0];
  const last = points?.[points.length - 1];
  const rangeLabel = RANGES.find((r) => r.hours === hours)?.label ?? "All";
  const span = historySpan(points?.map((p) => p.at) ?? [], hours, rangeLabel);
  const marks: TimeMark[] = waves.map((w) => ({
    at: Date.parse(w.at),
    label: `W${w.wave}`,
    title: `Wave ${w.wave} of the rollout to ${w.version} started (${num(w.devices)} devices)`,
  }));

  return (
    <div class="history">
      <div class="filters">
        <label>
          <span>Module</span>
          <select data-testid="history-module" onChange={(e) => onModule(e.currentTarget.value)}>
            {home.modules.map((m) => (
              <option key={m.moduleId} value={m.moduleId} selected={m.moduleId === moduleId}>
                {m.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Range</span>
          <select data-testid="history-range" onChange={(e) => setHours(e.currentTarget.value ? Number(e.currentTarget.value) : null)}>
            {RANGES.map((r) => (
              <option key={r.label} value={r.hours ?? ""} selected={r.hours === hours}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? (
        <ErrorBox error={error} />
      ) : !points ? (
        <Loading label="Reading the history…" />
      ) : points.length === 0 ? (
        <div class="state state-empty" data-testid="history-empty">
          <strong>No snapshots in this range.</strong>
          <p>A snapshot is taken after every refresh in which something changed (and every ten minutes otherwise).</p>
        </div>
      ) : (
        <div class="card" data-testid="history-card">
          <StackedTimeline title={`Devices by update status · ${span.title}`} snapshots={points} marks={marks} height={320} testid="history-chart" />
          <p class="muted" data-testid="history-caption">
            {num(points.length)} {points.length === 1 ? "snapshot" : "snapshots"} from <Time at={first?.at} seconds /> to <Time at={last?.at} seconds />
            {span.short ? " (the history starts when the fleet was first scanned)" : ""}
            {marks.length > 0 ? ` · W1, W2…: a rollout wave started (${num(marks.length)} in this range)` : ""}.
          </p>
        </div>
      )}
      {moduleId && points && points.length > 0 && <CompareCard moduleId={moduleId} points={points} onDevices={onDevices} />}
    </div>
  );
}
