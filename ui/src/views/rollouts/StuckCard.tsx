import { useEffect, useRef, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import type { Notice } from "../../components/States";
import { Time } from "../../components/Time";
import { errorMessage, IpcError, ipc, type DeviceChoice, type DeviceQuery } from "../../ipc";
import { useFollow } from "../../lib/follow";
import { useSession } from "../../session";
import { hoursText, num } from "./fleet";
import { HoursField } from "./HoursField";

/**
 * A module's stuck devices (Rust's fleet::stuck: short of their target, status unchanged for
 * longer than the module's threshold), with the threshold to set and what to do about them:
 * show them, roll out to only them again, or reset their targets (asked first, naming the
 * customer).
 */
export function StuckCard({
  moduleId,
  moduleName,
  revision,
  canRollOut,
  onDevices,
  onRollOut,
  onNotice,
}: {
  moduleId: string;
  moduleName: string;
  revision: number;
  canRollOut: boolean;
  onDevices: (q: DeviceQuery) => void;
  onRollOut: (choice: DeviceChoice, version: string | undefined) => void;
  onNotice: (n: Notice) => void;
}) {
  const { info } = useSession();
  const [confirmElement, confirm] = useConfirm();
  const [hours, setHours] = useState("");
  const [hoursError, setHoursError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const shownFor = useRef<string | null>(null);

  const { answer: stuck, error, again } = useFollow(revision, () => ipc.fleetStuck(moduleId), { key: moduleId });
  useEffect(() => {
    if (!stuck) return;
    // The threshold as set, unless one is being typed for this module.
    if (shownFor.current !== stuck.moduleId) setHours(String(stuck.hours));
    shownFor.current = stuck.moduleId;
  }, [stuck]);
  useEffect(() => {
    if (error) onNotice({ kind: "error", text: `The stuck devices could not be read: ${errorMessage(error)}` });
  }, [error]);

  if (!stuck || stuck.moduleId !== moduleId) return null;
  const query: DeviceQuery = { moduleId, stuckBefore: stuck.before };

  const saveHours = async () => {
    try {
      const s = await ipc.fleetSetStuckHours(moduleId, hours.trim() === "" ? Number.NaN : Number(hours));
      again(); // the devices stuck at the new threshold
      setHours(String(s.hours));
      setHoursError(null);
    } catch (e) {
      setHoursError(e instanceof IpcError && e.field === "stuckHours" ? `Stuck after: ${e.message}` : errorMessage(e));
    }
  };

  const reset = async () => {
    const customer = info?.acting ?? null;
    const ok = await confirm({
      title: `Reset the targets of ${num(stuck.devices)} stuck ${stuck.devices === 1 ? "device" : "devices"}?`,
      body: (
        <>
          <p>
            The target version of every device of <strong>{moduleName}</strong> that is short of its target with no status change for
            over {hoursText(stuck.hours)} is reset (<span class="status-error">device-disrupting</span>: the service cancels their
            updates).
          </p>
          <p data-testid="stuck-reset-what">
            {num(stuck.devices)} {stuck.devices === 1 ? "device" : "devices"}: {stuck.byStatus.map((c) => `${num(c.count)} ${c.label}`).join(", ")}.
          </p>
        </>
      ),
      confirmLabel: `Reset ${num(stuck.devices)} targets`,
      danger: true,
      typeToConfirm: "reset",
      acting: info ? { profile: info.profile, customer } : undefined,
    });
    if (!ok) return;
    setBusy(true);
    try {
      const out = await ipc.fleetResetTargets(moduleId, query, stuck.devices, customer?.id ?? null);
      onNotice(
        out.failed === 0
          ? { kind: "ok", text: `Reset the targets of ${num(out.reset)} devices of ${moduleName}.` }
          : {
              kind: "error",
              text: `Reset ${num(out.reset)} targets; ${num(out.failed)} failed: ${out.failures.slice(0, 3).join("; ")}${out.failed > 3 ? "; …" : ""}`,
            },
      );
    } catch (e) {
      onNotice({ kind: "error", text: `Nothing was reset: ${errorMessage(e)}` });
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class={stuck.devices > 0 ? "card stuck stuck-some" : "card stuck"} data-testid="stuck-card" data-count={stuck.devices} data-before={stuck.before}>
      <div class="card-head">
        <h3>Stuck devices</h3>
        <span class="muted" data-testid="stuck-text">
          {stuck.devices === 0 ? (
            <>No device is short of its target with its status unchanged for over {hoursText(stuck.hours)}.</>
          ) : (
            <>
              <strong>{num(stuck.devices)}</strong> {stuck.devices === 1 ? "device is" : "devices are"} short of their target with no status
              change for over {hoursText(stuck.hours)}
              {stuck.oldest && (
                <>
                  {" "}
                  (the oldest since <Time at={stuck.oldest} />)
                </>
              )}
              : {stuck.byStatus.map((c) => `${num(c.count)} ${c.label}`).join(", ")}
            </>
          )}
        </span>
      </div>
      <div class="filters stuck-actions">
        <form
          class="stuck-hours"
          onSubmit={(e) => {
            e.preventDefault();
            void saveHours();
          }}
        >
          <HoursField id="stuck-hours" label="Stuck after (hours, this module)" value={hours} invalid={!!hoursError} onInput={setHours} />
          <button type="submit" class="button button-small" data-testid="stuck-hours-save" disabled={hours === String(stuck.hours)}>
            Set
          </button>
        </form>
        <span class="spacer" />
        {stuck.devices > 0 && (
          <>
            <button type="button" class="button button-small" data-testid="stuck-show" onClick={() => onDevices(query)}>
              Show them
            </button>
            <button
              type="button"
              class="button button-small"
              data-testid="stuck-rollout"
              disabled={!canRollOut || busy}
              title={canRollOut ? `A rollout of their target (${stuck.byTarget[0]?.key ?? "?"}) to only these devices` : "Rollouts need the profile's set-target operation"}
              onClick={() => onRollOut({ kind: "query", query, selection: null }, stuck.byTarget[0]?.key)}
            >
              Roll out to them again…
            </button>
            <button type="button" class="button button-small button-danger" data-testid="stuck-reset" disabled={!canRollOut || busy} onClick={reset}>
              {busy ? "Resetting…" : "Reset their targets…"}
            </button>
          </>
        )}
      </div>
      {hoursError && (
        <div class="result result-error" role="alert" data-testid="stuck-hours-error">
          {hoursError}
        </div>
      )}
      {confirmElement}
    </div>
  );
}
