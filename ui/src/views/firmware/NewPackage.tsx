import { useEffect, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { Field } from "../../components/Field";
import { Modal, ModalCancel } from "../../components/Modal";
import { ErrorBox } from "../../components/States";
import { ipc, type FirmwareModule, type FirmwarePackage } from "../../ipc";
import { byField, useFormSend } from "../../lib/forms";
import { useSession } from "../../session";

/**
 * Creates a firmware package of a module. The version and description are checked by the
 * client's validators (through a command) as the user types; sending asks first, naming the
 * customer it acts for, and an error keeps what was typed.
 */
export function NewPackageDialog({
  module,
  onClose,
  onCreated,
}: {
  module: FirmwareModule;
  onClose: () => void;
  onCreated: (p: FirmwarePackage) => void;
}) {
  const { info } = useSession();
  const [version, setVersion] = useState("");
  const [description, setDescription] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [confirmElement, confirm] = useConfirm();
  const { sending, failure, send } = useFormSend(["firmwareVersion", "description"], (f) =>
    setErrors((old) => ({ ...old, ...f })),
  );

  const request = () => ({
    deviceSpecificationId: module.deviceSpecificationId,
    moduleId: module.id,
    firmwareVersion: version,
    description: description === "" ? null : description,
    actingFor: info?.acting?.id ?? null,
  });

  useEffect(() => {
    let live = true;
    void ipc.checkPackage(request()).then((list) => live && setErrors(byField(list)));
    return () => {
      live = false;
    };
  }, [version, description]);

  const shown = (f: string) => (touched.has(f) || touched.has("*") ? errors[f] : undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(new Set(["*"]));
    if (Object.keys(errors).length > 0 || !info) return;
    const ok = await confirm({
      title: "Create firmware package?",
      body: (
        <p>
          Package <strong>{version}</strong> of module <strong>{module.name}</strong>. Its file can be uploaded once
          afterwards.
        </p>
      ),
      confirmLabel: "Create package",
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    const created = await send(() => ipc.createPackage(request()));
    if (created) onCreated(created);
  };

  return (
    <Modal testid="new-package-dialog" labelledBy="new-package-title" onClose={onClose} busy={sending} dirty={version !== "" || description !== ""}>
      {confirmElement}
      <form onSubmit={submit} novalidate>
        <h2 id="new-package-title">New firmware package</h2>
        <dl class="facts">
          <dt>Module</dt>
          <dd>{module.name}</dd>
          <dt>Device specification</dt>
          <dd>
            <code>{module.deviceSpecificationId}</code>
          </dd>
        </dl>
        <Field id="firmwareVersion" label="Firmware version" error={shown("firmwareVersion")} hint="1–100 letters, digits, . _ -; unique per module, fixed once created">
          <input
            id="firmwareVersion"
            value={version}
            autoComplete="off"
            onInput={(e) => {
              setVersion(e.currentTarget.value);
              setTouched((t) => new Set(t).add("firmwareVersion"));
            }}
          />
        </Field>
        <Field id="description" label="Description (optional)" error={shown("description")} hint="Up to 300 printable characters; can be changed later">
          <textarea
            id="description"
            rows={3}
            value={description}
            onInput={(e) => {
              setDescription(e.currentTarget.value);
              setTouched((t) => new Set(t).add("description"));
            }}
          />
        </Field>
        {failure !== null && <ErrorBox error={failure} />}
        <div class="dialog-actions">
          <ModalCancel>Cancel</ModalCancel>
          <button type="submit" class="button button-primary" disabled={sending} data-testid="create-package">
            {sending ? "Creating…" : "Create package…"}
          </button>
        </div>
      </form>
    </Modal>
  );
}
