import { beforeEach, describe, expect, it } from "vitest";
import { oneOf, recall, remember } from "./remember";

// The unit tests run under Node, which has no web storage: a plain in-memory one stands in.
const store = new Map<string, string>();
Object.assign(globalThis, {
  localStorage: {
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => void store.set(k, v),
    clear: () => store.clear(),
  },
});

describe("remembered choices", () => {
  beforeEach(() => localStorage.clear());

  it("gives back what was stored", () => {
    remember("area", "downlinks");
    expect(recall("area", "home", oneOf("home", "downlinks"))).toBe("downlinks");
  });

  it("ignores a stored value that fails its check, or is not JSON", () => {
    localStorage.setItem("dcs.ui.area", JSON.stringify("<img onerror=x>"));
    expect(recall("area", "home", oneOf("home", "downlinks"))).toBe("home");
    localStorage.setItem("dcs.ui.area", "{not json");
    expect(recall("area", "home", oneOf("home", "downlinks"))).toBe("home");
  });
});
