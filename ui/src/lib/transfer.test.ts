import { describe, expect, it } from "vitest";
import { describeProgress, formatBytes, formatEta, fraction } from "./transfer";
import type { TransferProgress } from "../ipc";

const p = (patch: Partial<TransferProgress>): TransferProgress => ({
  job: 1,
  kind: "uploadFirmware",
  phase: "uploading",
  done: 0,
  total: 0,
  ratePerSec: null,
  etaSeconds: null,
  ...patch,
});

describe("formatBytes", () => {
  it("uses binary units with sensible precision", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1536)).toBe("1.50 KiB");
    expect(formatBytes(1024 ** 3)).toBe("1.00 GiB");
    expect(formatBytes(150 * 1024 ** 2)).toBe("150 MiB");
    expect(formatBytes(null)).toBe("0 B");
  });
});

describe("formatEta", () => {
  it("reads as seconds, minutes or hours", () => {
    expect(formatEta(42.4)).toBe("42 s");
    expect(formatEta(65)).toBe("1 min 05 s");
    expect(formatEta(3 * 3600 + 120)).toBe("3 h 02 min");
    expect(formatEta(null)).toBe("—");
  });
});

describe("progress", () => {
  it("gives a share only when the total is known", () => {
    expect(fraction(p({ done: 50, total: 200 }))).toBe(0.25);
    expect(fraction(p({ done: 50, total: 0 }))).toBe(0);
    expect(fraction(null)).toBe(0);
  });
  it("says bytes, rate and time left", () => {
    expect(describeProgress(p({ done: 1024 ** 2, total: 4 * 1024 ** 2, ratePerSec: 1024 ** 2, etaSeconds: 3 }))).toBe(
      "Uploaded 1.00 MiB of 4.00 MiB · 1.00 MiB/s · 3 s left",
    );
    expect(describeProgress(p({ phase: "downloading", done: 10, total: 0 }))).toBe("Downloaded 10 B");
    expect(describeProgress(p({ phase: "hashing", done: 0, total: 1024 }))).toBe("Computing SHA-256: 0 B of 1.00 KiB");
  });
});
