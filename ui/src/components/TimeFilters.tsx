import { FilterText } from "./FilterText";
import { TIME_FIELDS, timeCount, type TimeField, type TimeWindow } from "../lib/timeWindow";

/**
 * The time filters of a list, the same on every screen: folded under "Time filters" (open,
 * and saying how many are on, while any is set), each a date-time in the operator's local time
 * (sent as UTC). `fields` limits them to those the list offers.
 */
export function TimeFilters({
  value,
  onApply,
  idPrefix,
  fields,
  invalid,
}: {
  value: TimeWindow;
  onApply: (field: TimeField, v: string) => void;
  idPrefix: string;
  fields?: readonly string[];
  /** The field a refusal named, marked invalid. */
  invalid?: string | null;
}) {
  const shown = TIME_FIELDS.filter((f) => !fields || fields.includes(f.id));
  if (shown.length === 0) return null;
  const on = timeCount(value);
  return (
    <details class="time-filters" open={on > 0} data-testid="time-filters">
      <summary>{on > 0 ? `Time filters (${on} on)` : "Time filters"}</summary>
      <div class="filters">
        {shown.map((f) => (
          <span key={f.id} class={invalid === f.id ? "time-filter invalid" : "time-filter"}>
            <FilterText
              idPrefix={idPrefix}
              label={`${f.label} (local time)`}
              name={f.id}
              type="datetime-local"
              value={value[f.id]}
              onApply={onApply}
            />
          </span>
        ))}
      </div>
    </details>
  );
}
