import { describe, expect, it } from "vitest";
import { formatTimestamp, hostOf, shortId, toggleSort } from "./format";

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
