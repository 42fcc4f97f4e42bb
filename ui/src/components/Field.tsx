import type { ComponentChildren } from "preact";

/** A labelled form field with its hint and, when a rule is broken, the rule beside it. */
export function Field({
  id,
  label,
  error,
  hint,
  children,
}: {
  id: string;
  label: ComponentChildren;
  error?: string | null;
  hint?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class={error ? "field field-invalid" : "field"}>
      <label for={id}>{label}</label>
      {children}
      {error ? (
        <span class="field-error" id={`${id}-error`} role="alert" data-testid={`error-${id}`}>
          {error}
        </span>
      ) : (
        hint && <span class="field-hint">{hint}</span>
      )}
    </div>
  );
}
