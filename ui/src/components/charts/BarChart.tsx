import type { ActiveElement, ChartConfiguration, ChartEvent, Plugin } from "chart.js";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { middleEllipsis, shapeBars, type BarItem, type ShapedBar } from "../../lib/chartData";
import type { Theme } from "../../lib/status";
import { Chart, chartColors, useTheme, type ChartColors } from "./setup";
import "./charts.css";

export type BarChartProps = {
  title: string;
  /** Devices by version, status, specification or customer; sorted and capped here. */
  items: BarItem[];
  /** A click on a bar (not on the "other" bar) gives its full label. */
  onSelect?: (label: string) => void;
  /** Colour of a bar without its own `color` (e.g. `statusColor`); the theme's accent if absent. */
  colorOf?: (label: string, theme: Theme) => string;
  /** Bars at most, the "other" bar included. */
  maxBars?: number;
  /** Longest label shown at the axis; longer ones are cut in the middle (full in the tooltip). */
  labelChars?: number;
  format?: (value: number) => string;
  /** What the values count, for the tooltip ("213 devices"). */
  unit?: string;
  testid?: string;
};

const BAR_PX = 26;
const LABEL_FONT = () => `12px ${Chart.defaults.font.family}`;

/**
 * Horizontal bars, largest first, each with its value at its end. Updated in place when the
 * items change; the chart is made once per mount.
 */
export function BarChart({ title, items, onSelect, colorOf, maxBars = 12, labelChars = 24, format = fmt, unit = "devices", testid }: BarChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<"bar", number[], string> | null>(null);
  const theme = useTheme();
  const bars = shapeBars(items, maxBars);
  // What the chart's callbacks read: always the latest render's values.
  const live = useRef({ bars, onSelect, format, unit, colors: null as ChartColors | null });
  live.current = { ...live.current, bars, onSelect, format, unit };

  useLayoutEffect(() => {
    const colors = chartColors();
    live.current.colors = colors;
    const config: ChartConfiguration<"bar", number[], string> = {
      type: "bar",
      data: { labels: [], datasets: [{ data: [], borderRadius: 3, maxBarThickness: 20, barPercentage: 0.85, categoryPercentage: 0.9 }] },
      options: {
        indexAxis: "y",
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        layout: { padding: { right: 48 } },
        // The tooltip shows anywhere along a bar's row, not only over the (maybe thin) bar.
        interaction: { mode: "index", axis: "y", intersect: false },
        scales: {
          x: { beginAtZero: true, ticks: { precision: 0, maxRotation: 0 }, grid: {} },
          y: {
            grid: { display: false },
            ticks: { autoSkip: false, callback: (_v, i) => middleEllipsis(live.current.bars[i]?.label ?? "", labelChars) },
          },
        },
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              title: (els) => live.current.bars[els[0]?.dataIndex ?? 0]?.label ?? "",
              label: (el) => {
                const b = live.current.bars[el.dataIndex];
                const n = live.current.format(el.parsed.x ?? 0);
                return b?.others ? `${n} ${live.current.unit} (${b.others} smaller groups)` : `${n} ${live.current.unit}`;
              },
            },
          },
        },
        onClick: (_e: ChartEvent, els: ActiveElement[]) => {
          const b = els.length ? live.current.bars[els[0].index] : undefined;
          if (b && !b.others) live.current.onSelect?.(b.label);
        },
        onHover: (e: ChartEvent, els: ActiveElement[]) => {
          const b = els.length ? live.current.bars[els[0].index] : undefined;
          const target = e.native?.target as HTMLElement | undefined;
          if (target) target.style.cursor = b && !b.others && live.current.onSelect ? "pointer" : "default";
        },
      },
      plugins: [valueLabels(live)],
    };
    chart.current = new Chart(canvas.current!, config);
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
  }, []);

  // Data or theme changed: the same chart, new numbers and colours, no animation.
  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    const colors = chartColors();
    live.current.colors = colors;
    c.data.labels = bars.map((b) => b.label);
    const ds = c.data.datasets[0];
    ds.data = bars.map((b) => b.value);
    ds.backgroundColor = bars.map((b) => barColor(b, theme, colors, colorOf));
    const x = c.options.scales!.x!;
    const y = c.options.scales!.y!;
    x.ticks!.color = colors.muted;
    x.grid!.color = colors.grid;
    x.border = { color: colors.grid };
    y.ticks!.color = colors.text;
    y.border = { color: colors.grid };
    // Room at the right for the widest value label.
    c.ctx.save();
    c.ctx.font = LABEL_FONT();
    const widest = Math.max(0, ...bars.map((b) => c.ctx.measureText(format(b.value)).width));
    c.ctx.restore();
    c.options.layout!.padding = { right: Math.ceil(widest) + 12 };
    c.update("none");
  }, [JSON.stringify(bars), theme, colorOf]);

  const height = Math.max(1, bars.length) * BAR_PX + 30;
  return (
    <figure class="chart" data-testid={testid} style={{ margin: 0 }}>
      <h3>{title}</h3>
      {bars.length === 0 && <div class="chart-empty">No data</div>}
      <div class="chart-box" style={{ height: `${height}px`, display: bars.length ? undefined : "none" }}>
        <canvas ref={canvas} role="img" aria-label={`${title}: ${bars.map((b) => `${b.label} ${format(b.value)}`).join(", ")}`} />
      </div>
    </figure>
  );
}

function barColor(b: ShapedBar, theme: Theme, colors: ChartColors, colorOf?: (label: string, theme: Theme) => string): string {
  if (b.others) return colors.muted;
  return b.color ?? colorOf?.(b.label, theme) ?? colors.accent;
}

function fmt(n: number): string {
  return n.toLocaleString();
}

/** Draws each bar's value just past its end, in the theme's text colour. */
function valueLabels(live: { current: { bars: ShapedBar[]; format: (n: number) => string; colors: ChartColors | null } }): Plugin<"bar"> {
  return {
    id: "valueLabels",
    afterDatasetsDraw(c) {
      const meta = c.getDatasetMeta(0);
      const { ctx } = c;
      ctx.save();
      ctx.fillStyle = live.current.colors?.text ?? "#000";
      ctx.font = LABEL_FONT();
      ctx.textBaseline = "middle";
      meta.data.forEach((el, i) => {
        const b = live.current.bars[i];
        if (!b) return;
        const { x, y } = el.getProps(["x", "y"], true) as { x: number; y: number };
        ctx.fillText(live.current.format(b.value), x + 5, y);
      });
      ctx.restore();
    },
  };
}
