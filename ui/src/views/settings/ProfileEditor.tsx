import { useEffect, useRef, useState } from "preact/hooks";
import { Field } from "../../components/Field";
import { ErrorBox } from "../../components/States";
import { ipc, type ProfileDraft, type ProfileSummary, type TokenCheck } from "../../ipc";
import { byField, useFormSend } from "../../lib/forms";
import { TokenResult } from "./TokenResult";

const EMPTY: ProfileDraft = {
  name: "",
  baseUrl: "",
  authUrl: "",
  clientId: "",
  audience: "",
  customers: [],
  deprecatedSubCustomerMode: false,
};

/**
 * Adds or edits a profile. Every field is checked by Rust as the user types; the secret goes
 * straight to the OS keychain on save and is never shown back (an edited profile's field stays
 * empty: leave it so to keep the stored secret).
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
  const [draft, setDraft] = useState<ProfileDraft>(editing ? editing.draft : EMPTY);
  const [secret, setSecret] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const { sending: saving, failure, setFailure, send } = useFormSend(
    ["name", "baseUrl", "authUrl", "clientId", "audience", "secret"],
    (f) => setErrors((old) => ({ ...old, ...f })),
  );
  const [test, setTest] = useState<{ running: boolean; result?: TokenCheck; error?: unknown }>({ running: false });
  const checkSeq = useRef(0);
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
  const shown = (field: string) => (touched.has(field) || touched.has("*") ? errors[field] : undefined);
  const secretMissing = isNew && secret === "";

  const save = async (e: Event) => {
    e.preventDefault();
    setTouched(new Set(["*"]));
    setFailure(null);
    if (Object.keys(errors).length > 0 || secretMissing) return;
    const saved = await send(() => ipc.saveProfile(draft, secret === "" ? null : secret, isNew));
    if (saved) {
      setSecret("");
      onSaved(saved.profile.name);
    }
  };

  const runTest = async () => {
    setTest({ running: true });
    try {
      setTest({ running: false, result: await ipc.testProfile(draft, secret === "" ? null : secret) });
    } catch (err) {
      setTest({ running: false, error: err });
    }
  };

  return (
    <form class="card form" onSubmit={save} data-testid="profile-editor" aria-labelledby="editor-title" novalidate>
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
            value={draft.name}
            readOnly={!isNew}
            autoComplete="off"
            onInput={(e) => set("name", e.currentTarget.value)}
          />
        </Field>
        <Field id="clientId" label="Client id (API key id)" error={shown("clientId")}>
          <input id="clientId" value={draft.clientId} autoComplete="off" onInput={(e) => set("clientId", e.currentTarget.value)} />
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

      {failure !== null && <ErrorBox error={failure} />}
      {(test.result || test.error !== undefined) && <TokenResult result={test.result} error={test.error} />}

      <div class="form-actions">
        <button type="button" class="button" onClick={runTest} disabled={test.running} data-testid="test-connection">
          {test.running ? "Testing…" : "Test connection"}
        </button>
        <span class="spacer" />
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="button button-primary" disabled={saving} data-testid="save-profile">
          {saving ? "Saving…" : isNew ? "Add profile" : "Save changes"}
        </button>
      </div>
    </form>
  );
}
