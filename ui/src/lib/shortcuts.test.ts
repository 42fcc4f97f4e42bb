import { describe, expect, it } from "vitest";
import { shortcutOf, SHORTCUTS } from "./shortcuts";

const press = (key: string, o: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean; typing: boolean }> = {}) =>
  shortcutOf({ key, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, typing: false, ...o });

describe("keyboard shortcuts", () => {
  it("Ctrl or Cmd with a digit goes to that area, also while typing", () => {
    expect(press("2", { ctrlKey: true })).toEqual({ kind: "area", area: "firmware" });
    expect(press("6", { metaKey: true, typing: true })).toEqual({ kind: "area", area: "audit" });
    expect(press("7", { ctrlKey: true })).toEqual({ kind: "area", area: "settings" });
    expect(press("8", { ctrlKey: true })).toBeNull();
    expect(press("2")).toBeNull();
    expect(press("2", { ctrlKey: true, altKey: true })).toBeNull();
  });

  it("? opens the sheet, but is a character in a field", () => {
    expect(press("?")).toEqual({ kind: "sheet" });
    expect(press("?", { typing: true })).toBeNull();
  });

  it("every shortcut in the sheet is one the handler answers", () => {
    for (const s of SHORTCUTS) {
      const parts = s.keys.split("+");
      const key = parts[parts.length - 1];
      const shift = parts.includes("Shift");
      // As the browser reports it: Shift+p is "P", a plain letter is lower case.
      const typed = key.length === 1 ? (shift ? key.toUpperCase() : key.toLowerCase()) : key;
      expect(press(typed, { ctrlKey: parts.includes("Ctrl"), shiftKey: shift })).toEqual(s.does);
    }
  });

  it("Ctrl+K opens the palette while typing; Shift tells the new-item keys from others", () => {
    expect(press("k", { ctrlKey: true, typing: true })).toEqual({ kind: "palette" });
    expect(press("K", { metaKey: true })).toEqual({ kind: "palette" });
    expect(press("P", { ctrlKey: true, shiftKey: true })).toEqual({ kind: "new-package" });
    expect(press("p", { ctrlKey: true })).toBeNull();
    expect(press("d", { ctrlKey: true })).toBeNull();
    expect(press("k")).toBeNull();
  });

  it("F5 and Ctrl+R refresh the screen instead of reloading the web view", () => {
    expect(press("F5")).toEqual({ kind: "refresh" });
    expect(press("r", { ctrlKey: true })).toEqual({ kind: "refresh" });
    expect(press("r")).toBeNull();
  });
});
