import { useEffect, useState } from "preact/hooks";
import { errorMessage, ipc, type BindingKind } from "../../ipc";

const MASK = "••••••";
/** A revealed secret hides itself again after this long. */
const REVEAL_MS = 60_000;

/**
 * A stored binding secret: masked until the operator clicks Reveal (only then is it asked of
 * Rust), and Copy puts it on the clipboard from Rust without it reaching the page.
 */
export function StoredSecret({ kind, id, label, hasSecret }: { kind: BindingKind; id: string; label: string; hasSecret: boolean }) {
  const [shown, setShown] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);

  useEffect(() => {
    if (shown === null) return;
    const t = setTimeout(() => setShown(null), REVEAL_MS);
    return () => clearTimeout(t);
  }, [shown]);
  useEffect(() => {
    if (!note?.ok) return;
    const t = setTimeout(() => setNote(null), 4000);
    return () => clearTimeout(t);
  }, [note]);

  if (!hasSecret)
    return (
      <span class="muted" data-testid="no-secret">
        not sent by the service
      </span>
    );

  const reveal = async () => {
    setBusy(true);
    setNote(null);
    try {
      setShown(await ipc.revealBindingSecret(kind, id));
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  };
  const copy = async () => {
    setBusy(true);
    setNote(null);
    try {
      await ipc.copyBindingSecret(kind, id);
      setNote({ ok: true, text: "Copied" });
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <span class="secret" data-testid="stored-secret" data-state={shown === null ? "masked" : "revealed"}>
      <code class="secret-value" data-testid="secret-value" aria-label={shown === null ? `${label}, hidden` : label}>
        {shown ?? MASK}
      </code>
      {shown === null ? (
        <button type="button" class="button button-small" disabled={busy} onClick={reveal} data-testid="reveal-secret">
          Reveal
        </button>
      ) : (
        <button type="button" class="button button-small" onClick={() => setShown(null)} data-testid="hide-secret">
          Hide
        </button>
      )}
      <button
        type="button"
        class="button button-small"
        disabled={busy}
        onClick={copy}
        title={`Copy the ${label.toLowerCase()} to the clipboard`}
        data-testid="copy-secret"
      >
        Copy
      </button>
      {note && (
        <span class={note.ok ? "secret-note ok" : "secret-note status-error"} role="status" data-testid="secret-note">
          {note.text}
        </span>
      )}
    </span>
  );
}

/**
 * The input of a secret in the editor: masked while typed unless Show is on; Generate asks Rust
 * for one that meets the kind's rule and shows it. On an edit, empty keeps the stored secret
 * when the service sent it (`stored`); else it has to be typed again.
 */
export function SecretInput({
  id,
  kind,
  value,
  onInput,
  editing,
  stored,
  canGenerate,
  invalid,
}: {
  id: string;
  kind: BindingKind;
  value: string;
  onInput: (v: string) => void;
  editing: boolean;
  stored: boolean;
  canGenerate: boolean;
  invalid: boolean;
}) {
  const [visible, setVisible] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const generate = async () => {
    setFailure(null);
    try {
      onInput(await ipc.generateBindingSecret(kind));
      setVisible(true);
    } catch (e) {
      setFailure(errorMessage(e));
    }
  };
  return (
    <>
      <div class="secret-input">
        <input
          id={id}
          type={visible ? "text" : "password"}
          class="mono"
          value={value}
          autoComplete="off"
          spellcheck={false}
          placeholder={editing ? (stored ? "stored; type to replace" : "not sent by the service; type it again") : ""}
          aria-invalid={invalid}
          aria-describedby={invalid ? `${id}-error` : undefined}
          onInput={(e) => onInput(e.currentTarget.value)}
        />
        <button
          type="button"
          class="button button-small"
          onClick={() => setVisible((v) => !v)}
          aria-pressed={visible}
          data-testid="toggle-typed-secret"
        >
          {visible ? "Hide" : "Show"}
        </button>
        {canGenerate && (
          <button type="button" class="button button-small" onClick={generate} data-testid="generate-secret">
            Generate
          </button>
        )}
      </div>
      {failure && <span class="field-error">{failure}</span>}
    </>
  );
}
