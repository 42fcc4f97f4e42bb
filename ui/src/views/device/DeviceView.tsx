import "../downlinks/downlinks.css";
import "./device.css";
import { useEffect, useState } from "preact/hooks";
import { CopyButton } from "../../components/DeviceLabel";
import { ErrorBox, Loading } from "../../components/States";
import { Time } from "../../components/Time";
import { ipc, type DeviceDetail, type Link } from "../../ipc";
import { StatusBadge } from "../downlinks/parts";

/**
 * One device: everything the console knows of it (Rust `device_page`): its ids, its firmware
 * state per module with the states it left, the rollouts it was in, its downlinks of every kind
 * and its bindings. Each item opens its own screen (`onOpen`); a part the service did not answer
 * says so, and the rest is still shown.
 */
export function DeviceView({
  id,
  onBack,
  onOpen,
  onTable,
}: {
  id: string;
  onBack: () => void;
  onOpen: (link: Link) => void;
  /** Shows the device's rows in the Rollouts device table. */
  onTable: (id: string) => void;
}) {
  const [page, setPage] = useState<DeviceDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [gen, setGen] = useState(0);

  useEffect(() => {
    let live = true;
    setError(null);
    ipc.devicePage(id).then(
      (p) => live && setPage(p),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [id, gen]);

  const head = (
    <div class="view-head device-head">
      <button type="button" class="button button-quiet" onClick={onBack} data-testid="device-back">
        ← Back
      </button>
      <h1 id="device-title" data-testid="device-title">
        {page?.name ?? page?.uuid ?? id}
      </h1>
      {page && !page.known && (
        <span class="tag" title="The service's device listing does not hold this device: only its ids and states are known">
          not in the device listing
        </span>
      )}
      {page && (
        <span class="device-head-actions">
          <button type="button" class="button button-small" onClick={() => onTable(page.uuid)} data-testid="device-in-table">
            In the device table
          </button>
          <button type="button" class="button button-small" onClick={() => setGen((g) => g + 1)} data-testid="device-reload">
            Reload
          </button>
        </span>
      )}
    </div>
  );

  if (error) {
    return (
      <section class="view" aria-labelledby="device-title" data-testid="device-view">
        {head}
        <ErrorBox error={error} onRetry={() => setGen((g) => g + 1)} />
      </section>
    );
  }
  if (!page) {
    return (
      <section class="view" aria-labelledby="device-title" data-testid="device-view">
        {head}
        <Loading label="Reading what is known of this device…" />
      </section>
    );
  }

  return (
    <section class="view device-view" aria-labelledby="device-title" data-testid="device-view" data-uuid={page.uuid}>
      {head}
      {page.description && <p class="muted device-description">{page.description}</p>}
      {page.problems.map((p) => (
        <div key={p.part} class="notice notice-error" role="status" data-testid="device-problem">
          {p.part} could not be read: {p.message}
        </div>
      ))}

      <div class="device-grid">
        <section class="card" aria-labelledby="device-ids">
          <h2 id="device-ids">Ids</h2>
          <table class="table device-table" data-testid="device-ids">
            <tbody>
              {page.forms.map((f) => (
                <tr key={f.value}>
                  <th scope="row">{f.form}</th>
                  <td class="device-id-cell">
                    <code>{f.value}</code>
                    <CopyButton text={f.value} what={`the ${f.form}`} />
                  </td>
                </tr>
              ))}
              {page.barcode && (
                <tr>
                  <th scope="row">Barcode</th>
                  <td>
                    <code>{page.barcode}</code>
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        </section>

        <section class="card" aria-labelledby="device-rollouts">
          <h2 id="device-rollouts">Rollouts</h2>
          {page.rollouts.length === 0 ? (
            <p class="muted">Not part of any rollout this console ran.</p>
          ) : (
            <table class="table device-table" data-testid="device-rollouts">
              <thead>
                <tr>
                  <th scope="col">Rollout</th>
                  <th scope="col">Wave</th>
                  <th scope="col">Target set</th>
                  <th scope="col">Retries</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {page.rollouts.map((r) => (
                  <tr key={r.rolloutId}>
                    <td>
                      <button type="button" class="link-button" onClick={() => onOpen({ kind: "rollout", id: r.rolloutId })}>
                        {r.module ?? r.moduleId} {r.version}
                      </button>
                    </td>
                    <td>{r.wave}</td>
                    <td>{r.error ? <span class="danger-text" title={r.error}>failed</span> : <Time at={r.setAt} />}</td>
                    <td data-testid="device-rollout-retries" title={r.lastFailure ? `last failure: ${r.lastFailure}` : undefined}>
                      {r.retries > 0 ? r.retries : <span class="muted">none</span>}
                    </td>
                    <td>{r.state}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>

      <section class="card" aria-labelledby="device-firmware">
        <h2 id="device-firmware">Firmware</h2>
        {page.statesFromService && page.states.length > 0 && (
          <p class="muted device-note" data-testid="device-states-live">
            As the service lists them now: the fleet database holds none of this device yet, so no earlier states are known (a
            scan of the fleet keeps them from then on).
          </p>
        )}
        {page.states.length === 0 ? (
          <p class="muted">No firmware state of this device is known.</p>
        ) : (
          <table class="table device-table" data-testid="device-states">
            <thead>
              <tr>
                <th scope="col">Module</th>
                <th scope="col">Current</th>
                <th scope="col">Target</th>
                <th scope="col">Status</th>
                <th scope="col">Since</th>
                <th scope="col">Before</th>
              </tr>
            </thead>
            <tbody>
              {page.states.map((s) => (
                <tr key={s.moduleId} data-testid="device-state">
                  <td>
                    <button type="button" class="link-button" onClick={() => onOpen({ kind: "module", id: s.moduleId })}>
                      {s.module ?? s.moduleId}
                    </button>
                  </td>
                  <td>{s.current ?? "—"}</td>
                  <td>{s.target ?? "—"}</td>
                  <td title={s.details ?? undefined}>
                    {s.status ?? "—"}
                    {s.details && <span class="muted"> · {s.details}</span>}
                  </td>
                  <td>
                    <Time at={s.statusAt} />
                  </td>
                  <td>
                    {s.history.length === 0 ? (
                      <span class="muted">—</span>
                    ) : (
                      <details class="device-history" data-testid="device-history">
                        <summary>
                          {s.history.length} earlier state{s.history.length === 1 ? "" : "s"}
                        </summary>
                        <ol>
                          {s.history.map((h) => (
                            <li key={h.leftAt}>
                              <span>
                                {h.current ?? "—"} → {h.target ?? "—"}, {h.status ?? "no status"}
                                {h.details ? ` (${h.details})` : ""}
                              </span>{" "}
                              <span class="muted">
                                until <Time at={h.leftAt} />
                              </span>
                            </li>
                          ))}
                        </ol>
                      </details>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section class="card" aria-labelledby="device-downlinks">
        <h2 id="device-downlinks">Downlinks</h2>
        {page.downlinks.length === 0 ? (
          <p class="muted">No downlinks to this device.</p>
        ) : (
          <table class="table device-table" data-testid="device-downlinks">
            <thead>
              <tr>
                <th scope="col">Downlink</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {page.downlinks.map((d) => (
                <tr key={`${d.kind}:${d.id}`} data-testid="device-downlink">
                  <td>
                    <button type="button" class="link-button" onClick={() => onOpen({ kind: "downlink", id: d.id })}>
                      <code>{d.externalReference ?? d.id}</code>
                    </button>
                  </td>
                  <td>{d.kind}</td>
                  <td>
                    <StatusBadge status={d.status} outcome={d.outcome} title={d.statusExplanation} />
                  </td>
                  <td>
                    <Time at={d.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p class="muted device-note">The newest of each kind; {page.actuatorSearch}.</p>
      </section>

      <section class="card" aria-labelledby="device-bindings">
        <h2 id="device-bindings">Bindings</h2>
        {page.bindings.length === 0 ? (
          <p class="muted">No connector bindings.</p>
        ) : (
          <table class="table device-table" data-testid="device-bindings">
            <thead>
              <tr>
                <th scope="col">Binding</th>
                <th scope="col">Kind</th>
                <th scope="col">Details</th>
                <th scope="col">Modified</th>
              </tr>
            </thead>
            <tbody>
              {page.bindings.map((b) => (
                <tr key={b.id}>
                  <td>
                    <button type="button" class="link-button" onClick={() => onOpen({ kind: "binding", id: b.id })}>
                      <code>{b.id}</code>
                    </button>
                  </td>
                  <td>{b.kind}</td>
                  <td>{[b.status, b.type, b.username, b.applicationServerId].filter(Boolean).join(" · ") || "—"}</td>
                  <td>
                    <Time at={b.modifiedAt ?? b.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </section>
  );
}
