import { useEffect, useState } from "preact/hooks";

/**
 * A filter input that applies on Enter or when left (a date-time one when changed), so a list
 * is not fetched per keystroke. Takes a new `value` from outside (filters cleared).
 */
export function FilterText<K extends string>({
  label,
  name,
  value,
  onApply,
  placeholder,
  type = "text",
  idPrefix,
}: {
  label: string;
  /** The filter's name: `data-testid` is `filter-<name>`. */
  name: K;
  value: string;
  onApply: (name: K, v: string) => void;
  placeholder?: string;
  type?: string;
  /** The input's id is `<idPrefix>-<name>-filter`. */
  idPrefix: string;
}) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <label>
      <span>{label}</span>
      <input
        type={type}
        class={type === "text" ? "mono" : undefined}
        id={`${idPrefix}-${name}-filter`}
        data-testid={`filter-${name}`}
        placeholder={placeholder}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onBlur={() => text !== value && onApply(name, text)}
        onChange={(e) => type !== "text" && onApply(name, e.currentTarget.value)}
        onKeyDown={(e) => e.key === "Enter" && onApply(name, text)}
      />
    </label>
  );
}

/** A filter choice among fixed values, "Any" (the empty value) first; applies when changed. */
export function FilterSelect<K extends string>({
  label,
  name,
  value,
  options,
  onApply,
  anyLabel = "Any",
}: {
  label: string;
  /** The filter's name: `data-testid` is `filter-<name>`. */
  name: K;
  value: string;
  options: { value: string; label: string }[];
  onApply: (name: K, v: string) => void;
  anyLabel?: string;
}) {
  return (
    <label>
      <span>{label}</span>
      <select data-testid={`filter-${name}`} onChange={(e) => onApply(name, e.currentTarget.value)}>
        <option value="" selected={!value}>
          {anyLabel}
        </option>
        {options.map((o) => (
          <option key={o.value} value={o.value} selected={value === o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}
