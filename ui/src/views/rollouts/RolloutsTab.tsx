import { useEffect, useRef, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { ErrorBox, Loading, type Notice } from "../../components/States";
import { Time } from "../../components/Time";
import { errorMessage, ipc, type FleetHome, type Link, type RolloutView, type WaveView } from "../../ipc";
import { useFollow } from "../../lib/follow";
import { refreshRolloutCounts } from "../../lib/rolloutCounts";
import { useSession } from "../../session";
import { choiceText, lateText, num, parsePercent, retryText, scheduleText } from "./fleet";
import { driverText, errorBudgetText, finishedFraction, nextStepText, SEGMENT_LABEL, type SegmentKey, stateBadge, successPercent, waveSegments } from "./progress";

const TONE_TAG: Record<string, string> = {
  active: "tag tag-running",
  warn: "tag tag-warn",
  ok: "tag tag-ok",
  bad: "tag tag-deprecated",
  quiet: "tag",
};

/** The bar's parts, as each wave's bar draws them: filled once final, outlined while updating. */
function Legend() {
  const keys: SegmentKey[] = ["succeeded", "failed", "refused", "replaced", "updating", "waiting"];
  return (
    <ul class="wave-legend" data-testid="wave-legend" aria-label="Legend of the wave bars">
      {keys.map((k) => (
        <li key={k}>
          <span class={`legend-swatch wave-seg seg-${k}`} aria-hidden="true" />
          {SEGMENT_LABEL[k]}
        </li>
      ))}
    </ul>
  );
}

/** A bar of `wave`'s devices: only final devices fill it, so it is full only when all are final. */
function Bar({ wave, label }: { wave: WaveView; label: string }) {
  const segs = waveSegments(wave);
  const finished = finishedFraction(wave);
  return (
    <div class="wave-bar" role="img" data-testid="wave-bar" data-finished={finished.toFixed(4)}
      aria-label={`${label}: ${segs.map((s) => `${s.count} ${SEGMENT_LABEL[s.key]}`).join(", ")}`}>
      {segs.map((s) => (
        <span key={s.key} class={`wave-seg seg-${s.key}`} style={{ width: `${s.fraction * 100}%` }} title={`${num(s.count)} ${SEGMENT_LABEL[s.key]}`} />
      ))}
    </div>
  );
}

function WaveBar({ wave, label, current }: { wave: WaveView; label: string; current: boolean }) {
  const final = wave.succeeded + wave.failed + wave.replaced + wave.refused;
  return (
    <div class={current ? "wave wave-current" : "wave"} data-testid="wave" data-started={wave.started ? "yes" : "no"}>
      <span class="wave-label">{label}</span>
      <Bar wave={wave} label={label} />
      <span class="wave-figures" data-testid="wave-figures">
        {!wave.started ? (
          <span class="muted">{num(wave.size)} devices · not started</span>
        ) : (
          <>
            {num(wave.succeeded)}/{num(wave.size)} ok
            {wave.failed + wave.refused > 0 && <span class="status-error"> · {num(wave.failed + wave.refused)} failed</span>}
            {wave.updating > 0 && <span> · {num(wave.updating)} updating</span>}
            {wave.retrying > 0 && (
              <span class="status-warn" data-testid="wave-retrying" title="failed, target to be set again (counted as updating)">
                {" "}
                ({num(wave.retrying)} retrying)
              </span>
            )}
            {final === wave.size && <span class="muted"> · done</span>}
          </>
        )}
      </span>
    </div>
  );
}

/** What a rollout's new state means, for the banner; `own`: the operator's action (not an alarm). */
function changeNotice(r: RolloutView, own = false): Notice | null {
  const what = `The rollout of ${r.version} to ${r.moduleName}`;
  const kind = own ? "ok" : "error";
  switch (r.state) {
    case "paused": {
      const why = r.reason && /^paused /i.test(r.reason) ? ` ${r.reason.slice(7)}` : `: ${r.reason ?? "no reason given"}`;
      return { kind, text: `${what} is paused${why}. No new wave starts until it is resumed.` };
    }
    case "aborted":
      return { kind, text: `${what} was aborted: no further wave starts.` };
    case "completed": {
      const failed = r.total.failed + r.total.refused;
      return failed > 0
        ? { kind: "error", text: `${what} completed with ${num(failed)} ${failed === 1 ? "failure" : "failures"}: ${r.reason ?? ""}` }
        : { kind: "ok", text: `${what} completed: ${r.reason ?? ""}` };
    }
    case "running":
      return { kind: "ok", text: `${what} is running again.` };
    default:
      return null;
  }
}

function RolloutCard({
  r,
  linked,
  onChanged,
  onNotice,
}: {
  r: RolloutView;
  /** The rollout a link asked for: marked. */
  linked: boolean;
  onChanged: (after: RolloutView) => void;
  onNotice: (n: Notice) => void;
}) {
  const { info } = useSession();
  const [confirmElement, confirm] = useConfirm();
  const [busy, setBusy] = useState(false);
  const [success, setSuccess] = useState(String(r.successThreshold));
  const [errorT, setErrorT] = useState(String(r.errorThreshold));
  const [resetOnAbort, setResetOnAbort] = useState(true);
  const acting = info ? { profile: info.profile, customer: info.acting } : undefined;
  const actingId = info?.acting?.id ?? null;
  const final = r.state === "completed" || r.state === "aborted";

  const run = async (what: string, f: () => Promise<RolloutView>, said?: (after: RolloutView) => string) => {
    setBusy(true);
    try {
      const after = await f();
      refreshRolloutCounts();
      // The banner says the state now (a "Started" line must not outlive a pause or an abort).
      const n = said && after.state === "running" ? { kind: "ok" as const, text: said(after) } : changeNotice(after, true);
      if (n) onNotice(n);
      onChanged(after);
    } catch (e) {
      onNotice({ kind: "error", text: `${what} failed: ${errorMessage(e)}` });
    } finally {
      setBusy(false);
    }
  };

  const pause = () => run("Pausing", () => ipc.rolloutPause(r.id, actingId));

  /** Approval between waves: the wave before's figures now, what starting the next one does. */
  const approve = async () => {
    const held = r.hold;
    if (!held || held.kind !== "approval") return;
    const before = r.waves[held.wave - 1];
    const next = r.waves[held.wave];
    if (!before || !next) return;
    const ok = await confirm({
      title: `Start wave ${held.wave + 1}?`,
      body: (
        <>
          <p data-testid="continue-figures">
            Wave {held.wave} now: <strong>{num(before.succeeded)}</strong> of {num(before.size)} updated ({successPercent(before).toFixed(1)}%),{" "}
            {num(before.failed + before.refused)} failed, {num(before.replaced)} replaced or cancelled, {num(before.updating)} updating.
            All waves: {num(r.total.failed + r.total.refused)} failed of {num(r.errorBudget.devices)} started.
          </p>
          <p>
            Wave {held.wave + 1} sets the target of <strong>{num(next.size)}</strong> devices of {r.moduleName} to{" "}
            <strong class="mono">{r.version}</strong> (<span class="status-error">device-disrupting</span>)
            {r.schedule ? `, as soon as its schedule allows (${scheduleText(r.schedule)}).` : ", at once."}
          </p>
        </>
      ),
      confirmLabel: `Start wave ${held.wave + 1}`,
      danger: true,
      acting,
    });
    if (!ok) return;
    void run(
      "Continuing",
      () => ipc.rolloutContinue(r.id, actingId),
      (after) =>
        after.hold
          ? `Wave ${held.wave + 1} approved: ${after.hold.message}.`
          : `Wave ${held.wave + 1} approved and started: ${num(after.waves[held.wave]?.set ?? 0)} targets set.`,
    );
  };

  /** The rollout's report, as HTML (one self-contained file) or JSON, where the user chooses. */
  const saveReport = async (format: "html" | "json") => {
    const path = await ipc.pickSaveFile({
      title: `Save the report of this rollout as ${format === "html" ? "HTML" : "JSON"}`,
      defaultName: `rollout-${r.version}.${format}`,
      filters: [format === "html" ? { name: "HTML", extensions: ["html"] } : { name: "JSON", extensions: ["json"] }],
    });
    if (!path) return;
    setBusy(true);
    try {
      const written = await ipc.rolloutReport(r.id, format, path);
      onNotice({ kind: "ok", text: `Saved the report to ${written}.` });
    } catch (e) {
      onNotice({ kind: "error", text: `The report could not be saved: ${errorMessage(e)}` });
    } finally {
      setBusy(false);
    }
  };

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
    void run("Resuming", () => ipc.rolloutResume(r.id, s === r.successThreshold ? null : s, e === r.errorThreshold ? null : e, actingId));
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
      // Stopping for good (and cancelling updates on devices) is not undone: the word typed.
      typeToConfirm: "abort",
      acting,
    });
    if (!ok) return;
    setResetOnAbort(reset);
    void run("Aborting", () => ipc.rolloutAbort(r.id, reset && unfinished > 0, actingId));
  };

  const waveLabel = (w: WaveView, i: number) => `Wave ${i + 1} · ${w.percent}%`;
  const badge = stateBadge(r);
  const driven = driverText(r);
  const next = nextStepText(r);
  const errorBudget = errorBudgetText(r);

  return (
    <article class={`card rollout rollout-${badge.tone}${linked ? " linked" : ""}`} aria-current={linked ? "true" : undefined} data-testid="rollout" data-state={r.state} data-tone={badge.tone} data-id={r.id}
      data-hold={r.state === "running" ? r.hold?.kind : undefined} data-until={r.state === "running" ? r.hold?.until ?? undefined : undefined}>
      {confirmElement}
      <div class="card-head">
        <h3>
          {r.moduleName} → <span class="mono">{r.version}</span>
        </h3>
        <span class={TONE_TAG[badge.tone]} data-testid="rollout-state">
          {badge.label}
        </span>
        <span class="spacer" />
        <button type="button" class="button button-small button-quiet" disabled={busy} onClick={() => saveReport("html")} data-testid="rollout-report-html" title="Save a report of this rollout as one HTML file (prints to PDF)">
          Report…
        </button>
        <button type="button" class="button button-small button-quiet" disabled={busy} onClick={() => saveReport("json")} data-testid="rollout-report-json" title="Save the same report as JSON">
          JSON report…
        </button>
        {r.state === "running" && r.hold?.kind === "approval" && (
          <button type="button" class="button button-small button-primary" disabled={busy} onClick={approve} data-testid="rollout-continue">
            Continue…
          </button>
        )}
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
      {driven && (
        <p class={driven.tone === "warn" ? "rollout-driver status-warn" : "rollout-driver muted"} data-testid="rollout-driver" data-kind={r.driver?.kind ?? "none"} data-this={r.driver?.this ? "true" : "false"}>
          {driven.text}
        </p>
      )}
      <p class="muted rollout-meta">
        {num(r.total.size)} devices ({choiceText(r.devices)}) · success ≥ {r.successThreshold}% per wave · pause when failed &gt;{" "}
        {r.errorThreshold}% · started <Time at={r.createdAt} />
        {r.approval && <> · approval between waves</>}
        {r.late !== "none" && (
          <>
            {" "}
            · <span data-testid="rollout-late" data-late={r.late}>{lateText(r.late)}</span>
          </>
        )}
        {r.retry && (
          <>
            {" "}
            · <span data-testid="rollout-retry">{retryText(r.retry)}</span>
            {r.total.retried > 0 && (
              <span data-testid="rollout-retried" data-devices={r.total.retried} data-retries={r.total.retries}>
                {" "}
                ({num(r.total.retried)} {r.total.retried === 1 ? "device" : "devices"} retried, {num(r.total.retries)} {r.total.retries === 1 ? "retry" : "retries"})
              </span>
            )}
          </>
        )}
        {r.schedule && (
          <>
            {" "}
            · <span data-testid="rollout-schedule">{scheduleText(r.schedule)}</span>
          </>
        )}
      </p>
      {(next || errorBudget) && (
        <div class="rollout-next" data-testid="rollout-next">
          {next && <strong data-testid="rollout-waits-for">{next}</strong>}
          {errorBudget && <span class="muted" data-testid="rollout-error-budget">{errorBudget}</span>}
        </div>
      )}
      {r.state === "running" && r.hang && (
        <div class="result result-error rollout-hang" role="alert" data-testid="rollout-hang" data-devices={r.hang.devices}>
          <strong>
            Wave {r.hang.wave + 1} has not moved for {r.hang.minutes === 1 ? "a minute" : `${num(r.hang.minutes)} minutes`}
          </strong>{" "}
          (no change since <Time at={r.hang.since} />): {num(r.hang.devices)} {r.hang.devices === 1 ? "device" : "devices"} did not move:{" "}
          <span class="mono">{r.hang.sample.join(", ")}</span>
          {r.hang.devices > r.hang.sample.length ? ` and ${num(r.hang.devices - r.hang.sample.length)} more` : ""}.
        </div>
      )}
      <div class="waves">
        {r.waves.map((w, i) => (
          <WaveBar key={i} wave={w} label={waveLabel(w, i)} current={i === r.currentWave && !final} />
        ))}
        <div class="wave wave-total" data-testid="rollout-total">
          <span class="wave-label">All</span>
          <Bar wave={r.total} label="All waves" />
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
              <span class="muted"><Time at={e.at} seconds /></span> {e.message}
            </li>
          ))}
        </ol>
      </details>
    </article>
  );
}

/** The rollouts of the active customer, newest first, live. */
export function RolloutsTab({
  home,
  revision,
  onNotice,
  linked = null,
}: {
  home: FleetHome;
  revision: number;
  onNotice: (n: Notice) => void;
  /** A `dcs-console://rollout/<id>` link to show: its card is scrolled to and marked. */
  linked?: Link | null;
}) {
  const { answer: list, error, again } = useFollow(revision, () => ipc.rollouts());
  // The states last shown: a rollout that paused, completed or was aborted by itself since says
  // so in the banner (which a "Started the rollout" line must not outlive).
  const shown = useRef<Map<string, string> | null>(null);

  useEffect(() => {
    if (!list) return;
    const before = shown.current;
    shown.current = new Map(list.map((r) => [r.id, r.state]));
    if (before) {
      const changed = list.find((r) => before.has(r.id) && before.get(r.id) !== r.state);
      const n = changed && changeNotice(changed);
      if (n) onNotice(n);
    }
  }, [list]);

  // The linked rollout, once the list is read: scrolled to, or said to be missing.
  const linkShown = useRef<Link | null>(null);
  useEffect(() => {
    if (!linked || !list || linkShown.current === linked) return;
    linkShown.current = linked;
    if (list.some((r) => r.id === linked.id)) {
      document.querySelector(`[data-testid="rollout"][data-id="${CSS.escape(linked.id)}"]`)?.scrollIntoView({ block: "start" });
    } else {
      onNotice({ kind: "error", text: `Rollout ${linked.id} is not among this customer's rollouts in the fleet database.` });
    }
  }, [linked, list]);

  if (error) return <ErrorBox error={error} onRetry={again} />;
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
      <Legend />
      {list.map((r) => (
        <RolloutCard
          key={r.id}
          r={r}
          linked={linked?.id === r.id}
          onChanged={(after) => {
            // The operator's own change is said by the card, not again as news.
            shown.current?.set(after.id, after.state);
            again();
          }}
          onNotice={onNotice}
        />
      ))}
    </div>
  );
}
