import { describe, expect, it } from "vitest";
import { shortcutOf, SHORTCUTS } from "./shortcuts";

const press = (key: string, o: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean; typing: boolean }> = {}) =>
  shortcutOf({ key, ctrlKey: false, metaKey: false, altKey: false, typing: false, ...o });

describe("keyboard shortcuts", () => {
  it("Ctrl or Cmd with a digit goes to that area, also while typing", () => {
    expect(press("2", { ctrlKey: true })).toEqual({ kind: "area", area: "firmware" });
    expect(press("6", { metaKey: true, typing: true })).toEqual({ kind: "area", area: "settings" });
    expect(press("7", { ctrlKey: true })).toBeNull();
    expect(press("2")).toBeNull();
    expect(press("2", { ctrlKey: true, altKey: true })).toBeNull();
  });

  it("? opens the sheet, but is a character in a field", () => {
    expect(press("?")).toEqual({ kind: "sheet" });
    expect(press("?", { typing: true })).toBeNull();
  });

  it("every shortcut in the sheet is one the handler answers", () => {
    for (const s of SHORTCUTS) {
      const [mod, key] = s.keys.includes("+") ? s.keys.split("+") : ["", s.keys];
      expect(press(key, { ctrlKey: mod === "Ctrl" })).toEqual(s.does);
    }
  });
});
