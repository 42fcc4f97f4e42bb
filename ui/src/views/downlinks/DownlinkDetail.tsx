import { useEffect, useState } from "preact/hooks";
import { DeviceLabel } from "../../components/DeviceLabel";
import { Modal } from "../../components/Modal";
import { ErrorBox, Loading } from "../../components/States";
import { ipc, type DownlinkDetail, type DownlinkKind, type DownlinkView } from "../../ipc";
import { Time } from "../../components/Time";
import { watchDownlink } from "../../lib/downlinkWatch";
import { formatLocal, formatTimestamp } from "../../lib/format";
import { StatusBadge } from "./parts";
import { DETAIL_REFRESH_MS, formatCountdown, retriesLabel, timeLeft } from "./timing";

/** The local time of day of a timestamp, `19:24:42`, with the UTC time in its tooltip. */
function TimeOfDay({ at }: { at: string | null }) {
  if (!at) return null;
  return (
    <time dateTime={at} title={`${formatTimestamp(at, true)} UTC`}>
      {formatLocal(at, true).split(" ")[1] ?? ""}
    </time>
  );
}

/**
 * One downlink: its status explained, the statuses this console saw it in (a timeline kept in
 * Rust memory while the app runs: the service only tells the current one), retries used, the
 * time left before its feedback timeout counting down on the service's clock, the failure
 * reason in words, and Cancel. Kept current until the downlink is final by a watch in Rust that
 * asks every second and pushes each change.
 */
export function DownlinkDetailDialog({
  kind,
  id,
  kindLabel,
  onClose,
  onCancel,
}: {
  kind: DownlinkKind;
  id: string;
  kindLabel: string;
  onClose: () => void;
  onCancel: (d: DownlinkView) => void;
}) {
  const [detail, setDetail] = useState<{ d: DownlinkDetail; at: number } | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [now, setNow] = useState(Date.now());
  const [round, setRound] = useState(0);

  useEffect(() => {
    let live = true;
    ipc.getDownlink(kind, id).then(
      (d) => {
        if (!live) return;
        setDetail({ d, at: Date.now() });
        setFailure(null);
      },
      (e) => live && setFailure(e),
    );
    return () => {
      live = false;
    };
  }, [kind, id, round]);

  const final = detail?.d.downlink.isFinal ?? false;
  // While it is in progress (also after a failed first read) Rust asks again and pushes each
  // change; the countdown ticks here.
  const known = detail !== null || failure !== null;
  useEffect(() => {
    if (final || !known) return;
    return watchDownlink(kind, id, (p) => {
      if (p.ok) {
        setDetail({ d: p.value, at: Date.now() });
        setFailure(null);
      } else {
        setFailure(p.error);
      }
    });
  }, [kind, id, final, known]);
  useEffect(() => {
    if (final) return;
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, [final]);

  const v = detail?.d.downlink;
  const clock = detail?.d.clock;
  const left = v && clock && detail ? timeLeft(v.deadline, clock, detail.at, now) : null;
  const countdown = formatCountdown(left);

  return (
    <Modal testid="downlink-detail" labelledBy="downlink-detail-title" onClose={onClose} wide>
      <div class="detail-head">
        <h2 id="downlink-detail-title">
          {kindLabel} downlink {v && <StatusBadge status={v.status} outcome={v.outcome} />}
        </h2>
        {v && (
          <span class={final ? "live" : "live live-on"} data-testid="detail-live" data-active={final ? "false" : "true"}>
            <span class="live-dot" aria-hidden="true" />
            {final ? "Final: no further change" : `Live: refreshing every ${DETAIL_REFRESH_MS / 1000} s until final`}
          </span>
        )}
      </div>
      {!v && !failure && <Loading label="Loading the downlink…" />}
      {failure !== null && <ErrorBox error={failure} onRetry={() => setRound((r) => r + 1)} />}
      {v && clock && (
        <div class="detail-grid">
          <section>
            <p class="status-words" data-testid="status-explanation">
              <strong>{v.status}</strong>: {v.statusExplanation}.
            </p>
            {/* A reason that repeats the status (CANCELLED, CANCELLED) is explained once, above. */}
            {v.failureReason && v.failureReason !== v.status && (
              <p class={v.outcome === "cancelled" ? "result result-neutral" : "result result-error"} data-testid="failure-explanation">
                <strong>{v.failureReason}</strong>: {v.failureExplanation}.
              </p>
            )}
            <dl class="facts">
              <dt>Id</dt>
              <dd>
                <code>{v.id}</code>
              </dd>
              <dt>Device</dt>
              <dd data-testid="detail-device">
                <DeviceLabel id={v.device} />
              </dd>
              {v.externalReference && (
                <>
                  <dt>Reference</dt>
                  <dd>{v.externalReference}</dd>
                </>
              )}
              <dt>Retries</dt>
              <dd data-testid="retries">{retriesLabel(v.retryCount, v.retryLimit) ?? "not a field of this kind"}</dd>
              <dt>Feedback timeout</dt>
              <dd>
                <code>{v.feedbackTimeout ?? "—"}</code>
                {v.deadline && (
                  <span class="muted">
                    {" "}
                    · until <Time at={v.deadline} seconds />
                  </span>
                )}
              </dd>
              <dt>Time left</dt>
              <dd data-testid="time-left">
                {final ? (
                  <span class="muted">not waiting any more (final)</span>
                ) : left !== null && left < 0 && v.deadline ? (
                  // Past its deadline the service may still change it; a countdown would only grow.
                  <span class="status-warn">
                    deadline passed <Time at={v.deadline} />; waiting for the service to close it
                  </span>
                ) : countdown ? (
                  <>
                    <strong class={left !== null && left < 0 ? "status-error" : undefined}>{countdown}</strong>
                    {clock.rate !== null && clock.rate !== 1 && <span class="muted"> · simulated clock, {clock.rate}× speed</span>}
                  </>
                ) : (
                  <span class="muted">unknown</span>
                )}
              </dd>
              <dt>Dry run</dt>
              <dd>{v.dryRun === null ? "—" : v.dryRun ? "yes: never sent to the device" : "no"}</dd>
              <dt>Created</dt>
              <dd data-testid="created-at">
                <Time at={v.createdAt} seconds />
              </dd>
              <dt>Modified</dt>
              <dd data-testid="modified-at">
                <Time at={v.modifiedAt} seconds />
              </dd>
            </dl>
          </section>
          <section aria-labelledby="timeline-title">
            <h3 id="timeline-title">Timeline</h3>
            <ol class="timeline" data-testid="timeline">
              <li class="tl-created">
                <span class="tl-dot" aria-hidden="true" />
                <div>
                  <strong>Created</strong>{" "}
                  <span class="muted">
                    <Time at={v.createdAt} seconds /> (service)
                  </span>
                </div>
              </li>
              {detail.d.observed.map((o, i) => (
                <li
                  key={`${o.status}-${i}`}
                  data-testid="timeline-status"
                  data-status={o.status}
                  data-retries={o.retryCount ?? 0}
                  class={final && i === detail.d.observed.length - 1 ? `tl-outcome-${v.outcome}` : undefined}
                >
                  <span class="tl-dot" aria-hidden="true" />
                  <div>
                    <strong>{o.status}</strong>
                    {o.retryCount ? <span class="muted"> · retry {o.retryCount}</span> : null}
                    <br />
                    <span class="muted small">
                      seen <TimeOfDay at={o.seenAt} /> (this computer)
                      {o.modifiedAt && (
                        <>
                          <br />
                          service: modified <Time at={o.modifiedAt} seconds />
                        </>
                      )}
                    </span>
                  </div>
                </li>
              ))}
            </ol>
            <p class="muted small">
              The service tells only the current status: these are the ones this console saw while it showed the
              downlink, kept in memory until the app closes.
            </p>
          </section>
        </div>
      )}
      {v && (
        <details class="raw-body">
          <summary>The service's answer (JSON)</summary>
          <pre class="body-preview">{v.body}</pre>
        </details>
      )}
      <div class="dialog-actions">
        {v && !final && (
          <button type="button" class="button button-danger-quiet" data-testid="detail-cancel" onClick={() => onCancel(v)}>
            Cancel downlink…
          </button>
        )}
        <span class="spacer" />
        <button type="button" class="button" onClick={onClose} data-testid="detail-close">
          Close
        </button>
      </div>
    </Modal>
  );
}
