import { useState } from "preact/hooks";
import { DeviceLabel } from "../../components/DeviceLabel";
import { useConfirm } from "../../components/Confirm";
import { DevicePicker } from "../../components/DevicePicker";
import { Modal, ModalCancel } from "../../components/Modal";
import { isChanged } from "../../lib/layers";
import { ErrorBox } from "../../components/States";
import { ipc, type ConnectionDraft, type DownlinkView, type KindInfo, type PayloadMode } from "../../ipc";
import { useFormSend } from "../../lib/forms";
import { DraftText, Segmented, useDraftPreview } from "./compose";
import { useSession } from "../../session";
import { BodyPreview } from "./ActuatorComposer";
import { SendSummary } from "./parts";

const KNOWN = ["deviceId", "feedbackTimeout", "retryLimit", "payloadHex", "fPort", "confirmed", "topic", "payload", "qos", "text", "message", "message.senml", "message.payload", "fields"];

const idOf = (field: string) => `c-${field.replace(/\./g, "-")}`;

function empty(kind: ConnectionDraft["kind"]): ConnectionDraft {
  return {
    kind,
    deviceId: "",
    feedbackTimeout: "PT1H",
    dryRun: true,
    retryLimit: "",
    mode: kind === "http" ? "senml" : "text",
    payloadHex: "",
    fPort: "",
    confirmed: true,
    topic: "",
    payload: "",
    qos: "",
    text: "",
    senml: "",
    fields: "",
  };
}

/**
 * Composes a connection-specific downlink (HTTP, LoRa, MQTT, SMS, Digital Matter) in the
 * connection's native format, behind a warning: it bypasses the encoder and can disrupt the
 * device. Dry run is on until the user turns it off; sending for real asks with a warning that
 * says what will reach which device, for which customer.
 */
export function ConnectionComposer({
  kind,
  onClose,
  onSent,
}: {
  kind: KindInfo;
  onClose: () => void;
  onSent: (d: DownlinkView) => void;
}) {
  const { info } = useSession();
  const [draft, setDraft] = useState<ConnectionDraft>(() => empty(kind.kind));
  const [initial] = useState(draft);
  const [confirmElement, confirm] = useConfirm();
  const { preview, shown, touch, serve, checkAll } = useDraftPreview(draft, ipc.previewConnectionDownlink);
  const { sending, failure, send } = useFormSend(KNOWN, serve);

  const set = (f: keyof ConnectionDraft, v: string | boolean, name: string = f) => {
    setDraft((d) => ({ ...d, [f]: v }));
    touch(name);
  };

  const input = (f: keyof ConnectionDraft, label: string, hint: string, opts: { name?: string; mono?: boolean; area?: boolean; placeholder?: string } = {}) => {
    const { name = f, ...look } = opts;
    return (
      <DraftText
        id={idOf(name)}
        label={label}
        hint={hint}
        error={shown(name)}
        value={draft[f] as string}
        onInput={(v) => set(f, v, name)}
        {...look}
      />
    );
  };

  const modes = (choices: { id: PayloadMode; label: string }[]) => (
    <Segmented label="Payload" options={choices} value={draft.mode} onSelect={(id) => set("mode", id)} testid="mode" />
  );

  const submit = async (e: Event) => {
    e.preventDefault();
    const p = await checkAll();
    if (p.errors.length > 0 || !p.body || !info) return;
    const real = !draft.dryRun;
    const ok = await confirm({
      title: real ? `Send a ${kind.label} downlink straight to the device?` : `Send this ${kind.label} downlink as a dry run?`,
      body: (
        <>
          {real && (
            <p class="warning-box" data-testid="confirm-disrupt">
              <strong>
                This can disrupt device <DeviceLabel id={draft.deviceId.trim()} inline copy={false} />.
              </strong>{" "}
              The payload bypasses the encoder and
              reaches the device exactly as written; a wrong one can, for example, disable its communication.
            </p>
          )}
          <SendSummary effect={p.effect} body={p.body} />
        </>
      ),
      confirmLabel: real ? `Send to the device` : "Send dry run",
      dismissLabel: "Back to the form",
      danger: real,
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    const sent = await send(() => ipc.sendConnectionDownlink({ draft, actingFor: info.acting?.id ?? null }));
    if (sent) onSent(sent);
  };

  const k = kind.kind;
  return (
    <Modal testid="connection-composer" labelledBy="connection-composer-title" onClose={onClose} busy={sending} dirty={isChanged(initial, draft)} wide>
      {confirmElement}
      <form onSubmit={submit} novalidate>
        <h2 id="connection-composer-title">New {kind.label} downlink</h2>
        <div class="warning-box" role="note" data-testid="bypass-warning">
          <strong>Connection-specific: no encoder, no safety net.</strong> This payload goes to the device in the{" "}
          {kind.label} connection's native format, exactly as you write it. A wrong one can disrupt the device, for
          example by disabling its communication. Prefer an actuator downlink unless you need this control, and try it
          as a dry run first.
        </div>
        <label class={draft.dryRun ? "dry-run-toggle on" : "dry-run-toggle off"} data-testid="dry-run-toggle">
          <input type="checkbox" checked={draft.dryRun} data-testid="c-dryRun" onChange={(e) => set("dryRun", e.currentTarget.checked)} />
          <span>
            <strong>{draft.dryRun ? "Dry run: on" : "Dry run: off — this reaches the device"}</strong>
            <br />
            <span class="muted">
              {draft.dryRun
                ? "The service checks and stores it and behaves as if it was delivered; nothing reaches the device."
                : "Turn it back on to test the payload without touching the device."}
            </span>
          </span>
        </label>
        <div class="composer-grid">
          <div class="composer-form">
            <DevicePicker
              id={idOf("deviceId")}
              testid="c-device-picker"
              label={k === "sms" ? "Device (its UUID)" : "Device"}
              kind={k}
              value={draft.deviceId}
              error={shown("deviceId")}
              onChange={(v) => set("deviceId", v)}
            />
            {k === "lora" && (
              <>
                {input("payloadHex", "Payload (hex)", "At most 242 bytes", { mono: true, placeholder: "0a0b" })}
                <div class="field-pair">
                  {input("fPort", "FPort", "1–223", { placeholder: "default 1" })}
                  <label class="check check-field">
                    <input type="checkbox" checked={draft.confirmed} data-testid="c-confirmed" onChange={(e) => set("confirmed", e.currentTarget.checked)} />
                    <span>
                      <strong>Confirmed</strong>
                      <br />
                      <span class="muted">The device must acknowledge it</span>
                    </span>
                  </label>
                </div>
              </>
            )}
            {k === "mqtt" && (
              <>
                {input("topic", "Topic", "At most 256 characters, no # or +", { mono: true, placeholder: "devices/cmd" })}
                {input("payload", "Payload", "Sent as this text", { area: true })}
                {input("qos", "QoS", "0, 1 or 2", { placeholder: "default 1" })}
              </>
            )}
            {k === "sms" && (
              <>
                {modes([
                  { id: "text", label: "Text" },
                  { id: "hex", label: "Binary (hex)" },
                ])}
                {draft.mode === "hex"
                  ? input("payloadHex", "Payload (hex)", "At most 140 bytes", { mono: true })
                  : input("text", "Text", "1–160 characters", { area: true })}
              </>
            )}
            {k === "http" && (
              <>
                {modes([
                  { id: "senml", label: "SenML message" },
                  { id: "hex", label: "Binary payload (hex)" },
                ])}
                {draft.mode === "hex"
                  ? input("payloadHex", "Payload (hex)", "Sent base64-encoded in message.payload", { name: "message.payload", mono: true })
                  : input("senml", "SenML records", "A JSON array; every record needs a name n", {
                      name: "message.senml",
                      area: true,
                      placeholder: '[{"n": "led", "vb": true}]',
                    })}
              </>
            )}
            {k === "digitalmatter" &&
              input("fields", "Fields (JSON)", "A JSON object of the fields to send, as the Digital Matter family takes them", {
                area: true,
                placeholder: '{"command": "setLed", "state": 1}',
              })}
            <div class="field-pair">
              {input("feedbackTimeout", "Feedback timeout", "Required: ISO 8601, at least PT10M", { mono: true, placeholder: "PT1H" })}
              {kind.retries && input("retryLimit", "Retry limit", "0–10", { placeholder: "default 0" })}
            </div>
          </div>
          <BodyPreview preview={preview} />
        </div>
        {failure !== null && <ErrorBox error={failure} />}
        <div class="dialog-actions">
          <ModalCancel>Close</ModalCancel>
          <button
            type="submit"
            class={draft.dryRun ? "button button-primary" : "button button-danger"}
            disabled={sending}
            data-testid="send-connection-downlink"
          >
            {sending ? "Sending…" : draft.dryRun ? "Send dry run…" : "Send to the device…"}
          </button>
        </div>
      </form>
    </Modal>
  );
}
