import { useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { DevicePicker } from "../../components/DevicePicker";
import { Field } from "../../components/Field";
import { Modal, ModalCancel } from "../../components/Modal";
import { isChanged } from "../../lib/layers";
import { ErrorBox } from "../../components/States";
import {
  ipc,
  type ActuatorDraft,
  type DownlinkPreview,
  type DownlinkView,
  type MethodDraft,
  type MethodVariant,
} from "../../ipc";
import { useFormSend } from "../../lib/forms";
import { DraftText, Segmented, useDraftPreview } from "./compose";
import { useSession } from "../../session";
import { SendSummary } from "./parts";

const VARIANTS: { id: MethodVariant; label: string }[] = [
  { id: "setProperty", label: "Set property" },
  { id: "invokeCommand", label: "Invoke command" },
  { id: "senml", label: "SenML records" },
  { id: "payloadHex", label: "Hex payload" },
  { id: "raw", label: "Raw JSON" },
];

const EMPTY_METHOD: MethodDraft = {
  variant: "setProperty",
  deviceId: "",
  property: "",
  value: "",
  valueType: "number",
  command: "",
  parameters: "",
  records: "",
  payloadHex: "",
  port: "",
  raw: "",
};

const EMPTY: ActuatorDraft = { method: EMPTY_METHOD, retryLimit: "", feedbackTimeout: "", externalReference: "", dryRun: false };

/** Fields the service may name in a refusal, next to which it is shown. */
const KNOWN = [
  "method",
  "method.deviceId",
  "method.type",
  "method.property",
  "method.value",
  "method.command",
  "method.parameters",
  "method.records",
  "method.payloadHex",
  "method.port",
  "retryLimit",
  "feedbackTimeout",
  "externalReference",
];

/** `method.value` → the input's id `method-value`. */
const idOf = (field: string) => field.replace(/\./g, "-");

/**
 * Composes an actuator-style downlink: the device (picked or pasted), the method as one of the
 * four variants the simulator documents or raw JSON, retries, feedback timeout,
 * reference and dry run. Rust checks every field as the user types and previews the exact body
 * the client will send; sending asks first, naming the customer.
 */
export function ActuatorComposer({ onClose, onSent }: { onClose: () => void; onSent: (d: DownlinkView) => void }) {
  const { info } = useSession();
  const [draft, setDraft] = useState<ActuatorDraft>(EMPTY);
  const [confirmElement, confirm] = useConfirm();
  const { preview, shown, touch, serve, checkAll } = useDraftPreview(draft, ipc.previewDownlink);
  const { sending, failure, send } = useFormSend(KNOWN, serve);

  const set = (f: keyof ActuatorDraft, v: string | boolean) => {
    setDraft((d) => ({ ...d, [f]: v }));
    touch(f);
  };
  const setMethod = (f: keyof MethodDraft, v: string) => {
    setDraft((d) => ({ ...d, method: { ...d.method, [f]: v } }));
    touch(`method.${f}`);
  };
  const m = draft.method;

  const text = (field: keyof MethodDraft, label: string, hint: string, opts: { mono?: boolean; area?: boolean; placeholder?: string } = {}) => (
    <DraftText
      id={idOf(`method.${field}`)}
      label={label}
      hint={hint}
      error={shown(`method.${field}`)}
      value={m[field]}
      onInput={(v) => setMethod(field, v)}
      {...opts}
    />
  );

  const submit = async (e: Event) => {
    e.preventDefault();
    const p = await checkAll();
    if (p.errors.length > 0 || !p.body || !info) return;
    const ok = await confirm({
      title: draft.dryRun ? "Send this downlink as a dry run?" : "Send this downlink?",
      body: <SendSummary effect={p.effect} body={p.body} />,
      confirmLabel: draft.dryRun ? "Send dry run" : "Send downlink",
      dismissLabel: "Back to the form",
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    const sent = await send(() => ipc.sendDownlink({ draft, actingFor: info.acting?.id ?? null }));
    if (sent) onSent(sent);
  };

  return (
    <Modal testid="actuator-composer" labelledBy="actuator-composer-title" onClose={onClose} busy={sending} dirty={isChanged(EMPTY, draft)} wide>
      {confirmElement}
      <form onSubmit={submit} novalidate>
        <h2 id="actuator-composer-title">New actuator downlink</h2>
        <p class="muted lead">
          A high-level command; the platform translates it with the encoder configured for the device. The recommended
          way to reach a device.
        </p>
        <div class="composer-grid">
          <div class="composer-form">
            <fieldset class="variant-set">
              <legend>Method</legend>
              <Segmented label="Method variant" options={VARIANTS} value={m.variant} onSelect={(v) => setMethod("variant", v)} testid="variant" />
            </fieldset>
            {m.variant !== "raw" && (
              <DevicePicker
                id="method-deviceId"
                testid="device-picker"
                label="Device"
                value={m.deviceId}
                error={shown("method.deviceId")}
                onChange={(v) => setMethod("deviceId", v)}
              />
            )}
            {m.variant === "setProperty" && (
              <div class="field-pair">
                {text("property", "Property", "The device property to set, e.g. reportingInterval")}
                <Field id="method-value" label="Value" error={shown("method.value")} hint="Read as the type chosen beside it">
                  <div class="picker-row">
                    <input
                      id="method-value"
                      autoComplete="off"
                      value={m.value}
                      onInput={(e) => setMethod("value", e.currentTarget.value)}
                    />
                    <select
                      aria-label="Value type"
                      data-testid="method-valueType"
                      onChange={(e) => setMethod("valueType", e.currentTarget.value)}
                    >
                      {(["number", "boolean", "string"] as const).map((t) => (
                        <option key={t} value={t} selected={m.valueType === t}>
                          {t}
                        </option>
                      ))}
                    </select>
                  </div>
                </Field>
              </div>
            )}
            {m.variant === "invokeCommand" && (
              <>
                {text("command", "Command", "The command to invoke, e.g. reboot")}
                {text("parameters", "Parameters (optional)", "A JSON object", { area: true, placeholder: '{"delay": 5}' })}
              </>
            )}
            {m.variant === "senml" &&
              text("records", "SenML records", "A JSON array; every record needs a name n", {
                area: true,
                placeholder: '[{"n": "led", "vb": true}]',
              })}
            {m.variant === "payloadHex" && (
              <div class="field-pair">
                {text("payloadHex", "Payload (hex)", "An even number of hex characters", { mono: true, placeholder: "0a0b" })}
                {text("port", "LoRa port (optional)", "1–223", { placeholder: "none" })}
              </div>
            )}
            {m.variant === "raw" &&
              text("raw", "Method as JSON", "Sent as written; it names its own device", {
                area: true,
                placeholder: '{"type": "setProperty", "deviceId": "imei:…", "property": "…", "value": 1}',
              })}
            <div class="field-trio">
              <Field id="retryLimit" label="Retry limit" error={shown("retryLimit")} hint="0–10">
                <input
                  id="retryLimit"
                  inputMode="numeric"
                  autoComplete="off"
                  placeholder="default 0"
                  value={draft.retryLimit}
                  onInput={(e) => set("retryLimit", e.currentTarget.value)}
                />
              </Field>
              <Field
                id="feedbackTimeout"
                label="Feedback timeout"
                error={shown("feedbackTimeout")}
                hint="ISO 8601, at least PT10M; empty: the service's default"
              >
                <input
                  id="feedbackTimeout"
                  class="mono"
                  autoComplete="off"
                  placeholder="PT1H"
                  value={draft.feedbackTimeout}
                  onInput={(e) => set("feedbackTimeout", e.currentTarget.value)}
                />
              </Field>
              <Field id="externalReference" label="Reference (optional)" error={shown("externalReference")} hint="Yours; unique, 1–100 characters">
                <input
                  id="externalReference"
                  autoComplete="off"
                  value={draft.externalReference}
                  onInput={(e) => set("externalReference", e.currentTarget.value)}
                />
              </Field>
            </div>
            <label class="check">
              <input
                type="checkbox"
                checked={draft.dryRun}
                data-testid="dryRun"
                onChange={(e) => set("dryRun", e.currentTarget.checked)}
              />
              <span>
                <strong>Dry run</strong>
                <br />
                <span class="muted">The service checks and stores it; it never reaches the device.</span>
              </span>
            </label>
          </div>
          <BodyPreview preview={preview} />
        </div>
        {failure !== null && <ErrorBox error={failure} />}
        <div class="dialog-actions">
          <ModalCancel>Close</ModalCancel>
          <button type="submit" class="button button-primary" disabled={sending} data-testid="send-downlink">
            {sending ? "Sending…" : draft.dryRun ? "Send dry run…" : "Send downlink…"}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** The exact request body as Rust builds it, or what is still missing. */
export function BodyPreview({ preview }: { preview: DownlinkPreview | null }) {
  return (
    <aside class="composer-preview" aria-labelledby="preview-title">
      <h3 id="preview-title">Request body</h3>
      {preview?.body ? (
        <>
          <pre class="body-preview" data-testid="downlink-preview">
            {preview.body}
          </pre>
          <ul class="effects" data-testid="preview-effect">
            {preview.effect.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ul>
        </>
      ) : (
        <p class="muted" data-testid="preview-pending">
          {preview && preview.errors.length > 0
            ? `The body appears once every field is right (${preview.errors.length} to fix).`
            : "Checking…"}
        </p>
      )}
    </aside>
  );
}
