import { useEffect, useState } from "preact/hooks";
import { Field } from "../../components/Field";
import { ErrorBox } from "../../components/States";
import type { UpdateStatus } from "../../ipc";
import { errorMessage, ipc } from "../../ipc";
import { useFormSend } from "../../lib/forms";

/**
 * Where the app looks for updates of itself (the manifest's address: empty is the build's own,
 * and a build made without one checks nothing until given one) and whether it checks when it
 * starts ("Check for updates…" is in Help). Kept in the fleet database's settings; Rust checks the address (https, no user name or
 * password) and a refused one stays typed, its rule beside it.
 */
export function UpdatesCard() {
  const [status, setStatus] = useState<UpdateStatus | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [endpoint, setEndpoint] = useState("");
  const [atStart, setAtStart] = useState(true);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const { sending, failure, send } = useFormSend(["endpoint"], (f) => setErrors((old) => ({ ...old, ...f })));

  const show = (s: UpdateStatus) => {
    setStatus(s);
    setEndpoint(s.settings.endpoint ?? "");
    setAtStart(s.settings.checkAtStart);
  };
  useEffect(() => {
    ipc.updateStatus().then(show, (e) => setLoadError(errorMessage(e)));
  }, []);

  const dirty = !!status && (endpoint.trim() !== (status.settings.endpoint ?? "") || atStart !== status.settings.checkAtStart);

  const save = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setSaved(false);
    const s = await send(() => ipc.setUpdateSettings({ endpoint: endpoint.trim() || null, checkAtStart: atStart }));
    if (s) {
      show(s);
      setSaved(true);
    }
  };

  return (
    <div class="card" data-testid="updates">
      <h2>Updates</h2>
      {loadError && (
        <p class="result result-error" role="alert">
          {loadError}
        </p>
      )}
      {status && (
        <form class="form" onSubmit={save} novalidate data-testid="updates-form">
          <p class="muted" data-testid="updates-state">
            This is version {status.version}.{" "}
            {status.effective ? (
              <>
                Updates are read from <code class="break-all">{status.effective}</code>
                {status.settings.endpoint ? " (your address)" : " (this build's address)"}, and installed only when their signature matches
                the app's key.
              </>
            ) : (
              <>This build was made without an update address: updates are off until you give one.</>
            )}
            {status.cannotInstall && <> Note: {status.cannotInstall}.</>}
          </p>
          <Field
            id="endpoint"
            label="Update address"
            error={errors.endpoint}
            hint={
              status.builtIn ? (
                <>
                  Empty: this build's <code class="break-all">{status.builtIn}</code>. An https address of the update manifest.
                </>
              ) : (
                <>An https address of the update manifest (latest.json), e.g. your company's mirror.</>
              )
            }
          >
            <input
              id="endpoint"
              type="url"
              value={endpoint}
              placeholder={status.builtIn ?? "https://updates.example.com/dcs-console/latest.json"}
              aria-invalid={!!errors.endpoint}
              aria-describedby={errors.endpoint ? "endpoint-error" : undefined}
              onInput={(e) => {
                setEndpoint((e.target as HTMLInputElement).value);
                setSaved(false);
              }}
            />
          </Field>
          <label class="check-row">
            <input
              type="checkbox"
              checked={atStart}
              data-testid="updates-at-start"
              onChange={(e) => {
                setAtStart((e.target as HTMLInputElement).checked);
                setSaved(false);
              }}
            />
            <span>
              Check when the console starts <span class="muted">(it tells you of a newer version; nothing is installed without you)</span>
            </span>
          </label>
          {failure !== null && <ErrorBox error={failure} />}
          <div class="form-actions">
            <button type="submit" class="button" disabled={sending || !dirty} data-testid="updates-save">
              {sending ? "Saving…" : "Save"}
            </button>
            {saved && (
              <span class="muted" role="status" data-testid="updates-saved">
                Saved.
              </span>
            )}
          </div>
        </form>
      )}
    </div>
  );
}
