import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Modal } from "../../components/Modal";
import { ErrorBox, Loading } from "../../components/States";
import { ipc, type FirmwareState, type ModuleDetail, type StatePage } from "../../ipc";
import { Time } from "../../components/Time";
import { describePrincipal } from "../../lib/format";

/** `when by who`, or a dash when the service sent neither; the caller's id in a tooltip. */
function Audit({ at, by }: { at: string | null | undefined; by: string | null | undefined }) {
  if (!at && !by) return <>—</>;
  return (
    <>
      {at ? <Time at={at} seconds /> : "—"}
      {by ? <span title={by}> by {describePrincipal(by)}</span> : null}
    </>
  );
}

/**
 * One firmware module (`GET /firmware/modules/{id}`): its fields, audit fields and the members
 * this version does not know, its packages, and its firmware states on the service. The states
 * list documents only `clientId`: the module filter is sent only when the user ticks "Filter on
 * the service (if supported)", and the answer is checked; otherwise the states are matched here.
 */
export function ModuleDetailDialog({
  moduleId,
  clientId,
  specName,
  onClose,
}: {
  moduleId: string;
  clientId: string | null;
  specName: (id: string) => string | null;
  onClose: () => void;
}) {
  const [detail, setDetail] = useState<ModuleDetail | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [round, setRound] = useState(0);

  useEffect(() => {
    let live = true;
    setFailure(null);
    ipc.getModule(moduleId).then(
      (d) => live && setDetail(d),
      (e) => live && setFailure(e),
    );
    return () => {
      live = false;
    };
  }, [moduleId, round]);

  const m = detail?.module;
  return (
    <Modal testid="module-detail" labelledBy="module-detail-title" onClose={onClose} wide>
      <div class="detail-head">
        <h2 id="module-detail-title">Module {m ? m.name : ""}</h2>
      </div>
      {!detail && failure === null && <Loading label="Loading the module…" />}
      {failure !== null && <ErrorBox error={failure} onRetry={() => setRound((r) => r + 1)} />}
      {detail && m && (
        <div>
          <section>
            <dl class="facts" data-testid="module-facts">
              <dt>Id</dt>
              <dd>
                <code>{m.id}</code>
              </dd>
              <dt>Name</dt>
              <dd data-testid="module-detail-name">{m.name}</dd>
              <dt>Version attribute</dt>
              <dd>
                <code>{m.firmwareVersionAttributeName}</code>
              </dd>
              <dt>Device specification</dt>
              <dd title={m.deviceSpecificationId}>
                {specName(m.deviceSpecificationId) ?? <code>{m.deviceSpecificationId}</code>}
              </dd>
              <dt>Owner</dt>
              <dd>{m.clientId ? <code>{m.clientId}</code> : "—"}</dd>
              <dt>Created</dt>
              <dd data-testid="module-created">
                <Audit at={m.createdAt} by={m.createdBy} />
              </dd>
              <dt>Modified</dt>
              <dd data-testid="module-modified">
                <Audit at={m.modifiedAt} by={m.modifiedBy} />
              </dd>
              {detail.unknownMembers.map(([name, json]) => (
                <Fragment key={name}>
                  <dt title="A member this version of the console does not know">{name}</dt>
                  <dd data-testid="module-unknown-member" data-name={name}>
                    <code>{json}</code>
                  </dd>
                </Fragment>
              ))}
            </dl>
          </section>
        </div>
      )}
      {detail && (
        <section aria-labelledby="module-packages-title">
          <h3 id="module-packages-title">Packages ({detail.packages.length})</h3>
          {detail.packages.length === 0 ? (
            <p class="muted">No packages of this module.</p>
          ) : (
            <table class="table" data-testid="module-packages">
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Firmware file</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {detail.packages.map((p) => (
                  <tr key={p.id} data-testid="module-package">
                    <td>{p.firmwareVersion}</td>
                    <td>{p.firmwareFileName ?? <span class="muted">none</span>}</td>
                    <td>
                      <Time at={p.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
      {detail && <ModuleStates moduleId={moduleId} clientId={clientId} />}
      <div class="dialog-actions">
        <span class="spacer" />
        <button type="button" class="button" onClick={onClose} data-testid="module-detail-close">
          Close
        </button>
      </div>
    </Modal>
  );
}

/** The module's firmware states on the service, a page at a time, on request. */
function ModuleStates({ moduleId, clientId }: { moduleId: string; clientId: string | null }) {
  const [onService, setOnService] = useState(false);
  const [states, setStates] = useState<FirmwareState[] | null>(null);
  const [last, setLast] = useState<StatePage | null>(null);
  const [read, setRead] = useState(0);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);

  const load = async (next: string | null) => {
    setBusy(true);
    setFailure(null);
    try {
      const page = await ipc.listModuleStates({ moduleId, onService, clientId, next });
      setStates((old) => [...(next ? (old ?? []) : []), ...page.items]);
      setRead((r) => (next ? r : 0) + page.read);
      setLast(page);
    } catch (e) {
      setFailure(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="module-states-title" data-testid="module-states">
      <h3 id="module-states-title">Firmware states on the service</h3>
      <label class="check">
        <input
          type="checkbox"
          checked={onService}
          data-testid="states-on-service"
          onChange={(e) => {
            setOnService(e.currentTarget.checked);
            setStates(null);
            setLast(null);
          }}
        />{" "}
        Filter on the service (if supported)
      </label>
      <p class="muted small">
        The service documents only the owner filter for states. Ticked, the module filter is sent too and the answer is
        checked; otherwise the states are read and matched here.
      </p>
      <button type="button" class="button button-small" disabled={busy} onClick={() => load(null)} data-testid="states-load">
        {states === null ? "Read states" : "Read again"}
      </button>
      {failure !== null && <ErrorBox error={failure} />}
      {last?.note && (
        <p class={last.ignored ? "result result-error" : "muted small"} data-testid="states-note">
          {last.note.charAt(0).toUpperCase() + last.note.slice(1)}.
        </p>
      )}
      {states !== null && (
        <>
          <p class="muted small" data-testid="states-count">
            {states.length} of {read} states read match this module.
          </p>
          {states.length > 0 && (
            <table class="table" data-testid="states-table">
              <thead>
                <tr>
                  <th scope="col">Device</th>
                  <th scope="col">Current</th>
                  <th scope="col">Target</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {states.map((s) => (
                  <tr key={s.deviceId} data-testid="state-row">
                    <td>
                      <code>{s.deviceId}</code>
                    </td>
                    <td>{s.currentFirmwareVersion ?? "—"}</td>
                    <td>{s.targetFirmwareVersion ?? "—"}</td>
                    <td>{s.firmwareUpdateStatus ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {last?.next && (
            <button type="button" class="button button-small" disabled={busy} onClick={() => load(last.next)} data-testid="states-more">
              Load more
            </button>
          )}
        </>
      )}
    </section>
  );
}
