import { useState } from "preact/hooks";
import { DeviceLabel } from "../../components/DeviceLabel";
import type { DownlinkView, KindInfo, Outcome } from "../../ipc";
import { downlinkBadge } from "../../lib/status";

/** A downlink's status as a coloured badge; the explanation (from Rust) in its tooltip. */
export function StatusBadge({ status, outcome, title }: { status: string; outcome: Outcome; title?: string }) {
  const badge = downlinkBadge(status, outcome);
  return (
    <span class={`status-badge status-${badge.tone}`} title={title} data-testid="status-badge" data-status={status}>
      {badge.label}
    </span>
  );
}

/**
 * The body of a cancellation's confirmation: what cancelling does now and what `forced`
 * changes, in the words Rust gives, and the forced choice itself (read through `forced`).
 */
export function CancelChoice({ downlink, forced }: { downlink: DownlinkView; forced: { current: boolean } }) {
  const [on, setOn] = useState(forced.current);
  const advice = downlink.cancel;
  return (
    <div class="cancel-choice">
      <p>
        Downlink <code>{downlink.id}</code> to device <DeviceLabel id={downlink.device} inline copy={false} />.
      </p>
      <p data-testid="cancel-plain">{advice.plain}</p>
      <label class={on ? "check forced-check forced-on" : "check forced-check"}>
        <input
          type="checkbox"
          checked={on}
          data-testid="cancel-forced"
          onChange={(e) => {
            forced.current = e.currentTarget.checked;
            setOn(e.currentTarget.checked);
          }}
        />
        <span>
          <strong>Forced</strong> (<code>forced=true</code>)
          <br />
          <span class="muted" data-testid="cancel-forced-why">
            {advice.forced}
          </span>
        </span>
      </label>
      <p class="muted small">
        The service accepts a cancellation for processing (202); only the status afterwards tells whether it was
        cancelled, and the list shows it when it lands.
      </p>
    </div>
  );
}

/** The sentences Rust gives for what sending does, and the exact body. */
export function SendSummary({ effect, body }: { effect: string[]; body: string }) {
  return (
    <>
      <ul class="effects" data-testid="confirm-effect">
        {effect.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ul>
      <pre class="body-preview" data-testid="confirm-body">
        {body}
      </pre>
    </>
  );
}

/**
 * The body of a cancellation of several downlinks: each one (device, status, what cancelling
 * does to it), whether they are connection-specific, and one `forced` choice, which applies to
 * those on their way to the device (forced changes nothing for the ones still queued).
 */
export function BulkCancelChoice({ downlinks, kind, forced }: { downlinks: DownlinkView[]; kind: KindInfo; forced: { current: boolean } }) {
  const [on, setOn] = useState(forced.current);
  const needs = downlinks.filter((d) => d.cancel.state !== "queued");
  return (
    <div class="cancel-choice bulk-cancel" data-testid="bulk-cancel-choice">
      <p data-testid="bulk-cancel-summary">
        <strong>
          {downlinks.length} {kind.label} downlink{downlinks.length === 1 ? "" : "s"}
        </strong>
        {kind.kind === "actuator"
          ? " (actuator-style: the service translates them with each device's encoder)."
          : ` — connection-specific (${kind.label}): each was sent in the connection's own format, bypassing the encoder.`}
      </p>
      <ul class="bulk-list" data-testid="bulk-cancel-list">
        {downlinks.map((d) => {
          const isForced = on && d.cancel.state !== "queued";
          return (
            <li key={d.id} data-testid="bulk-cancel-item" data-id={d.id} data-forced={isForced ? "true" : "false"}>
              <DeviceLabel id={d.device} copy={false} />
              <span class="muted">{d.status}</span>
              {isForced ? <span class="tag tag-forced">forced</span> : d.cancel.state === "queued" ? <span class="tag">queued: cancelled at once</span> : null}
            </li>
          );
        })}
      </ul>
      <label class={on ? "check forced-check forced-on" : "check forced-check"}>
        <input
          type="checkbox"
          checked={on}
          disabled={needs.length === 0}
          data-testid="bulk-cancel-forced"
          onChange={(e) => {
            forced.current = e.currentTarget.checked;
            setOn(e.currentTarget.checked);
          }}
        />
        <span>
          <strong>Forced</strong> for the {needs.length} already on {needs.length === 1 ? "its" : "their"} way (
          <code>forced=true</code>)
          <br />
          <span class="muted">
            {needs.length === 0
              ? "Every one is still queued: the service cancels them at once, forced is not needed."
              : "Stops them even though part may already have reached the device; without it the service may refuse them."}
          </span>
        </span>
      </label>
      <p class="muted small">
        Each is asked on its own; one refused does not stop the others, and the result lists each refusal.
      </p>
    </div>
  );
}
