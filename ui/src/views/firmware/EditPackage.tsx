import { useEffect, useState } from "preact/hooks";
import { useConfirm } from "../../components/Confirm";
import { Field } from "../../components/Field";
import { Modal, ModalCancel } from "../../components/Modal";
import { ErrorBox } from "../../components/States";
import { ipc, type FirmwarePackage } from "../../ipc";
import { byField, useFormSend } from "../../lib/forms";
import { useSession } from "../../session";

/**
 * Changes a package's description, the only field the service lets change: the fixed fields
 * are shown read-only with the reason. An empty description removes it.
 */
export function EditPackageDialog({
  pkg,
  onClose,
  onSaved,
}: {
  pkg: FirmwarePackage;
  onClose: () => void;
  onSaved: (p: FirmwarePackage) => void;
}) {
  const { info } = useSession();
  const [description, setDescription] = useState(pkg.description ?? "");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [confirmElement, confirm] = useConfirm();
  const { sending, failure, send } = useFormSend(["description"], (f) => setErrors((old) => ({ ...old, ...f })));
  useEffect(() => {
    let live = true;
    void ipc
      .checkPackage({
        deviceSpecificationId: pkg.deviceSpecificationId,
        moduleId: pkg.moduleId,
        firmwareVersion: pkg.firmwareVersion,
        description: description === "" ? null : description,
        actingFor: null,
      })
      .then((list) => live && setErrors(byField(list)));
    return () => {
      live = false;
    };
  }, [description]);

  const unchanged = description === (pkg.description ?? "");
  const submit = async (e: Event) => {
    e.preventDefault();
    if (errors.description || unchanged || !info) return;
    const ok = await confirm({
      title: description === "" ? "Remove the description?" : "Change the description?",
      body: (
        <p>
          Package <strong>{pkg.firmwareVersion}</strong>
          {pkg._embedded?.module ? ` of ${pkg._embedded.module.name}` : ""}.
        </p>
      ),
      confirmLabel: description === "" ? "Remove description" : "Save description",
      acting: { profile: info.profile, customer: info.acting },
    });
    if (!ok) return;
    const actingFor = info.acting?.id ?? null;
    const saved = await send(() => ipc.updatePackageDescription({ packageId: pkg.id, description: description === "" ? null : description, actingFor }));
    if (saved) onSaved(saved);
  };

  return (
    <Modal testid="edit-package-dialog" labelledBy="edit-package-title" onClose={onClose} busy={sending} dirty={description !== (pkg.description ?? "")}>
      {confirmElement}
      <form onSubmit={submit} novalidate>
        <h2 id="edit-package-title">Package {pkg.firmwareVersion}</h2>
        <dl class="facts">
          <dt>Firmware version</dt>
          <dd>
            <code>{pkg.firmwareVersion}</code>
          </dd>
          <dt>Module</dt>
          <dd>{pkg._embedded?.module?.name ?? <code>{pkg.moduleId}</code>}</dd>
          <dt>Device specification</dt>
          <dd>{pkg._embedded?.deviceSpecification?.name ?? <code>{pkg.deviceSpecificationId}</code>}</dd>
          <dt>Firmware file</dt>
          <dd>{pkg.firmwareFileName ?? <span class="muted">none yet</span>}</dd>
        </dl>
        <p class="muted" data-testid="fixed-fields-why">
          The version, module and device specification are fixed when a package is created, and its firmware file is
          uploaded once and never replaced: the service lets only the description change. For another version, create
          a new package.
        </p>
        <Field id="description" label="Description" error={errors.description} hint="Up to 300 printable characters; empty removes it">
          <textarea id="description" rows={3} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </Field>
        {failure !== null && <ErrorBox error={failure} />}
        <div class="dialog-actions">
          <ModalCancel>Cancel</ModalCancel>
          <button type="submit" class="button button-primary" disabled={sending || unchanged || !!errors.description} data-testid="save-description">
            {sending ? "Saving…" : "Save…"}
          </button>
        </div>
      </form>
    </Modal>
  );
}
