import { describe, expect, it } from "vitest";
import { noteScope, type Switches } from "./switches";

const start: Switches = { scope: null, count: 0 };

describe("noteScope", () => {
  it("counts the first scope known as no switch, so the first screen is not mounted twice", () => {
    const s = noteScope(noteScope(start, null), "simulator|");
    expect(s).toEqual({ scope: "simulator|", count: 0 });
  });

  it("counts every change of profile or customer, back and forth", () => {
    let s = noteScope(start, "simulator|");
    s = noteScope(s, "simulator|c1");
    s = noteScope(s, "simulator|");
    s = noteScope(s, "prod|");
    expect(s).toEqual({ scope: "prod|", count: 3 });
  });

  it("leaves the count as it is for the same scope again or an unknown one", () => {
    const s = noteScope(noteScope(start, "a|"), "a|");
    expect(noteScope(s, null)).toBe(s);
    expect(s.count).toBe(0);
  });
});
