import { useEffect, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { DevicePicker } from "../../components/DevicePicker";
import { Field } from "../../components/Field";
import { Modal, ModalCancel } from "../../components/Modal";
import { isChanged } from "../../lib/layers";
import { ErrorBox } from "../../components/States";
import { ipc, type BindingKind, type BindingView } from "../../ipc";
import { byField, useFormSend } from "../../lib/forms";
import { useSession } from "../../session";
import { editImpact, editorFrom, emptyEditor, HTTP_TYPES, kindInfo, toDraft, type EditorState } from "./kinds";
import { SecretInput, StoredSecret } from "./SecretField";

/**
 * Creates a binding of `kind`, or replaces `binding` (a full PUT). Every field is checked by the
 * client's validators as the user types; on an edit an empty secret keeps the stored one (Rust
 * reads it back). Saving asks first, naming the customer, and says when the device is cut off.
 */
export function BindingEditor({
  kind,
  binding,
  onClose,
  onSaved,
}: {
  kind: BindingKind;
  binding: BindingView | null;
  onClose: () => void;
  onSaved: (b: BindingView, created: boolean) => void;
}) {
  const { info } = useSession();
  const editing = binding !== null;
  const k = kindInfo(kind);
  const [state, setState] = useState<EditorState>(binding ? editorFrom(binding) : emptyEditor());
  const [initial] = useState(state);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [confirmElement, confirm] = useConfirm();
  const known = ["deviceId", "applicationServerId", "type", k.secretField];
  const { sending, failure, send } = useFormSend(known, (f) => {
    setErrors((old) => ({ ...old, ...f }));
    setTouched((t) => new Set([...t, ...Object.keys(f)]));
  });

  useEffect(() => {
    let live = true;
    void ipc.checkBinding(toDraft(kind, state, editing), editing).then((list) => live && setErrors(byField(list)));
    return () => {
      live = false;
    };
  }, [state.deviceId, state.applicationServerId, state.type, state.secret]);

  const set = (field: string, patch: Partial<EditorState>) => {
    setState((s) => ({ ...s, ...patch }));
    setTouched((t) => new Set(t).add(field));
  };
  const shown = (f: string) => (touched.has(f) || touched.has("*") ? errors[f] : undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(new Set(["*"]));
    if (Object.keys(errors).length > 0 || !info) return;
    const acting = { profile: info.profile, customer: info.acting };
    let ok: boolean;
    if (binding && !binding.hasSecret && !state.secret) {
      // Nothing to keep: the service did not send the secret. Rust refuses this edit before any
      // write, naming the field ("type it again"); no confirmation of a change that cannot happen.
      ok = true;
    } else if (binding) {
      const impact = editImpact(kind, binding, state);
      ok = await confirm({
        title: impact.disruptive ? `Disrupt the device? Replace this ${k.label} binding` : `Replace this ${k.label} binding?`,
        body: (
          <>
            <p>
              The binding of device <code>{binding.deviceId}</code> is replaced as a whole. This edit:
            </p>
            <ul data-testid="edit-changes">
              {impact.changes.map((c) => (
                <li key={c}>{c}</li>
              ))}
              {!state.secret && binding.hasSecret && <li>keeps the stored {k.secretLabel.toLowerCase()}</li>}
            </ul>
            {impact.consequence && (
              <p class="status-error" data-testid="edit-disruptive">
                <strong>Disruptive:</strong> {impact.consequence}
              </p>
            )}
          </>
        ),
        confirmLabel: impact.disruptive ? "Replace and disrupt" : "Replace binding",
        danger: impact.disruptive,
        acting,
      });
    } else {
      ok = await confirm({
        title: `Create ${k.label} binding?`,
        body: (
          <p>
            Device <code>{state.deviceId.trim()}</code> gets a {k.label} binding
            {kind === "lora" ? " with status INVENTORY until it joins the network" : ""}
            {kind === "http" ? ` of type ${state.type}` : ""}
            {kind === "mqtt" ? "; the service sets its username from the device" : ""}.
          </p>
        ),
        confirmLabel: "Create binding",
        acting,
      });
    }
    if (!ok) return;
    const actingFor = info.acting?.id ?? null;
    const draft = toDraft(kind, state, editing);
    const saved = await send(() => (binding ? ipc.updateBinding({ id: binding.id, draft, actingFor }) : ipc.createBinding({ draft, actingFor })));
    if (saved) onSaved(saved, !binding);
  };

  return (
    <Modal testid="binding-editor" labelledBy="binding-editor-title" onClose={onClose} busy={sending} dirty={isChanged(initial, state)}>
      {confirmElement}
      <form onSubmit={submit} novalidate>
        <h2 id="binding-editor-title">{binding ? `Edit ${k.label} binding` : `New ${k.label} binding`}</h2>
        {binding && (
          <dl class="facts">
            <dt>Binding</dt>
            <dd>
              <code>{binding.id}</code>
            </dd>
            {kind === "lora" && (
              <>
                <dt>Status</dt>
                <dd>
                  <StatusTag status={binding.status} /> <span class="muted">set by the network server</span>
                </dd>
              </>
            )}
            {kind === "mqtt" && (
              <>
                <dt>Username</dt>
                <dd>
                  <code>{binding.username}</code> <span class="muted">set by the service from the device</span>
                </dd>
              </>
            )}
          </dl>
        )}
        <DevicePicker
          id="deviceId"
          testid="binding-device"
          label={`Device (${k.label} connection)`}
          value={state.deviceId}
          error={shown("deviceId")}
          onChange={(v) => set("deviceId", { deviceId: v })}
        />
        {kind === "lora" && (
          <Field id="applicationServerId" label="Application server id" error={shown("applicationServerId")} hint="16 hex characters, unique across the service">
            <input
              id="applicationServerId"
              class="mono"
              value={state.applicationServerId}
              autoComplete="off"
              spellcheck={false}
              onInput={(e) => set("applicationServerId", { applicationServerId: e.currentTarget.value })}
            />
          </Field>
        )}
        {kind === "http" && (
          <Field id="type" label="Type" error={shown("type")}>
            <select id="type" onChange={(e) => set("type", { type: e.currentTarget.value })}>
              {HTTP_TYPES.map((t) => (
                <option key={t} value={t} selected={state.type === t}>
                  {t}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field
          id={k.secretField}
          label={k.secretLabel}
          error={shown(k.secretField)}
          hint={
            binding
              ? binding.hasSecret
                ? `Stored; type to replace it, or leave empty to keep it.`
                : "The service does not send the stored one back, so it cannot be kept: type it again."
              : kind === "lora"
                ? "32 hex characters: the device's over-the-air activation key"
                : kind === "mqtt"
                  ? "At least 24 characters with a lower-case and an upper-case letter, a digit and a special character"
                  : "The service sets the rule; Generate makes 32 random characters"
          }
        >
          <SecretInput
            id={k.secretField}
            kind={kind}
            value={state.secret}
            onInput={(v) => set(k.secretField, { secret: v })}
            editing={editing}
            stored={binding?.hasSecret ?? false}
            canGenerate={k.canGenerate}
            invalid={!!shown(k.secretField)}
          />
        </Field>
        {binding && (
          <div class="field">
            <span class="field-label">Stored {k.secretLabel.toLowerCase()}</span>
            <StoredSecret kind={kind} id={binding.id} label={k.secretLabel} hasSecret={binding.hasSecret} />
          </div>
        )}
        {failure !== null && <ErrorBox error={failure} />}
        <div class="dialog-actions">
          <ModalCancel>Cancel</ModalCancel>
          <button type="submit" class="button button-primary" disabled={sending} data-testid="save-binding">
            {sending ? "Saving…" : binding ? "Save…" : "Create…"}
          </button>
        </div>
      </form>
    </Modal>
  );
}

export function StatusTag({ status }: { status: string | null | undefined }) {
  if (!status) return <span class="muted">—</span>;
  return (
    <span class={status === "ACTIVE" ? "tag tag-active" : "tag"} data-testid="binding-status">
      {status}
    </span>
  );
}
