/** The stuck threshold as typed (hours, fractions allowed): the overview's and the comparison's. */
export function HoursField({ id, label, value, invalid, onInput }: { id: string; label: string; value: string; invalid: boolean; onInput: (v: string) => void }) {
  return (
    <label class={invalid ? "invalid" : undefined}>
      <span>{label}</span>
      <input
        type="number"
        min={0}
        step="any"
        class="input-narrow"
        id={id}
        value={value}
        data-testid={id}
        aria-invalid={invalid}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </label>
  );
}
