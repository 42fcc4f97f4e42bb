import { useState } from "preact/hooks";
import { errorMessage, IpcError, ipc, type RolloutPlan } from "../../ipc";
import type { ModelRule_Deserialize, Rehearsal_Serialize } from "../../bindings";
import { durationText, modelsOf, type ModelDraft, num } from "./fleet";

const DEFAULT_DRAFT: ModelDraft = { connection: "", fail: "5", download: "1-10", install: "0.5-3" };

/**
 * Rehearses the plan before it starts: the operator's models (per connection kind, the first
 * that matches a device; the last row is every other device), then Rust runs the plan on a
 * simulator seeded from the fleet database's copy of the chosen devices on a fast clock. Nothing
 * is sent to the service. The answer: each wave's start, threshold and end, where a threshold
 * would pause it, and the failures to expect.
 */
export function RehearsalPanel({ plan, ready }: { plan: RolloutPlan | null; ready: boolean }) {
  const [drafts, setDrafts] = useState<ModelDraft[]>([DEFAULT_DRAFT]);
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<{ r: Rehearsal_Serialize; key: string } | null>(null);
  const [failure, setFailure] = useState<{ message: string; field: string | null } | null>(null);
  const read = modelsOf(drafts);
  const models: ModelRule_Deserialize[] | null = "models" in read ? read.models : null;
  const problems: Record<string, string> = "problems" in read ? { ...read.problems } : {};
  if (failure?.field?.startsWith("models[")) problems[failure.field] ??= failure.message;
  const key = JSON.stringify([plan, models]);
  const current = result && result.key === key ? result.r : null;

  const set = (i: number, patch: Partial<ModelDraft>) => setDrafts(drafts.map((d, j) => (j === i ? { ...d, ...patch } : d)));
  const rehearse = () => {
    if (!plan || !models) return;
    setRunning(true);
    setFailure(null);
    ipc.rolloutRehearse(plan, models).then(
      (r) => setResult({ r, key }),
      (e) => setFailure({ message: errorMessage(e), field: e instanceof IpcError ? e.field : null }),
    ).finally(() => setRunning(false));
  };

  return (
    <fieldset class="wizard-schedule rehearsal" data-testid="rehearsal">
      <legend>Rehearsal</legend>
      <p class="muted">
        Runs this plan on a simulator of the chosen devices as the fleet database holds them, with these models, on a fast clock. Nothing is sent to
        the service. Each device takes the first row that matches it; the last row is for every other device.
      </p>
      <table class="rehearsal-models" data-testid="rehearsal-models">
        <thead>
          <tr>
            <th scope="col">Connection</th>
            <th scope="col">Failed %</th>
            <th scope="col">Download (min)</th>
            <th scope="col">Install (min)</th>
            <th scope="col"><span class="sr-only">Remove</span></th>
          </tr>
        </thead>
        <tbody>
          {drafts.map((d, i) => {
            const last = i === drafts.length - 1;
            const cell = (field: string, value: string, onInput: (v: string) => void, label: string) => {
              const error = problems[`models[${i}].${field}`];
              return (
                <td class={error ? "field-invalid" : ""}>
                  <input type="text" value={value} aria-label={`${label}, row ${i + 1}`} aria-invalid={error ? "true" : undefined}
                    data-testid={`model-${field}-${i}`} onInput={(e) => onInput(e.currentTarget.value)} />
                  {error && <span class="field-error" role="alert" data-testid={`error-model-${field}-${i}`}>{error}</span>}
                </td>
              );
            };
            return (
              <tr key={i}>
                <td>
                  {last ? (
                    <span class="muted">every other device</span>
                  ) : (
                    <select value={d.connection} aria-label={`Connection kind, row ${i + 1}`} data-testid={`model-connection-${i}`}
                      onChange={(e) => set(i, { connection: e.currentTarget.value })}>
                      <option value="lora">LoRa</option>
                      <option value="http">HTTP</option>
                      <option value="mqtt">MQTT</option>
                    </select>
                  )}
                </td>
                {cell("failPercent", d.fail, (v) => set(i, { fail: v }), "Failed percent")}
                {cell("downloadMinutes", d.download, (v) => set(i, { download: v }), "Download minutes, least-most")}
                {cell("installMinutes", d.install, (v) => set(i, { install: v }), "Install minutes, least-most")}
                <td>
                  {!last && (
                    <button type="button" class="button button-small" data-testid={`model-remove-${i}`} onClick={() => setDrafts(drafts.filter((_, j) => j !== i))}>
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div class="form-actions">
        <button type="button" class="button" data-testid="model-add" disabled={drafts.length >= 20}
          onClick={() => setDrafts([{ ...drafts[drafts.length - 1], connection: "lora" }, ...drafts])}>
          Add a rule for a connection kind
        </button>
        <span class="spacer" />
        <button type="button" class="button" data-testid="rehearse" disabled={!ready || !models || running} onClick={rehearse}>
          {running ? "Rehearsing…" : "Rehearse"}
        </button>
      </div>
      {failure && !failure.field?.startsWith("models[") && (
        <div class="result result-error" role="alert" data-testid="rehearsal-failure">{failure.message}</div>
      )}
      {current && <RehearsalResult r={current} />}
    </fieldset>
  );
}

/** Simulated minutes to the minute: the seconds of a rehearsal's step are noise. */
const minutes = (m: number | null) => durationText(Math.round(m ?? 0) * 60_000);

function RehearsalResult({ r }: { r: Rehearsal_Serialize }) {
  const at = (m: number | null) => (m === null ? "—" : m < 1 ? "at once" : minutes(m));
  return (
    <div class="rehearsal-result" data-testid="rehearsal-result" data-end={r.end} data-minutes={r.minutes} data-step={r.stepSeconds}>
      <p>
        <strong data-testid="rehearsal-end">
          {r.end === "completed"
            ? `Completes after ${minutes(r.minutes)}`
            : r.end === "paused"
              ? `Pauses after ${minutes(r.minutes)}`
              : `Still running after ${minutes(r.minutes)}`}
        </strong>
        {r.end === "paused" && r.pauseReason && <span>: {r.pauseReason}</span>}
        {r.trials > 1 && (
          <span class="muted" data-testid="rehearsal-trials">
            {" "}
            (median of {r.trials} trials: {minutes(r.leastMinutes)} to {minutes(r.mostMinutes)}
            {r.pausedTrials > 0 && r.end !== "paused" ? `; ${r.pausedTrials} paused` : ""})
          </span>
        )}
        {" · "}
        <span data-testid="rehearsal-failures">
          {num(r.failures)} of {num(r.devices)} devices expected to fail
        </span>
        {r.retries > 0 && <span> · {num(r.retries)} retries</span>}
      </p>
      <table class="rehearsal-waves" data-testid="rehearsal-waves">
        <thead>
          <tr>
            <th scope="col">Wave</th>
            <th scope="col" class="num">Devices</th>
            <th scope="col">Starts after</th>
            <th scope="col">Threshold met after</th>
            <th scope="col">All final after</th>
            <th scope="col" class="num">Failed</th>
          </tr>
        </thead>
        <tbody>
          {r.waves.map((w) => (
            <tr key={w.wave} data-testid="rehearsal-wave" data-start={w.startMinutes ?? ""} data-threshold={w.thresholdMinutes ?? ""} data-end={w.endMinutes ?? ""}>
              <td>{w.wave + 1}</td>
              <td class="num">{num(w.devices)}</td>
              <td>{at(w.startMinutes)}</td>
              <td>{at(w.thresholdMinutes)}</td>
              <td>{at(w.endMinutes)}</td>
              <td class="num">{num(w.failed)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {r.events.length > 0 && (
        <ul class="rehearsal-events" data-testid="rehearsal-events">
          {r.events.map((e, i) => (
            <li key={i}>
              after {at(e.minutes)}: {e.message}
            </li>
          ))}
        </ul>
      )}
      <p class="muted" data-testid="rehearsal-meta">
        Rehearsed in {(r.elapsedMs / 1000).toFixed(1)} s: {num(r.steps)} steps of the simulated clock, {num(r.stepSeconds)} s apart while devices move (as often as
        this app's refreshes come, on the service's clock).
        {r.connections.length > 0 && ` Connection kinds from the binding lists: ${r.connections.map(([k, n]) => `${k} ${num(n)}`).join(", ")}.`}
      </p>
    </div>
  );
}
