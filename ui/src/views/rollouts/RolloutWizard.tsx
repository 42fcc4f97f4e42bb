import { useEffect, useRef, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { Field } from "../../components/Field";
import { Modal, ModalCancel } from "../../components/Modal";
import { errorMessage, ipc, type DeviceChoice, type FleetHome, type LateDevices, type ModuleOverview, type PlanPreview, type RolloutPlan, type RolloutView } from "../../ipc";
import { isChanged } from "../../lib/layers";
import { refreshRolloutCounts } from "../../lib/rolloutCounts";
import { compareVersions, downgradeOf, downgradeText, newestVersion } from "../../lib/version";
import { useSession } from "../../session";
import { choiceText, lateText, localZone, num, parsePercent, parseWaves, retryOf, retryText, type ScheduleDraft, scheduleOf, scheduleText } from "./fleet";
import { budgetText, pauseText } from "./progress";
import { RehearsalPanel } from "./Rehearsal";
import { ScheduleFields } from "./ScheduleFields";

type Mode = "all" | "query" | "list";

/**
 * Plans a rollout: module, package version (those with a firmware file), devices (all of the
 * module, the device table's filter or selection, or a pasted list of ids in any form), waves
 * and thresholds. Rust previews it as it is typed (each broken rule next to its field, the
 * devices per wave); starting asks first, naming the customer.
 *
 * A version older than what some devices run is a downgrade: never the default (that is the
 * newest version with a file, unless devices already run a newer one), marked in the list, the
 * preview and the confirmation, which then asks for the word typed.
 */
export function RolloutWizard({
  home,
  moduleId: initialModule,
  choice,
  initialVersion,
  initialWaves,
  onClose,
  onStarted,
}: {
  home: FleetHome;
  moduleId: string | null;
  choice: DeviceChoice | null;
  /** The version to start with (else the newest with a file that is no downgrade). */
  initialVersion?: string;
  /** The waves to start with (else 1, 10, 50, 100). */
  initialWaves?: string;
  onClose: () => void;
  onStarted: (r: RolloutView) => void;
}) {
  const { info } = useSession();
  const [confirmElement, confirm] = useConfirm();
  const [moduleId, setModuleId] = useState(initialModule ?? home.modules[0]?.moduleId ?? "");
  const [overview, setOverview] = useState<ModuleOverview | null>(null);
  const [version, setVersion] = useState("");
  const [versionPicked, setVersionPicked] = useState(false);
  const [mode, setMode] = useState<Mode>(choice?.kind ?? "all");
  const [list, setList] = useState(choice?.kind === "list" ? choice.text : "");
  const [wavesText, setWavesText] = useState(initialWaves ?? "1, 10, 50, 100");
  const [successText, setSuccessText] = useState("95");
  const [errorText, setErrorText] = useState("5");
  const [scheduled, setScheduled] = useState(false);
  const [scheduleDraft, setScheduleDraft] = useState<ScheduleDraft>(() => ({
    timeZone: localZone(),
    startAt: "",
    windows: [],
    minutesBetweenWaves: "0",
  }));
  const [approval, setApproval] = useState(false);
  const [late, setLate] = useState<LateDevices>("none");
  const [hangText, setHangText] = useState("120");
  const [retriesText, setRetriesText] = useState("0");
  const [retryDelayText, setRetryDelayText] = useState("5");
  const [neverForText, setNeverForText] = useState("signature, incompatible, not enough free flash");
  // The last preview, with the plan it is for: shown only while that is still the plan (not for
  // the moment between a change and the check of it starting).
  const [previewed, setPreview] = useState<(PlanPreview & { planKey: string }) | null>(null);
  const [previewing, setPreviewing] = useState(false);
  const [starting, setStarting] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const seq = useRef(0);

  useEffect(() => {
    let alive = true;
    setOverview(null);
    ipc.fleetOverview(moduleId).then(
      (o) => {
        if (!alive) return;
        setOverview(o);
        // Default (also after another module is chosen): the newest version with a file,
        // unless it is older than what some devices of the module run (a downgrade is only
        // ever chosen by hand); else none.
        const newest = newestVersion(o.packages.filter((p) => p.hasFile).map((p) => p.version));
        const asked = initialVersion && o.module.moduleId === initialModule && o.packages.some((p) => p.version === initialVersion && p.hasFile);
        setVersion(asked ? initialVersion : newest !== null && !downgradeOf(newest, runningOf(o)) ? newest : "");
      },
      () => alive && setOverview(null),
    );
    return () => {
      alive = false;
    };
  }, [moduleId]);

  // Local reading of the numbers; every rule is checked by Rust's preview.
  const waves = parseWaves(wavesText);
  const success = parsePercent(successText);
  const error = parsePercent(errorText);
  const local: Record<string, string> = {};
  if ("error" in waves) local.waves = waves.error;
  if (success === null) local.successThreshold = "must be a percentage from 0 to 100";
  if (error === null) local.errorThreshold = "must be a percentage from 0 to 100";
  if (mode === "list" && !list.trim()) local.devices = "paste at least one device id";
  const scheduleRead = scheduled ? scheduleOf(scheduleDraft) : null;
  if (scheduleRead && "error" in scheduleRead) local[scheduleRead.field] = scheduleRead.error;
  const schedule = scheduleRead && "schedule" in scheduleRead ? scheduleRead.schedule : null;
  const hangMinutes = /^\d+$/.test(hangText.trim()) ? Number(hangText.trim()) : null;
  if (hangMinutes === null) local.hangMinutes = "must be a whole number of minutes (0: never warn)";
  const retry = retryOf(retriesText, retryDelayText, neverForText);
  if ("field" in retry) local[retry.field] = retry.error;

  const devices: DeviceChoice =
    mode === "all"
      ? { kind: "all" }
      : mode === "list"
        ? { kind: "list", text: list }
        : choice?.kind === "query"
          ? { ...choice, query: { ...choice.query, moduleId } }
          : { kind: "all" };
  const plan: RolloutPlan | null =
    Object.keys(local).length === 0 && "waves" in waves && success !== null && error !== null && version
      ? { moduleId, version, devices, waves: waves.waves, successThreshold: success, errorThreshold: error, schedule, approval, hangMinutes, retry: "policy" in retry ? retry.policy : null, late: mode === "list" ? "none" : late }
      : null;
  const planKey = JSON.stringify(plan);
  const preview = previewed && previewed.planKey === planKey ? previewed : null;

  useEffect(() => {
    if (!plan) {
      // Nothing to check until the fields read: no preview, and none under way.
      seq.current++;
      setPreview(null);
      setPreviewing(false);
      return;
    }
    const mine = ++seq.current;
    setPreviewing(true);
    const t = setTimeout(() => {
      ipc.rolloutPreview(plan).then(
        (p) => mine === seq.current && (setPreview({ ...p, planKey }), setFailure(null)),
        (e) => mine === seq.current && (setPreview(null), setFailure(errorMessage(e))),
      ).finally(() => mine === seq.current && setPreviewing(false));
    }, 250);
    return () => clearTimeout(t);
  }, [planKey]);

  // Older than what devices run: in the list against the module's devices, in the preview and
  // the confirmation against the chosen ones.
  const moduleRunning = overview ? runningOf(overview) : [];
  const downgrade = preview && plan ? downgradeOf(plan.version, preview.running) : null;
  const packages = [...(overview?.packages ?? [])].sort((a, b) => compareVersions(b.version, a.version));

  const [initial] = useState(() => ({ moduleId, mode, list, wavesText, successText, errorText, scheduled, scheduleDraft, approval, late, hangText, retriesText, retryDelayText, neverForText }));
  const dirty = versionPicked || isChanged(initial, { moduleId, mode, list, wavesText, successText, errorText, scheduled, scheduleDraft, approval, late, hangText, retriesText, retryDelayText, neverForText });

  const problems: Record<string, string> = { ...local };
  for (const p of preview?.problems ?? []) problems[p.field] ??= p.rule;
  const ready = !!plan && !!preview && preview.problems.length === 0 && !previewing;
  const module = home.modules.find((m) => m.moduleId === moduleId);

  const start = async () => {
    if (!plan || !preview || !info) return;
    const ok = await confirm({
      title: downgrade ? "Start this downgrade?" : "Start this rollout?",
      body: (
        <>
          {downgrade && (
            <p class="downgrade" data-testid="confirm-downgrade">
              {plan.version} — {downgradeText(downgrade)}.
            </p>
          )}
          <p>
            Sets the target version of <strong>{preview.moduleName}</strong> to <strong class="mono">{plan.version}</strong> on{" "}
            <strong data-testid="confirm-devices">{num(preview.devices)}</strong> devices ({choiceText(plan.devices)}), in{" "}
            {preview.waveSizes.length} waves:
          </p>
          <ol class="confirm-waves" data-testid="confirm-waves">
            {preview.waveSizes.map((n, i) => {
              const b = preview.waveBudgets[i];
              return (
                <li key={i}>
                  {plan.waves[i]}%: {num(n)} devices
                  {i === 0
                    ? preview.calendar[0]?.waits
                      ? ` at ${preview.calendar[0].local}`
                      : " at once"
                    : ` once wave ${i} has ${num(preview.waveBudgets[i - 1]?.needed ?? 0)} ok${plan.approval ? " and you approve it" : ""}${
                        preview.calendar[i]?.waits ? `, at ${preview.calendar[i].local} at the earliest` : ""
                      }`}
                  {b && (
                    <span class="muted" data-testid="confirm-budget">
                      {" "}
                      · {budgetText(b, plan.successThreshold)}; {pauseText(b, i)}
                    </span>
                  )}
                </li>
              );
            })}
          </ol>
          <p>
            It pauses when more than {plan.errorThreshold}% of the devices of the started waves failed. Devices download and
            install the firmware as soon as their target is set (<span class="status-error">device-disrupting</span>).
          </p>
          {schedule && <p data-testid="confirm-schedule">Waves start only as scheduled: {scheduleText(schedule)}.</p>}
          {plan.late !== "none" && (
            <p data-testid="confirm-late">
              Devices that appear after the start and match the choice are updated too: {lateText(plan.late ?? "none")}.
            </p>
          )}
          {"policy" in retry && retry.policy && <p data-testid="confirm-retry">Failed devices get their target set again: {retryText(retry.policy)}.</p>}
          {preview.updatingElsewhere > 0 && (
            <p class="status-warn">{num(preview.updatingElsewhere)} of them are updating to another version now: that update is replaced.</p>
          )}
        </>
      ),
      confirmLabel: downgrade ? `Downgrade ${num(preview.devices)} devices` : `Start rollout to ${num(preview.devices)} devices`,
      danger: true,
      typeToConfirm: downgrade ? "downgrade" : undefined,
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    setStarting(true);
    setFailure(null);
    try {
      // A downgrade was confirmed by typing it above; the start refuses one otherwise.
      onStarted(await ipc.rolloutStart(plan, downgrade !== null, info.acting?.id ?? null));
      refreshRolloutCounts();
    } catch (e) {
      setFailure(`The rollout was not started: ${errorMessage(e)}`);
    } finally {
      setStarting(false);
    }
  };

  return (
    <Modal testid="rollout-wizard" labelledBy="wizard-title" onClose={onClose} busy={starting} dirty={dirty} wide>
      {confirmElement}
      <h2 id="wizard-title">New rollout</h2>
      <div class="form wizard">
        <div class="form-grid">
          <Field id="wizard-module" label="Module" error={problems.moduleId}>
            <select id="wizard-module" data-testid="wizard-module" onChange={(e) => setModuleId(e.currentTarget.value)}>
              {home.modules.map((m) => (
                <option key={m.moduleId} value={m.moduleId} selected={m.moduleId === moduleId}>
                  {m.name} ({num(m.devices)} devices)
                </option>
              ))}
            </select>
          </Field>
          <Field id="wizard-version" label="Target version" error={problems.version}
            hint={overview ? `packages of this module; most devices run ${overview.module.topVersion ?? "no version"}` : "reading the packages…"}>
            <select
              id="wizard-version"
              data-testid="wizard-version"
              data-module={overview?.module.moduleId}
              onChange={(e) => {
                setVersion(e.currentTarget.value);
                setVersionPicked(true);
              }}
            >
              {version === "" && (
                <option value="" selected disabled>
                  {overview ? "Choose a version" : ""}
                </option>
              )}
              {packages.map((p) => {
                const down = downgradeOf(p.version, moduleRunning);
                return (
                  <option key={p.version} value={p.version} selected={p.version === version} disabled={!p.hasFile}
                    data-downgrade={down ? "true" : undefined}>
                    {p.version}
                    {down ? ` — ${downgradeText(down, "the module's devices")}` : ""}
                    {p.hasFile ? "" : " (no firmware file)"}
                  </option>
                );
              })}
            </select>
          </Field>
        </div>

        <fieldset class="wizard-devices">
          <legend>Devices</legend>
          <label class="check">
            <input type="radio" name="devices" checked={mode === "all"} onChange={() => setMode("all")} data-testid="devices-all" />
            <span>Every device of the module{module ? ` (${num(module.devices)})` : ""}</span>
          </label>
          {choice?.kind === "query" && (
            <label class="check">
              <input type="radio" name="devices" checked={mode === "query"} onChange={() => setMode("query")} data-testid="devices-query" />
              <span>From the device table: {choiceText(choice)}</span>
            </label>
          )}
          <label class="check">
            <input type="radio" name="devices" checked={mode === "list"} onChange={() => setMode("list")} data-testid="devices-list" />
            <span>A list of device ids (any of the seven forms, one per line or separated by commas)</span>
          </label>
          {mode === "list" && (
            <Field id="wizard-list" label="Device ids" error={problems.devices}>
              <textarea id="wizard-list" rows={5} class="mono" data-testid="wizard-list" value={list}
                placeholder={"imei:354000000000001\nurn:dev:deveui:70B3D57ED0000001\n3f1c…"} onInput={(e) => setList(e.currentTarget.value)} />
            </Field>
          )}
          <Field id="wizard-late" label="Devices that appear after the start" error={problems.late}
            hint={mode === "list" ? "a pasted list is fixed" : "first seen by a later refresh and matching the choice above"}>
            <select id="wizard-late" data-testid="wizard-late" value={mode === "list" ? "none" : late} disabled={mode === "list"}
              onChange={(e) => setLate(e.currentTarget.value as LateDevices)}>
              <option value="none">Left out</option>
              <option value="current">Join the wave under way</option>
              <option value="next">Join the next wave</option>
            </select>
          </Field>
          {mode !== "list" && problems.devices && (
            <span class="field-error" role="alert" data-testid="error-wizard-devices">
              {problems.devices}
            </span>
          )}
        </fieldset>

        <div class="form-grid">
          <Field id="wizard-waves" label="Waves (cumulative % of the devices)" error={problems.waves} hint="for example 1, 10, 50, 100">
            <input id="wizard-waves" type="text" data-testid="wizard-waves" value={wavesText} onInput={(e) => setWavesText(e.currentTarget.value)} />
          </Field>
          <Field id="wizard-success" label="Success threshold %" error={problems.successThreshold} hint="of a wave's devices updated before the next wave starts">
            <input id="wizard-success" type="text" inputMode="decimal" data-testid="wizard-success" value={successText} onInput={(e) => setSuccessText(e.currentTarget.value)} />
          </Field>
          <Field id="wizard-error" label="Error threshold %" error={problems.errorThreshold} hint="failed devices (of the started waves) above which it pauses">
            <input id="wizard-error" type="text" inputMode="decimal" data-testid="wizard-error" value={errorText} onInput={(e) => setErrorText(e.currentTarget.value)} />
          </Field>
        </div>

        <fieldset class="wizard-schedule">
          <legend>When waves start</legend>
          <label class="check">
            <input type="checkbox" checked={approval} onChange={(e) => setApproval(e.currentTarget.checked)} data-testid="wizard-approval" />
            <span>Wait for my approval before each wave after the first (“Continue”, with the wave's figures)</span>
          </label>
          <label class="check">
            <input type="checkbox" checked={scheduled} onChange={(e) => setScheduled(e.currentTarget.checked)} data-testid="wizard-scheduled" />
            <span>Schedule: a start time, maintenance windows, time between waves</span>
          </label>
          {scheduled && <ScheduleFields draft={scheduleDraft} onChange={setScheduleDraft} problems={problems} />}
          <div class="form-grid">
            <Field id="wizard-hang" label="Warn when a wave has not moved for (minutes)" error={problems.hangMinutes} hint="names the devices that did not move; 0: never">
              <input id="wizard-hang" type="text" inputMode="numeric" data-testid="wizard-hang" value={hangText} onInput={(e) => setHangText(e.currentTarget.value)} />
            </Field>
          </div>
        </fieldset>

        <fieldset class="wizard-schedule">
          <legend>Retries of failed devices</legend>
          <div class="form-grid">
            <Field id="wizard-retries" label="Retries per device" error={problems["retry.times"]} hint="target set again after a failure; 0: never">
              <input id="wizard-retries" type="text" inputMode="numeric" data-testid="wizard-retries" value={retriesText} onInput={(e) => setRetriesText(e.currentTarget.value)} />
            </Field>
            <Field id="wizard-retry-delay" label="Minutes after the failure" error={problems["retry.delayMinutes"]} hint="a retried device counts as updating, not failed">
              <input id="wizard-retry-delay" type="text" inputMode="numeric" data-testid="wizard-retry-delay" value={retryDelayText}
                disabled={retriesText.trim() === "0"} onInput={(e) => setRetryDelayText(e.currentTarget.value)} />
            </Field>
            <Field id="wizard-never-for" label="Never for failures mentioning" error={problems["retry.neverFor"]} hint="comma-separated words of the failure's reason">
              <input id="wizard-never-for" type="text" data-testid="wizard-never-for" value={neverForText}
                disabled={retriesText.trim() === "0"} onInput={(e) => setNeverForText(e.currentTarget.value)} />
            </Field>
          </div>
        </fieldset>

        <div class="card wizard-preview" data-testid="wizard-preview" aria-live="polite">
          {previewing ? (
            <span class="muted">Checking the plan…</span>
          ) : preview && preview.problems.length === 0 && plan ? (
            <>
              {downgrade && (
                <p class="downgrade" data-testid="preview-downgrade">
                  {plan.version} — {downgradeText(downgrade)}.
                </p>
              )}
              <strong data-testid="preview-devices">{num(preview.devices)} devices</strong> get {plan.version}
              {preview.alreadyOnVersion > 0 && <span class="muted"> ({num(preview.alreadyOnVersion)} already run it and are left out)</span>}
              {preview.inOtherRollouts > 0 && (
                <p class="status-warn" data-testid="preview-in-other-rollouts" data-count={preview.inOtherRollouts}>
                  {num(preview.inOtherRollouts)} chosen devices are left out: a running or paused rollout of this module already has them (
                  {preview.otherRollouts.map(([id, n]) => `${id.slice(0, 8)}…: ${num(n)}`).join(", ")}). Two rollouts never target the same device.
                </p>
              )}
              <ol class="preview-waves" data-testid="preview-waves">
                {preview.waveSizes.map((n, i) => {
                  const b = preview.waveBudgets[i];
                  return (
                    <li key={i}>
                      Wave {i + 1} ({plan.waves[i]}%): {num(n)} devices
                      {preview.calendar[i] && (
                        <span class={preview.calendar[i].waits ? "wave-when wave-when-waits" : "wave-when"} data-testid="preview-calendar"
                          data-at={preview.calendar[i].at} data-waits={preview.calendar[i].waits ? "yes" : "no"}>
                          {" "}
                          · {i === 0 ? "starts" : "can start"} {preview.calendar[i].waits || i > 0 ? preview.calendar[i].local : "at once"}
                          {i > 0 ? " at the earliest" : ""}
                        </span>
                      )}
                      {b && (
                        <span class="wave-budget" data-testid="preview-budget">
                          {" "}
                          — {budgetText(b, plan.successThreshold)}
                          <span class="muted">; {pauseText(b, i)}</span>
                        </span>
                      )}
                    </li>
                  );
                })}
              </ol>
              {preview.updatingElsewhere > 0 && (
                <p class="status-warn">{num(preview.updatingElsewhere)} devices are updating to another version: their update is replaced.</p>
              )}
            </>
          ) : (
            <span class="muted">{Object.keys(problems).length ? "Fix the fields marked above." : "Fill in the plan."}</span>
          )}
        </div>
        <RehearsalPanel plan={plan} ready={ready} />
        {failure && (
          <div class="result result-error" role="alert" data-testid="wizard-failure">
            {failure}
          </div>
        )}
        <div class="form-actions">
          <span class="spacer" />
          <ModalCancel disabled={starting}>Cancel</ModalCancel>
          <button type="button" class="button button-primary" onClick={start} disabled={!ready || starting} data-testid="wizard-start">
            {starting
              ? "Starting…"
              : preview && ready
                ? `${downgrade ? "Start downgrade" : "Start rollout"} to ${num(preview.devices)} devices…`
                : "Start rollout…"}
          </button>
        </div>
      </div>
    </Modal>
  );
}

/** The versions the module's devices run (from the overview; devices without one left out). */
function runningOf(o: ModuleOverview): { version: string; devices: number }[] {
  return o.byVersion.filter((c) => c.key !== "none").map((c) => ({ version: c.key, devices: c.count }));
}
