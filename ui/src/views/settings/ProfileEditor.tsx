import { useEffect, useRef, useState } from "preact/hooks";
import { Field } from "../../components/Field";
import { useConfirm } from "../../components/Confirm";
import { Modal, ModalCancel } from "../../components/Modal";
import { ErrorBox } from "../../components/States";
import { ipc, type ProfileDraft, type ProfileSummary, type TestReport, type TokenCheck } from "../../ipc";
import { byField, useFormSend } from "../../lib/forms";
import { isChanged } from "../../lib/layers";
import { TokenResult } from "./TokenResult";

const EMPTY: ProfileDraft = {
  name: "",
  baseUrl: "",
  authUrl: "",
  clientId: "",
  audience: "",
  customers: [],
  deprecatedSubCustomerMode: false,
  setTarget: { method: "PUT", path: "", body: "" },
};

/** The simulator's own operation, offered as an example to start from. */
const SET_TARGET_EXAMPLE = {
  method: "PUT",
  path: "/firmware/states/{deviceId}/{moduleId}",
  body: '{"targetFirmwareVersion": {version}}',
};

const stateText = (s: TestReport["before"] | null | undefined) =>
  s
    ? `current ${s.currentFirmwareVersion ?? "–"}, target ${s.targetFirmwareVersion ?? "–"}, status ${s.firmwareUpdateStatus ?? "–"}`
    : "(no longer listed)";

/**
 * Adds or edits a profile, in a dialog that opens in view with the first field to fill focused
 * and asks before dropping changes. Every field is checked by Rust as the user types; the secret
 * goes straight to the OS keychain on save and is never shown back (an edited profile's field
 * stays empty: leave it so to keep the stored secret).
 */
export function ProfileEditor({
  editing,
  onSaved,
  onCancel,
}: {
  editing: ProfileSummary | null;
  onSaved: (name: string) => void;
  onCancel: () => void;
}) {
  const isNew = editing === null;
  const initial = editing ? editing.draft : EMPTY;
  const [draft, setDraft] = useState<ProfileDraft>(initial);
  const [secret, setSecret] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const { sending: saving, failure, setFailure, send } = useFormSend(
    ["name", "baseUrl", "authUrl", "clientId", "audience", "secret"],
    (f) => setErrors((old) => ({ ...old, ...f })),
  );
  const [test, setTest] = useState<{ running: boolean; result?: TokenCheck; error?: unknown }>({ running: false });
  const [confirmElement, confirm] = useConfirm();
  const [trial, setTrial] = useState({ deviceId: "", moduleId: "", customerId: "" });
  const [trialRun, setTrialRun] = useState<{ running: boolean; report?: TestReport; error?: unknown }>({
    running: false,
  });
  const checkSeq = useRef(0);
  const firstField = useRef<HTMLInputElement>(null);
  // The first field to fill: the name of a new profile; an edited one's name cannot change.
  useEffect(() => firstField.current?.focus(), []);
  const hasSecret = editing?.secret.state === "stored";

  // Checked in Rust on every change; a later answer never overwrites a newer one.
  useEffect(() => {
    const seq = ++checkSeq.current;
    const t = setTimeout(() => {
      ipc.checkProfile(draft, isNew).then(
        (list) => seq === checkSeq.current && setErrors(byField(list)),
        (e) => seq === checkSeq.current && setFailure(e),
      );
    }, 120);
    return () => clearTimeout(t);
  }, [draft, isNew]);

  const set = (field: keyof ProfileDraft, value: ProfileDraft[keyof ProfileDraft]) => {
    setDraft((d) => ({ ...d, [field]: value }));
    setTouched((t) => new Set(t).add(field));
  };
  const setCustomer = (i: number, key: "id" | "label", value: string) => {
    setDraft((d) => ({ ...d, customers: d.customers.map((c, j) => (j === i ? { ...c, [key]: value } : c)) }));
    setTouched((t) => new Set(t).add(`customers[${i}].${key}`));
  };
  const setOp = (key: "method" | "path" | "body", value: string) => {
    setDraft((d) => ({ ...d, setTarget: { ...d.setTarget, [key]: value } }));
    setTouched((t) => new Set(t).add(`setTarget.${key}`));
  };
  const shown = (field: string) => (touched.has(field) || touched.has("*") ? errors[field] : undefined);
  const secretMissing = isNew && secret === "";

  const save = async (e: Event) => {
    e.preventDefault();
    setTouched(new Set(["*"]));
    setFailure(null);
    if (Object.keys(errors).length > 0 || secretMissing) return;
    const saved = await send(() => ipc.saveProfile({ draft, secret: secret === "" ? null : secret, isNew }));
    if (saved) {
      setSecret("");
      onSaved(saved.profile.name);
    }
  };

  const runTest = async () => {
    setTest({ running: true });
    try {
      setTest({ running: false, result: await ipc.testProfile({ draft, secret: secret === "" ? null : secret }) });
    } catch (err) {
      setTest({ running: false, error: err });
    }
  };

  const opGiven = draft.setTarget.path.trim() !== "" || draft.setTarget.body.trim() !== "";
  const opErrors = Object.keys(errors).some((f) => f.startsWith("setTarget."));
  const runTrial = async () => {
    const customer = draft.customers.find((c) => c.id.trim() === trial.customerId) ?? null;
    const ok = await confirm({
      title: "Test the set-target operation on one device",
      body: (
        <p>
          Sends <code>{draft.setTarget.method.toUpperCase()} {draft.setTarget.path}</code> for device{" "}
          <code>{trial.deviceId.trim()}</code>, module <code>{trial.moduleId.trim()}</code>, with the version the device
          runs now as its target, so nothing should change. The state is read before and after.
        </p>
      ),
      confirmLabel: "Send the test",
      acting: {
        profile: draft.name || "(unsaved profile)",
        customer: customer ? { id: customer.id.trim(), label: customer.label } : null,
      },
    });
    if (!ok) return;
    setTrialRun({ running: true });
    try {
      const report = await ipc.testSetTarget({
        draft,
        secret: secret === "" ? null : secret,
        deviceId: trial.deviceId,
        moduleId: trial.moduleId,
        customerId: trial.customerId || null,
      });
      setTrialRun({ running: false, report });
    } catch (err) {
      setTrialRun({ running: false, error: err });
    }
  };

  return (
    <Modal
      testid="profile-editor-dialog"
      labelledBy="editor-title"
      onClose={onCancel}
      busy={saving}
      dirty={secret !== "" || isChanged(initial, draft)}
      wide
    >
      <form class="form" onSubmit={save} data-testid="profile-editor" aria-labelledby="editor-title" novalidate>
        <h2 id="editor-title">{isNew ? "New profile" : `Edit profile ${editing.profile.name}`}</h2>
        <div class="form-grid">
          <Field
            id="name"
            label="Name"
            error={shown("name")}
            hint={isNew ? "Letters, digits, - _ . — also names the keychain entry" : "The name cannot change: it names the keychain entry"}
          >
            <input
              id="name"
              ref={isNew ? firstField : undefined}
              value={draft.name}
              readOnly={!isNew}
              autoComplete="off"
              onInput={(e) => set("name", e.currentTarget.value)}
            />
          </Field>
          <Field id="clientId" label="Client id (API key id)" error={shown("clientId")}>
            <input id="clientId" ref={isNew ? undefined : firstField} value={draft.clientId} autoComplete="off" onInput={(e) => set("clientId", e.currentTarget.value)} />
          </Field>
          <Field id="baseUrl" label="Base URL" error={shown("baseUrl")} hint="The service's address, e.g. https://dcs.example.com">
            <input id="baseUrl" value={draft.baseUrl} autoComplete="off" onInput={(e) => set("baseUrl", e.currentTarget.value)} />
          </Field>
          <Field id="authUrl" label="Auth URL" error={shown("authUrl")} hint="The identity platform's address; empty: the base URL">
            <input id="authUrl" value={draft.authUrl} autoComplete="off" onInput={(e) => set("authUrl", e.currentTarget.value)} />
          </Field>
          <Field id="audience" label="Audience" error={shown("audience")} hint="Empty: the service's application id">
            <input id="audience" value={draft.audience} autoComplete="off" onInput={(e) => set("audience", e.currentTarget.value)} />
          </Field>
          <Field
            id="secret"
            label="Client secret"
            error={touched.has("*") && secretMissing ? "is required: it is kept in the OS keychain, never in a file" : shown("secret")}
            hint={hasSecret ? "A secret is stored in the OS keychain. Leave empty to keep it; type to replace it." : "Stored in the OS keychain, never in a file"}
          >
            <input
              id="secret"
              type="password"
              value={secret}
              autoComplete="new-password"
              placeholder={hasSecret ? "•••••••• stored in the keychain" : ""}
              onInput={(e) => setSecret(e.currentTarget.value)}
            />
          </Field>
        </div>

        <fieldset class="customers">
          <legend>Customers (for resellers)</legend>
          <p class="muted">
            The customers this key may act for. The header's switcher offers them; every write asks first and names the
            customer.
          </p>
          {draft.customers.map((c, i) => (
            <div class="customer-row" key={i} data-testid="customer-row">
              <Field id={`customers-${i}-label`} label="Label" error={shown(`customers[${i}].label`)}>
                <input id={`customers-${i}-label`} value={c.label} onInput={(e) => setCustomer(i, "label", e.currentTarget.value)} />
              </Field>
              <Field id={`customers-${i}-id`} label="Customer UUID" error={shown(`customers[${i}].id`)}>
                <input id={`customers-${i}-id`} value={c.id} class="mono" onInput={(e) => setCustomer(i, "id", e.currentTarget.value)} />
              </Field>
              <button
                type="button"
                class="button button-quiet"
                aria-label={`Remove customer ${c.label || i + 1}`}
                onClick={() => set("customers", draft.customers.filter((_, j) => j !== i))}
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            class="button"
            data-testid="add-customer"
            onClick={() => setDraft((d) => ({ ...d, customers: [...d.customers, { id: "", label: "" }] }))}
          >
            Add customer
          </button>
        </fieldset>

        <fieldset class="set-target" data-testid="set-target-operation">
          <legend>Set-target operation</legend>
          <p class="muted">
            How this service sets the version a device should update to. The service's API documentation does not describe it, so
            rollouts are available only once it is given here, as your service documents it. Placeholders:{" "}
            <code>{"{deviceId}"}</code>, <code>{"{moduleId}"}</code> (path or body), <code>{"{version}"}</code> and{" "}
            <code>{"{packageId}"}</code> (body only, as a JSON value of their own: they become <code>null</code> to reset a
            target). Leave path and body empty for none.
          </p>
          <div class="form-grid">
            <Field id="setTarget-method" label="Method" error={shown("setTarget.method")}>
              <select
                id="setTarget-method"
                value={draft.setTarget.method.toUpperCase()}
                onChange={(e) => setOp("method", e.currentTarget.value)}
              >
                <option value="PUT">PUT</option>
                <option value="POST">POST</option>
                <option value="PATCH">PATCH</option>
              </select>
            </Field>
            <Field
              id="setTarget-path"
              label="Path"
              error={shown("setTarget.path")}
              hint="Under the base URL, starting with /, e.g. /firmware/states/{deviceId}/{moduleId}"
            >
              <input
                id="setTarget-path"
                class="mono"
                value={draft.setTarget.path}
                autoComplete="off"
                onInput={(e) => setOp("path", e.currentTarget.value)}
              />
            </Field>
            <Field
              id="setTarget-body"
              label="JSON body"
              error={shown("setTarget.body")}
              hint='e.g. {"targetFirmwareVersion": {version}}'
            >
              <textarea
                id="setTarget-body"
                class="mono"
                rows={3}
                value={draft.setTarget.body}
                onInput={(e) => setOp("body", e.currentTarget.value)}
              />
            </Field>
          </div>
          {!opGiven && (
            <button
              type="button"
              class="button button-quiet"
              data-testid="set-target-example"
              onClick={() => setDraft((d) => ({ ...d, setTarget: { ...SET_TARGET_EXAMPLE } }))}
            >
              Start from the simulator's operation
            </button>
          )}
          {opGiven && (
            <div class="set-target-trial" data-testid="set-target-trial">
              <p class="muted">
                Test on one device: the device's current version is sent as its target (a no-op), and its state is read
                before and after. Pick a device with no update under way.
              </p>
              <div class="form-grid">
                <Field id="trial-device" label="Device UUID">
                  <input
                    id="trial-device"
                    class="mono"
                    value={trial.deviceId}
                    onInput={(e) => setTrial((t) => ({ ...t, deviceId: e.currentTarget.value }))}
                  />
                </Field>
                <Field id="trial-module" label="Module UUID">
                  <input
                    id="trial-module"
                    class="mono"
                    value={trial.moduleId}
                    onInput={(e) => setTrial((t) => ({ ...t, moduleId: e.currentTarget.value }))}
                  />
                </Field>
                {draft.customers.length > 0 && (
                  <Field id="trial-customer" label="Acting for">
                    <select
                      id="trial-customer"
                      value={trial.customerId}
                      onChange={(e) => setTrial((t) => ({ ...t, customerId: e.currentTarget.value }))}
                    >
                      <option value="">The profile's own environment</option>
                      {draft.customers.map((c, i) => (
                        <option key={i} value={c.id.trim()}>
                          {c.label || c.id}
                        </option>
                      ))}
                    </select>
                  </Field>
                )}
              </div>
              <button
                type="button"
                class="button"
                data-testid="test-set-target"
                disabled={trialRun.running || opErrors || !trial.deviceId.trim() || !trial.moduleId.trim()}
                onClick={runTrial}
              >
                {trialRun.running ? "Testing…" : "Test on one device…"}
              </button>
              {trialRun.error !== undefined && <ErrorBox error={trialRun.error} />}
              {trialRun.report && (
                <dl class="result result-ok" data-testid="set-target-report">
                  <dt>Before</dt>
                  <dd>{stateText(trialRun.report.before)}</dd>
                  <dt>Sent</dt>
                  <dd class="mono">
                    {trialRun.report.request} {trialRun.report.requestBody}
                  </dd>
                  <dt>The service answered</dt>
                  <dd class="mono">{trialRun.report.answer ?? "(no body)"}</dd>
                  <dt>After</dt>
                  <dd>{stateText(trialRun.report.after)}</dd>
                </dl>
              )}
            </div>
          )}
        </fieldset>

        <label class="check">
          <input
            type="checkbox"
            id="deprecatedSubCustomerMode"
            checked={draft.deprecatedSubCustomerMode}
            onChange={(e) => set("deprecatedSubCustomerMode", e.currentTarget.checked)}
          />
          <span>
            <span class="tag tag-deprecated">Deprecated</span> Sub-customer mode: act for customers with the{" "}
            <code>x-client-id</code> header after a context switch, instead of the security-context header. Only for keys
            that cannot use the reseller header yet.
          </span>
        </label>

        {confirmElement}
        {failure !== null && <ErrorBox error={failure} />}
        {(test.result || test.error !== undefined) && <TokenResult result={test.result} error={test.error} />}

        <div class="form-actions">
          <button type="button" class="button" onClick={runTest} disabled={test.running} data-testid="test-connection">
            {test.running ? "Testing…" : "Test connection"}
          </button>
          <span class="spacer" />
          <ModalCancel testid="cancel-profile">Cancel</ModalCancel>
          <button type="submit" class="button button-primary" disabled={saving} data-testid="save-profile">
            {saving ? "Saving…" : isNew ? "Add profile" : "Save changes"}
          </button>
        </div>
      </form>
    </Modal>
  );
}
