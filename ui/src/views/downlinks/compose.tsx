import { useEffect, useState } from "preact/hooks";
import { Field } from "../../components/Field";
import type { DownlinkPreview } from "../../ipc";
import { byField } from "../../lib/forms";

/**
 * What both downlink composers keep beside their draft: Rust's preview of it (asked again on
 * every change), which fields the user has touched (errors show only there, or everywhere once
 * they try to send), and the service's own field errors until that field is edited again.
 */
export function useDraftPreview<D>(draft: D, check: (d: D) => Promise<DownlinkPreview>) {
  const [preview, setPreview] = useState<DownlinkPreview | null>(null);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [served, setServed] = useState<Record<string, string>>({});

  useEffect(() => {
    let live = true;
    void check(draft).then((p) => live && setPreview(p));
    return () => {
      live = false;
    };
  }, [draft]);

  const errors = byField(preview?.errors ?? []);
  return {
    preview,
    /** The error to show next to `field`, if any. */
    shown: (field: string) => (touched.has(field) || touched.has("*") ? (served[field] ?? errors[field]) : undefined),
    /** The user edited `field`: show its own errors and forget the service's. */
    touch: (field: string) => {
      setTouched((t) => new Set(t).add(field));
      setServed((s) => {
        const { [field]: _gone, ...rest } = s;
        return rest;
      });
    },
    /** The service named these fields (from `useFormSend`). */
    serve: (fields: Record<string, string>) => setServed((old) => ({ ...old, ...fields })),
    /** Before sending: every error shows, and the preview is asked afresh for the draft as it is. */
    checkAll: async () => {
      setTouched(new Set(["*"]));
      const p = await check(draft);
      setPreview(p);
      return p;
    },
  };
}

/** A text field of a composer: one line, or a monospaced area for JSON and longer payloads. */
export function DraftText({
  id,
  label,
  hint,
  error,
  value,
  onInput,
  mono,
  area,
  placeholder,
}: {
  id: string;
  label: string;
  hint: string;
  error?: string;
  value: string;
  onInput: (value: string) => void;
  mono?: boolean;
  area?: boolean;
  placeholder?: string;
}) {
  return (
    <Field id={id} label={label} error={error} hint={hint}>
      {area ? (
        <textarea
          id={id}
          rows={4}
          class="mono"
          spellcheck={false}
          placeholder={placeholder}
          value={value}
          onInput={(e) => onInput(e.currentTarget.value)}
        />
      ) : (
        <input
          id={id}
          class={mono ? "mono" : undefined}
          autoComplete="off"
          spellcheck={false}
          placeholder={placeholder}
          value={value}
          onInput={(e) => onInput(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** A choice among a few options, as a row of joined buttons (the method variant, the payload form). */
export function Segmented<T extends string>({
  label,
  options,
  value,
  onSelect,
  testid,
}: {
  label: string;
  options: readonly { id: T; label: string }[];
  value: T;
  onSelect: (id: T) => void;
  /** Each button's test id is `${testid}-${id}`. */
  testid: string;
}) {
  return (
    <div class="segmented" role="radiogroup" aria-label={label}>
      {options.map((o) => (
        <button
          key={o.id}
          type="button"
          role="radio"
          aria-checked={value === o.id}
          class={value === o.id ? "segment active" : "segment"}
          data-testid={`${testid}-${o.id}`}
          onClick={() => onSelect(o.id)}
        >
          {o.label}
        </button>
      ))}
    </div>
  );
}
