import { describe, expect, it } from "vitest";
import { describePrincipal, formatTimestamp, hostOf, shortId, toggleSort } from "./format";

describe("format", () => {
  it("formats timestamps in UTC and keeps unparsable ones", () => {
    expect(formatTimestamp("2026-01-05T08:00:00.000Z")).toBe("2026-01-05 08:00");
    expect(formatTimestamp("2026-01-05T10:30:00+02:00")).toBe("2026-01-05 08:30");
    expect(formatTimestamp(null)).toBe("");
    expect(formatTimestamp("yesterday")).toBe("yesterday");
    expect(formatTimestamp("2026-01-05T08:00:07.500Z", true)).toBe("2026-01-05 08:00:07");
  });
  it("shortens ids and URLs", () => {
    expect(shortId("0f8fad5b-d9cb-469f-a165-70867728950e")).toBe("0f8fad5b");
    expect(hostOf("http://127.0.0.1:43125/")).toBe("127.0.0.1:43125");
    expect(hostOf("not a url")).toBe("not a url");
  });
  it("toggles sort between ascending and descending", () => {
    expect(toggleSort(null, "name")).toBe("name");
    expect(toggleSort("name", "name")).toBe("-name");
    expect(toggleSort("-name", "name")).toBe("name");
    expect(toggleSort("createdAt", "name")).toBe("name");
  });
});

describe("local and relative times", () => {
  it("formats local time on one line and says how long ago", async () => {
    const { formatLocal, relativeTime } = await import("./format");
    const d = new Date(2026, 0, 5, 9, 7, 3);
    expect(formatLocal(d.toISOString())).toBe("2026-01-05 09:07");
    expect(formatLocal(d.toISOString(), true)).toBe("2026-01-05 09:07:03");
    expect(formatLocal("not a time")).toBe("not a time");
    const now = d.getTime();
    expect(relativeTime(new Date(now - 5 * 60_000).toISOString(), now)).toBe("5 min ago");
    expect(relativeTime(new Date(now + 3 * 3600_000).toISOString(), now)).toBe("in 3 h");
    expect(relativeTime(new Date(now - 299 * 86400_000).toISOString(), now)).toBe("299 d ago");
    expect(relativeTime(new Date(now - 10_000).toISOString(), now)).toBe("just now");
    expect(relativeTime("x", now)).toBeNull();
  });
});

describe("describePrincipal", () => {
  it("says who in words, not the service's internal shape", () => {
    expect(describePrincipal("principal/3deb1a2c-0000-4000-8000-000000000001")).toBe("API caller 3deb1a2c");
    expect(describePrincipal("alice@example.com")).toBe("alice@example.com");
    expect(describePrincipal("principal/unknown")).toBe("principal/unknown");
  });
});
