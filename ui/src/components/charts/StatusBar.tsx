import { useState } from "preact/hooks";
import type { Count } from "../../ipc";
import { compareStatus, statusColor, statusWord } from "../../lib/status";
import { useTheme } from "./setup";
import "./charts.css";

/**
 * Devices per update status as one stacked bar across the card, in rollout order, with a legend
 * that names each status with its count and share (so nothing needs a hover to be read); the
 * hovered part's figures show above the bar. A click on a part or its legend entry selects it.
 */
export function StatusBar({ counts, total, onSelect, title = "Devices by update status" }: {
  counts: readonly Count[];
  total: number;
  onSelect?: (status: string) => void;
  title?: string;
}) {
  const theme = useTheme();
  const [hover, setHover] = useState<string | null>(null);
  const parts = [...counts].filter((c) => c.count > 0).sort((a, b) => compareStatus(a.key, b.key));
  const sum = total || parts.reduce((s, c) => s + c.count, 0);
  const pct = (n: number) => (sum ? (n * 100) / sum : 0);
  const pctText = (n: number) => {
    const p = pct(n);
    return p > 0 && p < 1 ? "<1%" : `${Math.round(p)}%`;
  };
  const hovered = parts.find((c) => c.key === hover);
  return (
    <figure class="chart status-bar" style={{ margin: 0 }} data-testid="bars-status">
      <h3>
        {title}
        <span class="status-bar-tip muted" aria-live="polite" data-testid="status-bar-tip">
          {hovered ? `${statusWord(hovered.key)}: ${hovered.count.toLocaleString()} devices (${pctText(hovered.count)})` : ""}
        </span>
      </h3>
      {parts.length === 0 ? (
        <div class="chart-empty">No data</div>
      ) : (
        <>
          <div class="status-bar-track" role="img" aria-label={`${title}: ${parts.map((c) => `${statusWord(c.key)} ${c.count}`).join(", ")}`}>
            {parts.map((c) => (
              <span
                key={c.key}
                class={hover === c.key ? "status-bar-part hovered" : "status-bar-part"}
                style={{ flexGrow: c.count, background: statusColor(c.key, theme) }}
                title={`${statusWord(c.key)}: ${c.count.toLocaleString()} devices (${pctText(c.count)})`}
                onMouseEnter={() => setHover(c.key)}
                onMouseLeave={() => setHover(null)}
                onClick={() => onSelect?.(c.key)}
              />
            ))}
          </div>
          <ul class="status-legend">
            {parts.map((c) => (
              <li key={c.key}>
                <button
                  type="button"
                  class="status-legend-item"
                  data-testid="status-legend"
                  data-status={c.key}
                  disabled={!onSelect}
                  onMouseEnter={() => setHover(c.key)}
                  onMouseLeave={() => setHover(null)}
                  onClick={() => onSelect?.(c.key)}
                  title={onSelect ? `Show these ${c.count.toLocaleString()} devices` : undefined}
                >
                  <span class="status-legend-dot" style={{ background: statusColor(c.key, theme) }} aria-hidden="true" />
                  {statusWord(c.key)} <strong>{c.count.toLocaleString()}</strong> <span class="muted">{pctText(c.count)}</span>
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </figure>
  );
}
