import { Field } from "../../components/Field";
import { DAYS, dayLabel, type ScheduleDraft } from "./fleet";

/** Every IANA zone the web view knows, for the time zone's suggestions (Rust checks the name). */
function zones(): string[] {
  try {
    return (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.("timeZone") ?? [];
  } catch {
    return [];
  }
}

/**
 * A rollout's schedule: the time zone, a start time, maintenance windows (days and hours; an end
 * at or before the start ends the next day) and the least time between two waves. Each broken
 * rule is shown next to its field, named as Rust names it (`schedule.windows[1].from`).
 */
export function ScheduleFields({
  draft,
  onChange,
  problems,
}: {
  draft: ScheduleDraft;
  onChange: (d: ScheduleDraft) => void;
  problems: Record<string, string>;
}) {
  const set = (patch: Partial<ScheduleDraft>) => onChange({ ...draft, ...patch });
  const setWindow = (i: number, patch: Partial<ScheduleDraft["windows"][number]>) =>
    set({ windows: draft.windows.map((w, k) => (k === i ? { ...w, ...patch } : w)) });
  const toggleDay = (i: number, day: string) => {
    const days = draft.windows[i].days;
    setWindow(i, { days: days.includes(day) ? days.filter((d) => d !== day) : [...days, day] });
  };
  return (
    <div class="schedule-fields" data-testid="schedule-fields">
      <div class="form-grid">
        <Field id="schedule-zone" label="Time zone" error={problems["schedule.timeZone"]} hint="of the start time and the windows; daylight saving follows the zone">
          <input id="schedule-zone" type="text" list="schedule-zones" data-testid="schedule-zone" value={draft.timeZone}
            spellcheck={false} autocomplete="off" onInput={(e) => set({ timeZone: e.currentTarget.value })} />
        </Field>
        <datalist id="schedule-zones">
          {zones().map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
        <Field id="schedule-start" label="Start at (optional)" error={problems["schedule.startAt"]} hint="no wave starts before; empty: at once">
          <input id="schedule-start" type="datetime-local" data-testid="schedule-start" value={draft.startAt}
            onInput={(e) => set({ startAt: e.currentTarget.value })} />
        </Field>
        <Field id="schedule-gap" label="Minutes between waves" error={problems["schedule.minutesBetweenWaves"]} hint="least time from one wave's start to the next's">
          <input id="schedule-gap" type="text" inputMode="numeric" data-testid="schedule-gap" value={draft.minutesBetweenWaves}
            onInput={(e) => set({ minutesBetweenWaves: e.currentTarget.value })} />
        </Field>
      </div>
      <div class="schedule-windows" data-testid="schedule-windows">
        <span class="field-label">
          Maintenance windows <span class="muted">— waves start only inside one; a wave under way goes on after its window closes</span>
        </span>
        {draft.windows.length === 0 && <p class="muted">No window: waves may start at any time.</p>}
        {problems["schedule.windows"] && (
          <span class="field-error" role="alert">
            {problems["schedule.windows"]}
          </span>
        )}
        {draft.windows.map((w, i) => {
          const err = (f: string) => problems[`schedule.windows[${i}].${f}`];
          return (
            <div class="schedule-window" key={i} data-testid="schedule-window">
              <div class="day-toggles" role="group" aria-label={`Days of window ${i + 1}`}>
                {DAYS.map((d) => (
                  <label key={d} class={w.days.includes(d) ? "day day-on" : "day"} data-testid={`window-day-${d}`} data-on={w.days.includes(d) ? "yes" : "no"}>
                    <input type="checkbox" checked={w.days.includes(d)} onChange={() => toggleDay(i, d)} />
                    {dayLabel(d)}
                  </label>
                ))}
              </div>
              <label class="window-time">
                <span>from</span>
                <input type="time" value={w.from} data-testid="window-from" aria-label={`Window ${i + 1} opens`}
                  onInput={(e) => setWindow(i, { from: e.currentTarget.value })} />
              </label>
              <label class="window-time">
                <span>to</span>
                <input type="time" value={w.to} data-testid="window-to" aria-label={`Window ${i + 1} closes`}
                  onInput={(e) => setWindow(i, { to: e.currentTarget.value })} />
              </label>
              <button type="button" class="button button-small button-quiet" data-testid="window-remove"
                onClick={() => set({ windows: draft.windows.filter((_, k) => k !== i) })}>
                Remove
              </button>
              {(err("days") || err("from") || err("to")) && (
                <span class="field-error" role="alert" data-testid="window-error">
                  {[err("days") && `days: ${err("days")}`, err("from") && `from: ${err("from")}`, err("to") && `to: ${err("to")}`].filter(Boolean).join("; ")}
                </span>
              )}
            </div>
          );
        })}
        <button type="button" class="button button-small" data-testid="window-add"
          onClick={() => set({ windows: [...draft.windows, { days: ["mon", "tue", "wed", "thu", "fri"], from: "22:00", to: "04:00" }] })}>
          Add a window
        </button>
      </div>
    </div>
  );
}
