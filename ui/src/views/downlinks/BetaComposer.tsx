import { useEffect, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { Field } from "../../components/Field";
import { Modal, ModalCancel } from "../../components/Modal";
import { isChanged } from "../../lib/layers";
import { ErrorBox } from "../../components/States";
import { ipc, type BetaDownlinkDraft } from "../../ipc";
import { byField, useFormSend } from "../../lib/forms";
import { useSession } from "../../session";

/** The form's fields, as Rust and the service name them. */
const KNOWN = ["device", "port", "payloads", "externalReference"];

/** The draft as the form holds it: the payloads as typed, one per line. */
type Form = { device: string; port: string; payloads: string; externalReference: string };

const EMPTY: Form = { device: "", port: "", payloads: "", externalReference: "" };

function toDraft(f: Form): BetaDownlinkDraft {
  return {
    device: f.device,
    port: f.port,
    payloads: f.payloads.split(/\r?\n/),
    externalReference: f.externalReference.trim() ? f.externalReference : null,
  };
}

/**
 * The deprecated beta actuator downlink (`POST /api/actuator/downlinks`, reference 4.5): hex
 * payloads for one LoRa device (by DevEUI) on one FPort, each sent as a SenML record. Checked
 * by the reference's rules only; sending asks first, like the actuator composer. The answer's
 * shape is not shown, so it is shown as it came.
 */
export function BetaComposer({ onClose }: { onClose: () => void }) {
  const { info } = useSession();
  const [form, setForm] = useState<Form>(EMPTY);
  // What closing would lose: changes since opening, or since the last downlink sent.
  const [saved, setSaved] = useState<Form>(EMPTY);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [checks, setChecks] = useState<Record<string, string>>({});
  const [served, setServed] = useState<Record<string, string>>({});
  const [answer, setAnswer] = useState<string | null>(null);
  const [confirmElement, confirm] = useConfirm();
  const { sending, failure, send } = useFormSend(KNOWN, (f) => setServed((old) => ({ ...old, ...f })));

  useEffect(() => {
    let live = true;
    void ipc.checkBetaDownlink(toDraft(form)).then((errors) => live && setChecks(byField(errors)));
    return () => {
      live = false;
    };
  }, [form]);

  const set = (field: keyof Form, value: string) => {
    setForm((f) => ({ ...f, [field]: value }));
    setTouched((t) => new Set(t).add(field));
    setServed((s) => {
      const { [field]: _gone, ...rest } = s;
      return rest;
    });
  };
  const shown = (field: string) => served[field] ?? (touched.has(field) ? checks[field] : undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(new Set(KNOWN));
    const errors = await ipc.checkBetaDownlink(toDraft(form));
    setChecks(byField(errors));
    if (errors.length > 0 || !info) return;
    const draft = toDraft(form);
    const payloads = draft.payloads.filter((p) => p.trim());
    const ok = await confirm({
      title: "Send this beta downlink?",
      body: (
        <ul class="effects" data-testid="confirm-effect">
          <li>
            {payloads.length} payload{payloads.length === 1 ? "" : "s"} to <code>{form.device.trim()}</code> on FPort {form.port.trim()}
          </li>
          <li>Through the deprecated beta API; the device receives it like an actuator downlink.</li>
        </ul>
      ),
      confirmLabel: "Send downlink",
      dismissLabel: "Back to the form",
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    const sent = await send(() => ipc.sendBetaDownlink({ draft, actingFor: info.acting?.id ?? null }));
    if (sent) {
      setAnswer(sent.answer);
      setSaved(form);
    }
  };

  return (
    <Modal testid="beta-composer" labelledBy="beta-composer-title" onClose={onClose} busy={sending} dirty={isChanged(saved, form)} wide>
      {confirmElement}
      <form onSubmit={submit} novalidate>
        <h2 id="beta-composer-title">Beta actuator downlink (deprecated)</h2>
        <p class="result result-neutral" data-testid="beta-deprecated">
          The beta API is deprecated: prefer the actuator downlink. The service's API documentation does not
          describe its answer, so the answer is shown below exactly as it came.
        </p>
        <div class="composer-form">
          <Field id="device" label="Device (DevEUI)" error={shown("device")} hint="deveui:<16 hex> or urn:dev:deveui:<16 hex>">
            <input
              id="device"
              class="mono"
              autoComplete="off"
              spellcheck={false}
              value={form.device}
              onInput={(e) => set("device", e.currentTarget.value)}
            />
          </Field>
          <Field id="port" label="FPort" error={shown("port")} hint="An integer: the LoRa port">
            <input id="port" inputMode="numeric" autoComplete="off" value={form.port} onInput={(e) => set("port", e.currentTarget.value)} />
          </Field>
          <Field id="payloads" label="Payloads (hex, one per line)" error={shown("payloads")} hint="Each line becomes one SenML record">
            <textarea
              id="payloads"
              rows={4}
              class="mono"
              spellcheck={false}
              value={form.payloads}
              onInput={(e) => set("payloads", e.currentTarget.value)}
            />
          </Field>
          <Field id="externalReference" label="Reference (optional)" error={shown("externalReference")} hint="Your own identifier for this downlink">
            <input
              id="externalReference"
              autoComplete="off"
              value={form.externalReference}
              onInput={(e) => set("externalReference", e.currentTarget.value)}
            />
          </Field>
        </div>
        {failure !== null && <ErrorBox error={failure} />}
        {answer !== null && (
          <section aria-labelledby="beta-answer-title">
            <h3 id="beta-answer-title">The service's answer (JSON, as it came)</h3>
            <pre class="body-preview" data-testid="beta-answer">
              {answer}
            </pre>
          </section>
        )}
        <div class="dialog-actions">
          <ModalCancel>Close</ModalCancel>
          <button type="submit" class="button button-primary" disabled={sending} data-testid="send-beta-downlink">
            {sending ? "Sending…" : "Send downlink…"}
          </button>
        </div>
      </form>
    </Modal>
  );
}
