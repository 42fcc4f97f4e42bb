// Chart.js with only the parts the dashboard draws, so the rest stays out of the bundle:
// horizontal bars and stacked areas over a linear time axis (no date adapter).
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from "chart.js";
import { useEffect, useState } from "preact/hooks";
import { currentTheme, type Theme } from "../../lib/status";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Filler, Tooltip, Legend);
// The page's own font (styles.css --font-ui), read once the style sheet is in.
Chart.defaults.font.family = getComputedStyle(document.documentElement).getPropertyValue("--font-ui").trim() || "system-ui, sans-serif";
Chart.defaults.animation = false;

export { Chart };

/** Colours of the app's theme (styles.css variables) for axes, grid lines and labels. */
export type ChartColors = { text: string; muted: string; grid: string; surface: string; accent: string };

export function chartColors(): ChartColors {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  return {
    text: v("--text", "#18202b"),
    muted: v("--muted", "#5d6b7e"),
    grid: v("--border", "#d8dee8"),
    surface: v("--surface", "#ffffff"),
    accent: v("--accent", "#1f6feb"),
  };
}

/** The OS theme, following its changes while the app runs. */
export function useTheme(): Theme {
  const [theme, setTheme] = useState<Theme>(currentTheme);
  useEffect(() => {
    if (!window.matchMedia) return;
    const mq = window.matchMedia("(prefers-color-scheme: dark)");
    const on = () => setTheme(mq.matches ? "dark" : "light");
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, []);
  return theme;
}
