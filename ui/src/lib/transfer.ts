// Formatting and plumbing of file transfers: progress figures for people, and running a
// transfer command with its progress channel.

import { Channel } from "@tauri-apps/api/core";
import type { TransferProgress } from "../ipc";

/** `1536` → `1.5 KiB`; binary units, as file managers show sizes. */
export function formatBytes(n: number | null | undefined): string {
  const v = n ?? 0;
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let x = v;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0)} ${units[i]}`;
}

/** Seconds left as `1 min 05 s`, `42 s`, or `—` when unknown. */
export function formatEta(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/** Share done, 0 to 1 (0 while the total is unknown). */
export function fraction(p: TransferProgress | null): number {
  if (!p || !p.total) return 0;
  return Math.min(1, (p.done ?? 0) / p.total);
}

/** One line for a progress bar: `12.0 MiB of 100 MiB · 8.5 MiB/s · 10 s left`. */
export function describeProgress(p: TransferProgress): string {
  const verb = p.phase === "hashing" ? "Computing SHA-256:" : p.phase === "uploading" ? "Uploaded" : "Downloaded";
  const of = p.total ? ` of ${formatBytes(p.total)}` : "";
  const rate = p.ratePerSec ? ` · ${formatBytes(p.ratePerSec)}/s` : "";
  const eta = p.total && p.ratePerSec ? ` · ${formatEta(p.etaSeconds)} left` : "";
  return `${verb} ${formatBytes(p.done)}${of}${rate}${eta}`;
}

/**
 * Runs a transfer command with a fresh progress channel. `onProgress` sees every report; the
 * first one carries the job id `cancel` needs.
 */
export function withProgress<T>(
  start: (channel: Channel<TransferProgress>) => Promise<T>,
  onProgress: (p: TransferProgress) => void,
): Promise<T> {
  const channel = new Channel<TransferProgress>();
  channel.onmessage = onProgress;
  return start(channel);
}
