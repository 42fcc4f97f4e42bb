import type { ChartConfiguration, ChartDataset, Plugin } from "chart.js";
import { useEffect, useLayoutEffect, useMemo, useRef } from "preact/hooks";
import { formatLocalTime, timelineSeries, timeTickFormat, timeTicks, type StatusSnapshot } from "../../lib/chartData";
import { statusColor, statusWord, withAlpha } from "../../lib/status";
import { Chart, chartColors, useTheme } from "./setup";
import "./charts.css";

export type StackedTimelineProps = {
  title: string;
  /** Devices per status at each snapshot (any order; sorted by time here). Pass a new array
   *  when they change: the chart redraws when the array does. */
  snapshots: StatusSnapshot[];
  /** Height of the drawing in px. */
  height?: number;
  /** Moments marked with a dashed vertical line and a short label (rollout wave starts). */
  marks?: TimeMark[];
  testid?: string;
};

/** `at`: epoch ms; `label`: a few characters drawn at the line's top; `title`: the tooltip's line. */
export type TimeMark = { at: number; label: string; title: string };

type Point = { x: number; y: number };
type Dataset = ChartDataset<"line", Point[]>;

/**
 * Devices per status over time as stacked areas, on a linear axis of epoch milliseconds whose
 * ticks read as local time. Updated in place as snapshots arrive; made once per mount.
 */
export function StackedTimeline({ title, snapshots, height = 260, marks = [], testid }: StackedTimelineProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<"line", Point[], unknown> | null>(null);
  const theme = useTheme();
  const series = useMemo(() => timelineSeries(snapshots), [snapshots]);
  const xs = series[0]?.points.map((p) => p.x) ?? [];
  const span = xs.length > 1 ? xs[xs.length - 1] - xs[0] : 0;
  const live = useRef({ tick: timeTickFormat(span), marks, muted: "#5d6b7e" });
  live.current.tick = timeTickFormat(span);
  live.current.marks = marks;

  useLayoutEffect(() => {
    const config: ChartConfiguration<"line", Point[], unknown> = {
      type: "line",
      data: { datasets: [] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        parsing: false,
        normalized: true,
        interaction: { mode: "index", intersect: false },
        // Room above the plot for the marks' labels.
        layout: { padding: { top: 16 } },
        scales: {
          x: {
            type: "linear",
            // Ticks at round local times, not at Chart.js's round numbers of milliseconds.
            afterBuildTicks: (axis) => {
              axis.ticks = timeTicks(axis.min, axis.max, Math.max(2, Math.floor(axis.width / 90))).map((value) => ({ value }));
            },
            ticks: { maxRotation: 0, callback: (v) => live.current.tick(Number(v)) },
            grid: {},
          },
          y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, grid: {} },
        },
        plugins: {
          legend: { position: "bottom", labels: { usePointStyle: true, pointStyle: "rectRounded", boxHeight: 8 } },
          tooltip: {
            callbacks: {
              title: (els) => (els.length ? formatLocalTime(els[0].parsed.x ?? 0) : ""),
              label: (el) => `${el.dataset.label}: ${(el.parsed.y ?? 0).toLocaleString()}`,
              footer: (els) => {
                const total = `Total: ${els.reduce((s, e) => s + (e.parsed.y ?? 0), 0).toLocaleString()}`;
                // Wave starts between this snapshot and the one before it.
                const x = els[0]?.parsed.x ?? 0;
                const pts = (els[0]?.dataset.data ?? []) as Point[];
                const i = els[0]?.dataIndex ?? 0;
                const from = i > 0 ? pts[i - 1].x : -Infinity;
                const near = live.current.marks.filter((m) => m.at > from && m.at <= x).map((m) => m.title);
                return [total, ...near];
              },
            },
          },
        },
      },
      plugins: [markLines(live)],
    };
    chart.current = new Chart(canvas.current!, config);
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    const colors = chartColors();
    // Keep each status's dataset object, so a status hidden in the legend stays hidden.
    const old = new Map(c.data.datasets.map((d) => [d.label, d as Dataset]));
    c.data.datasets = series.map((s, i): Dataset => {
      const color = statusColor(s.status, theme);
      const label = statusWord(s.status);
      const d: Dataset = old.get(label) ?? { label, data: [] };
      d.data = s.points;
      d.borderColor = color;
      d.backgroundColor = withAlpha(color, theme === "dark" ? 0.45 : 0.35);
      d.fill = i === 0 ? "origin" : "-1";
      // A lone snapshot has no area to draw: show it as stacked points.
      d.pointRadius = xs.length < 2 ? 4 : 0;
      d.pointHoverRadius = 3;
      d.borderWidth = 1.5;
      return d;
    });
    const x = c.options.scales!.x!;
    const y = c.options.scales!.y!;
    // One snapshot: a window of ten minutes around it, so it is not squeezed to nothing.
    const pad = xs.length < 2 ? 5 * 60_000 : 0;
    x.min = xs[0] - pad;
    x.max = xs[xs.length - 1] + pad;
    for (const axis of [x, y]) {
      axis.ticks!.color = colors.muted;
      axis.grid!.color = colors.grid;
      axis.border = { color: colors.grid };
    }
    c.options.plugins!.legend!.labels!.color = colors.text;
    live.current.muted = colors.muted;
    c.update("none");
  }, [series, theme, JSON.stringify(marks)]);

  const empty = series.length === 0;
  return (
    <figure class="chart" data-testid={testid} style={{ margin: 0 }}>
      <h3>{title}</h3>
      {empty && <div class="chart-empty">No snapshots yet</div>}
      <div class="chart-box" style={{ height: `${height}px`, display: empty ? "none" : undefined }}>
        <canvas
          ref={canvas}
          role="img"
          aria-label={empty ? title : `${title}: ${series.map((s) => `${statusWord(s.status)} ${s.points[s.points.length - 1]?.y ?? 0}`).join(", ")} at the latest snapshot`}
        />
      </div>
    </figure>
  );
}

/** Dashed vertical lines at the marks inside the drawn range, each with its label at the top. */
function markLines(live: { current: { marks: TimeMark[]; muted: string } }): Plugin<"line"> {
  return {
    id: "markLines",
    afterDatasetsDraw(c) {
      const x = c.scales.x;
      const { top, bottom, left, right } = c.chartArea;
      const { ctx } = c;
      ctx.save();
      ctx.strokeStyle = live.current.muted;
      ctx.fillStyle = live.current.muted;
      ctx.setLineDash([4, 3]);
      ctx.lineWidth = 1;
      ctx.font = `11px ${Chart.defaults.font.family}`;
      ctx.textBaseline = "top";
      for (const m of live.current.marks) {
        const px = x.getPixelForValue(m.at);
        if (!(px >= left && px <= right)) continue;
        ctx.beginPath();
        ctx.moveTo(px, top);
        ctx.lineTo(px, bottom);
        ctx.stroke();
        const w = ctx.measureText(m.label).width;
        ctx.fillText(m.label, Math.min(Math.max(left, px - w / 2), right - w), top - 15);
      }
      ctx.restore();
    },
  };
}
