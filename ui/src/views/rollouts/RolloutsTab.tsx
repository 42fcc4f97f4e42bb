import { useEffect, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { ErrorBox, Loading, type Notice } from "../../components/States";
import { errorMessage, ipc, type FleetHome, type RolloutView, type WaveView } from "../../ipc";
import { formatTimestamp } from "../../lib/format";
import { useSession } from "../../session";
import { choiceText, num, parsePercent, successPercent, waveSegments } from "./fleet";

const STATE_TAG: Record<string, string> = {
  running: "tag tag-active",
  paused: "tag tag-warn",
  completed: "tag",
  aborted: "tag tag-deprecated",
};

const SEGMENT_LABEL: Record<string, string> = {
  succeeded: "succeeded",
  failed: "failed",
  replaced: "cancelled or replaced",
  refused: "refused by the service",
  updating: "updating",
  waiting: "not started",
};

function WaveBar({ wave, label }: { wave: WaveView; label: string }) {
  const segs = waveSegments(wave);
  return (
    <div class="wave" data-testid="wave" data-started={wave.started ? "yes" : "no"}>
      <span class="wave-label">{label}</span>
      <div class="wave-bar" role="img" aria-label={`${label}: ${segs.map((s) => `${s.count} ${SEGMENT_LABEL[s.key]}`).join(", ")}`}>
        {segs.map((s) => (
          <span key={s.key} class={`wave-seg seg-${s.key}`} style={{ width: `${s.fraction * 100}%` }} title={`${num(s.count)} ${SEGMENT_LABEL[s.key]}`} />
        ))}
      </div>
      <span class="wave-figures" data-testid="wave-figures">
        {num(wave.succeeded)}/{num(wave.size)} ok
        {wave.failed + wave.refused > 0 && <span class="status-error"> · {num(wave.failed + wave.refused)} failed</span>}
        {wave.updating > 0 && <span> · {num(wave.updating)} updating</span>}
        {!wave.started && <span class="muted"> · waiting</span>}
      </span>
    </div>
  );
}

function RolloutCard({ r, onChanged, onNotice }: { r: RolloutView; onChanged: () => void; onNotice: (n: Notice) => void }) {
  const { info } = useSession();
  const [confirmElement, confirm] = useConfirm();
  const [busy, setBusy] = useState(false);
  const [success, setSuccess] = useState(String(r.successThreshold));
  const [errorT, setErrorT] = useState(String(r.errorThreshold));
  const [resetOnAbort, setResetOnAbort] = useState(true);
  const acting = info ? { profile: info.profile, customer: info.acting } : undefined;
  const actingId = info?.acting?.id ?? null;
  const final = r.state === "completed" || r.state === "aborted";

  const run = async (what: string, f: () => Promise<RolloutView>) => {
    setBusy(true);
    try {
      await f();
      onChanged();
    } catch (e) {
      onNotice({ kind: "error", text: `${what} failed: ${errorMessage(e)}` });
    } finally {
      setBusy(false);
    }
  };

  const pause = () => run("Pausing", () => ipc.rolloutPause(r.id, actingId));

  const resume = async () => {
    const s = parsePercent(success);
    const e = parsePercent(errorT);
    if (s === null || e === null) {
      onNotice({ kind: "error", text: `${s === null ? "successThreshold" : "errorThreshold"}: must be a percentage from 0 to 100` });
      return;
    }
    const next = r.currentWave + 1 < r.waves.length ? r.waves[r.currentWave + 1] : null;
    const ok = await confirm({
      title: "Resume the rollout?",
      body: (
        <p>
          The rollout of <strong>{r.version}</strong> to {r.moduleName} goes on with a success threshold of {s}% and an error
          threshold of {e}%.{" "}
          {next ? `If the current wave has met the success threshold, wave ${next.index + 1} (${num(next.size)} devices) starts at once: their target is set to ${r.version}.` : ""}
        </p>
      ),
      confirmLabel: "Resume",
      acting,
    });
    if (!ok) return;
    run("Resuming", () => ipc.rolloutResume(r.id, s === r.successThreshold ? null : s, e === r.errorThreshold ? null : e, actingId));
  };

  const abort = async () => {
    let unfinished = 0;
    try {
      unfinished = await ipc.rolloutUnfinished(r.id);
    } catch (e) {
      onNotice({ kind: "error", text: errorMessage(e) });
      return;
    }
    let reset = resetOnAbort;
    const never = r.total.size - r.total.set - r.total.refused;
    const ok = await confirm({
      title: "Abort the rollout?",
      body: (
        <>
          <p>
            The rollout of <strong>{r.version}</strong> to {r.moduleName} stops for good: no further wave starts
            ({never === 1 ? "1 device never gets" : `${num(never)} devices never get`} the target).
          </p>
          {unfinished > 0 ? (
            <label class="check">
              <input type="checkbox" defaultChecked={resetOnAbort} data-testid="abort-reset" onChange={(e) => (reset = e.currentTarget.checked)} />
              <span>
                Also reset the target of the <strong data-testid="abort-unfinished">{num(unfinished)}</strong> devices whose update has
                not finished: the service cancels those updates (<span class="status-error">device-disrupting</span>).
              </span>
            </label>
          ) : (
            <p class="muted">No device of this rollout is still updating.</p>
          )}
        </>
      ),
      confirmLabel: "Abort rollout",
      danger: true,
      acting,
    });
    if (!ok) return;
    setResetOnAbort(reset);
    run("Aborting", () => ipc.rolloutAbort(r.id, reset && unfinished > 0, actingId));
  };

  const waveLabel = (w: WaveView, i: number) => `Wave ${i + 1} · ${w.percent}%`;

  return (
    <article class="card rollout" data-testid="rollout" data-state={r.state} data-id={r.id}>
      {confirmElement}
      <div class="card-head">
        <h3>
          {r.moduleName} → <span class="mono">{r.version}</span>
        </h3>
        <span class={STATE_TAG[r.state] ?? "tag"} data-testid="rollout-state">
          {r.state}
        </span>
        <span class="spacer" />
        {r.state === "running" && (
          <button type="button" class="button button-small" disabled={busy} onClick={pause} data-testid="rollout-pause">
            Pause
          </button>
        )}
        {!final && (
          <button type="button" class="button button-small button-danger-quiet" disabled={busy} onClick={abort} data-testid="rollout-abort">
            Abort…
          </button>
        )}
      </div>
      {r.reason && (
        <p class={r.state === "paused" ? "rollout-reason status-warn" : "rollout-reason muted"} data-testid="rollout-reason">
          {r.state === "paused" && !/^paused/i.test(r.reason) ? "Paused: " : ""}
          {r.state === "paused" && /^paused/i.test(r.reason) ? "P" + r.reason.slice(1) : r.reason}
        </p>
      )}
      <p class="muted rollout-meta">
        {num(r.total.size)} devices ({choiceText(r.devices)}) · success ≥ {r.successThreshold}% per wave · pause when failed &gt;{" "}
        {r.errorThreshold}% · started {formatTimestamp(r.createdAt, true)} UTC
      </p>
      <div class="waves">
        {r.waves.map((w, i) => (
          <WaveBar key={i} wave={w} label={waveLabel(w, i)} />
        ))}
        <div class="wave wave-total" data-testid="rollout-total">
          <span class="wave-label">All</span>
          <div class="wave-bar">
            {waveSegments(r.total).map((s) => (
              <span key={s.key} class={`wave-seg seg-${s.key}`} style={{ width: `${s.fraction * 100}%` }} />
            ))}
          </div>
          <span class="wave-figures">
            {num(r.total.succeeded)}/{num(r.total.size)} updated ({successPercent(r.total).toFixed(1)}%)
          </span>
        </div>
      </div>
      {r.state === "paused" && (
        <div class="resume-row">
          <label>
            <span>Success threshold %</span>
            <input type="text" inputMode="decimal" value={success} size={5} data-testid="resume-success" onInput={(e) => setSuccess(e.currentTarget.value)} />
          </label>
          <label>
            <span>Error threshold %</span>
            <input type="text" inputMode="decimal" value={errorT} size={5} data-testid="resume-error" onInput={(e) => setErrorT(e.currentTarget.value)} />
          </label>
          <button type="button" class="button button-primary button-small" disabled={busy} onClick={resume} data-testid="rollout-resume">
            Resume…
          </button>
        </div>
      )}
      <details class="rollout-events">
        <summary>Events ({r.events.length})</summary>
        <ol data-testid="rollout-events">
          {r.events.map((e, i) => (
            <li key={i}>
              <span class="muted">{formatTimestamp(e.at, true)}</span> {e.message}
            </li>
          ))}
        </ol>
      </details>
    </article>
  );
}

/** The rollouts of the active customer, newest first, live. */
export function RolloutsTab({ home, revision, onNotice }: { home: FleetHome; revision: number; onNotice: (n: Notice) => void }) {
  const [list, setList] = useState<RolloutView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let alive = true;
    ipc.rollouts().then(
      (l) => alive && (setList(l), setError(null)),
      (e) => alive && setError(e),
    );
    return () => {
      alive = false;
    };
  }, [revision, reload]);

  if (error) return <ErrorBox error={error} onRetry={() => setReload((r) => r + 1)} />;
  if (!list) return <Loading label="Reading the rollouts…" />;
  if (list.length === 0)
    return (
      <div class="state state-empty" data-testid="rollouts-empty">
        <strong>No rollouts yet.</strong>
        <p>
          {home.setTarget.available
            ? "Start one with “New rollout…”, or pick devices in the Devices tab and roll out to them."
            : "Rollouts need the profile's set-target operation: add it in Settings > profile > “Set-target operation”."}
        </p>
      </div>
    );
  return (
    <div class="rollouts" data-testid="rollouts">
      {list.map((r) => (
        <RolloutCard key={r.id} r={r} onChanged={() => setReload((x) => x + 1)} onNotice={onNotice} />
      ))}
    </div>
  );
}
