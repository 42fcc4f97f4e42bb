import { formatLocal, formatTimestamp, relativeTime } from "../lib/format";

/**
 * A moment as the operator reads it: local time on one line (or how long ago, with `relative`),
 * the UTC time and the other form in the tooltip. Every screen shows times through this.
 */
export function Time({ at, seconds = false, relative = false }: { at: string | null | undefined; seconds?: boolean; relative?: boolean }) {
  if (!at) return <span class="muted">—</span>;
  const local = formatLocal(at, seconds);
  const ago = relativeTime(at);
  const shown = relative && ago ? ago : local;
  const title = `${relative ? local + " local · " : ago ? ago + " · " : ""}${formatTimestamp(at, true)} UTC`;
  return (
    <time class="time" dateTime={at} title={title}>
      {shown}
    </time>
  );
}
