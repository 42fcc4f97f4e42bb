import { useState } from "preact/hooks";
import type { DownlinkView, Outcome } from "../../ipc";

/** A downlink's status as a coloured badge; the explanation (from Rust) in its tooltip. */
export function StatusBadge({ status, outcome, title }: { status: string; outcome: Outcome; title?: string }) {
  return (
    <span class={`status-badge status-${outcome}`} title={title} data-testid="status-badge">
      {status}
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
        Downlink <code>{downlink.id}</code> to <code>{downlink.device}</code>.
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
        cancelled, and the list shows it when it lands. Behaviour per status is the simulator's assumption A-29.
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
