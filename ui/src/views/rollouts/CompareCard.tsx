import { useEffect, useState } from "preact/hooks";
import { ErrorBox } from "../../components/States";
import { Time } from "../../components/Time";
import { formatLocal } from "../../lib/format";
import { IpcError, ipc, type Comparison, type DeviceQuery, type HistoryPoint, type Movement } from "../../ipc";
import { HoursField } from "./HoursField";
import { compareRequest, hoursText, movementText, NOW, num, OTHER_TIME } from "./fleet";

type Moment = { scan: string; typed: string };

const MOVE_TONE: Partial<Record<Movement, string>> = { forward: "ok", back: "warn", failed: "bad", stuck: "warn", unknown: "warn" };

/**
 * Two moments of a module compared (Rust's fleet::compare): each picked among the scans of the
 * history (or typed), the devices that moved forward, went back, failed, stayed stuck, and the
 * matrix of status then by status now. Every count opens the device table filtered to exactly
 * those devices.
 */
export function CompareCard({
  moduleId,
  points,
  onDevices,
}: {
  moduleId: string;
  /** The history's snapshots in the chosen range, oldest first: the scans to pick from. */
  points: HistoryPoint[];
  onDevices: (q: DeviceQuery) => void;
}) {
  const scans = [...points].reverse();
  const [from, setFrom] = useState<Moment>({ scan: points[0]?.at ?? OTHER_TIME, typed: "" });
  const [to, setTo] = useState<Moment>({ scan: NOW, typed: "" });
  const [hours, setHours] = useState("");
  const [result, setResult] = useState<Comparison | null>(null);
  const [error, setError] = useState<{ field: string | null; error: unknown } | null>(null);
  const [busy, setBusy] = useState(false);

  // The module's own stuck threshold as the starting value; the first scan of the range as `from`.
  useEffect(() => {
    let alive = true;
    setResult(null);
    setError(null);
    ipc.fleetStuck(moduleId).then((s) => alive && setHours(String(s.hours)), () => alive && setHours("24"));
    return () => {
      alive = false;
    };
  }, [moduleId]);
  useEffect(() => {
    if (from.scan !== OTHER_TIME && !points.some((p) => p.at === from.scan)) setFrom({ scan: points[0]?.at ?? OTHER_TIME, typed: from.typed });
  }, [points]);

  const run = async () => {
    setBusy(true);
    try {
      setResult(await ipc.fleetCompare(compareRequest(moduleId, from, to, hours)));
      setError(null);
    } catch (e) {
      setError({ field: e instanceof IpcError ? e.field : null, error: e });
      setResult(null);
    } finally {
      setBusy(false);
    }
  };

  const open = (compared: DeviceQuery["compared"]) => onDevices({ moduleId, compared });
  const cell = (f: string, t: string) => result?.cells.find((c) => c.fromStatus === f && c.toStatus === t)?.count ?? 0;
  const scanLabel = (at: string) => `Scan at ${formatLocal(at, true)}`;

  const momentField = (label: string, id: string, m: Moment, set: (m: Moment) => void, now: boolean) => (
    <span class={error?.field === id ? "compare-moment invalid" : "compare-moment"}>
      <label>
        <span>{label}</span>
        <select data-testid={`compare-${id}`} aria-invalid={error?.field === id} onChange={(e) => set({ ...m, scan: e.currentTarget.value })}>
          {now && (
            <option value={NOW} selected={m.scan === NOW}>
              Now
            </option>
          )}
          {scans.map((p) => (
            <option key={p.at} value={p.at} selected={m.scan === p.at}>
              {scanLabel(p.at)}
            </option>
          ))}
          <option value={OTHER_TIME} selected={m.scan === OTHER_TIME}>
            Another time…
          </option>
        </select>
      </label>
      {m.scan === OTHER_TIME && (
        <input
          type="datetime-local"
          step={1}
          aria-label={`${label} (local time)`}
          data-testid={`compare-${id}-time`}
          value={m.typed}
          onInput={(e) => set({ ...m, typed: e.currentTarget.value })}
        />
      )}
    </span>
  );

  return (
    <div class="card compare" data-testid="compare-card">
      <div class="card-head">
        <h3>Compare two moments</h3>
        <span class="muted">which devices moved between two scans (or two times), and where they went</span>
      </div>
      <form
        class="filters compare-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        {momentField("From", "from", from, setFrom, false)}
        {momentField("To", "to", to, setTo, true)}
        <HoursField id="compare-hours" label="Stuck after (hours)" value={hours} invalid={error?.field === "stuckHours"} onInput={setHours} />
        <button type="submit" class="button button-small button-primary" disabled={busy} data-testid="compare-run">
          {busy ? "Comparing…" : "Compare"}
        </button>
      </form>
      {error && <ErrorBox error={error.error} />}
      {result && (
        <div class="compare-result" data-testid="compare-result">
          <p class="muted" data-testid="compare-summary">
            {num(result.devices)} devices of {result.moduleName} from <Time at={result.from} seconds /> to <Time at={result.to} seconds />
            {" "}(history kept since <Time at={result.historyStarts} />). Every count opens those devices.
          </p>
          <div class="compare-moves">
            {result.movements
              .filter((m) => m.count > 0)
              .map((m) => (
                <button
                  key={m.movement}
                  type="button"
                  class={`tag compare-move tag-${MOVE_TONE[m.movement] ?? "plain"}`}
                  data-testid={`compare-move-${m.movement}`}
                  data-count={m.count}
                  onClick={() => open({ movement: m.movement, fromStatus: null, toStatus: null })}
                >
                  <strong>{num(m.count)}</strong> {movementText(m.movement, result.stuckHours)}
                </button>
              ))}
          </div>
          <div class="compare-matrix-wrap">
            <table class="table table-compact compare-matrix" data-testid="compare-matrix">
              <caption class="muted">Update status at the first moment (rows) by status at the second (columns)</caption>
              <thead>
                <tr>
                  <th scope="col">From \ To</th>
                  {result.toStatuses.map((t) => (
                    <th key={t} scope="col" class="num">
                      {t}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {result.fromStatuses.map((f) => (
                  <tr key={f}>
                    <th scope="row">{f}</th>
                    {result.toStatuses.map((t) => {
                      const n = cell(f, t);
                      return (
                        <td key={t} class={f === t ? "num diagonal" : "num"}>
                          {n === 0 ? (
                            <span class="muted">·</span>
                          ) : (
                            <button
                              type="button"
                              class="link-button"
                              data-testid="compare-cell"
                              data-from={f}
                              data-to={t}
                              title={`Show the ${num(n)} devices that went from ${f} to ${t}`}
                              onClick={() => open({ fromStatus: f, toStatus: t, movement: null })}
                            >
                              {num(n)}
                            </button>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p class="muted compare-note">
            Forward and back follow the console's order of versions; stuck: short of its target, unchanged, status older than{" "}
            {hoursText(result.stuckHours)} at the second moment. A device the service stopped listing is not counted.
          </p>
        </div>
      )}
    </div>
  );
}
