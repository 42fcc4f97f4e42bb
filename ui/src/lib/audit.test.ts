import { describe, expect, it } from "vitest";
import { auditRequest, NO_AUDIT_FILTERS, operationLabel, resultTone } from "./audit";

describe("audit", () => {
  it("sends only the filters that are set, times as UTC", () => {
    expect(auditRequest(NO_AUDIT_FILTERS)).toEqual({ since: null, until: null, customer: null, operation: null, device: null, result: null });
    const r = auditRequest({ ...NO_AUDIT_FILTERS, since: "2026-11-01T08:00", device: "  imei:1 ", result: "unknown" });
    expect(r.since).toBe(new Date("2026-11-01T08:00").toISOString().replace(".000Z", "Z"));
    expect(r.device).toBe("imei:1");
    expect(r.result).toBe("unknown");
    // What is not a time goes as typed, for Rust to name.
    expect(auditRequest({ ...NO_AUDIT_FILTERS, until: "yesterday" }).until).toBe("yesterday");
  });

  it("names operations and outcomes for people", () => {
    expect(operationLabel("downlink.force-cancel")).toBe("Downlink: force cancel");
    expect(operationLabel("firmware-file.upload")).toBe("Firmware file: upload");
    expect(operationLabel("other")).toBe("other");
    expect(operationLabel(".x")).toBe(".x");
    expect([resultTone("done"), resultTone("refused"), resultTone("unknown"), resultTone("not sent"), resultTone("new")]).toEqual([
      "ok",
      "error",
      "warn",
      "muted",
      "muted",
    ]);
  });
});
