// The app's keyboard shortcuts: one table, which the key handler (app.tsx) and the shortcuts
// sheet (`?`) both read, so what the sheet says is what the keys do.

import type { Area } from "../areas";

/** What a shortcut does. */
export type Shortcut =
  | { kind: "area"; area: Area }
  | { kind: "sheet" }
  | { kind: "palette" }
  | { kind: "new-package" }
  | { kind: "new-downlink" }
  | { kind: "new-binding" }
  | { kind: "refresh" }
  | { kind: "customer" };

/** The shortcuts, as the sheet lists them: keys as shown, and what they do. */
export const SHORTCUTS: { keys: string; label: string; does: Shortcut }[] = [
  { keys: "Ctrl+1", label: "Home", does: { kind: "area", area: "home" } },
  { keys: "Ctrl+2", label: "Firmware", does: { kind: "area", area: "firmware" } },
  { keys: "Ctrl+3", label: "Rollouts", does: { kind: "area", area: "rollouts" } },
  { keys: "Ctrl+4", label: "Downlinks", does: { kind: "area", area: "downlinks" } },
  { keys: "Ctrl+5", label: "Bindings", does: { kind: "area", area: "bindings" } },
  { keys: "Ctrl+6", label: "Audit log", does: { kind: "area", area: "audit" } },
  { keys: "Ctrl+7", label: "Settings", does: { kind: "area", area: "settings" } },
  { keys: "Ctrl+K", label: "Command palette: any action, device, module, package, downlink, binding, rollout", does: { kind: "palette" } },
  { keys: "Ctrl+Shift+P", label: "New package (of a module you choose)", does: { kind: "new-package" } },
  { keys: "Ctrl+Shift+D", label: "New downlink", does: { kind: "new-downlink" } },
  { keys: "Ctrl+Shift+B", label: "New binding", does: { kind: "new-binding" } },
  { keys: "Ctrl+Shift+C", label: "Switch customer", does: { kind: "customer" } },
  { keys: "Ctrl+R", label: "Refresh this screen", does: { kind: "refresh" } },
  { keys: "?", label: "These shortcuts", does: { kind: "sheet" } },
];

/** What the dialogs and lists do with keys everywhere (listed in the sheet, handled by them). */
export const EVERYWHERE: { keys: string; label: string }[] = [
  { keys: "Tab / Shift+Tab", label: "Next / previous control (kept inside an open dialog)" },
  { keys: "Escape", label: "Close the open list, then the dialog (asks first if it holds changes)" },
  { keys: "Enter / Space", label: "The focused button or link" },
];

/** A key press as the handler sees it. */
export type KeyPress = { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey?: boolean; typing: boolean };

/**
 * The shortcut a key press asks for, or null. Ctrl (or Cmd) with a key works anywhere, also
 * while typing in a field (F5 as Ctrl+R: both would reload the web view); `?` only outside
 * fields (it is a character there).
 */
export function shortcutOf(e: KeyPress): Shortcut | null {
  if (e.altKey) return null;
  const mod = e.ctrlKey || e.metaKey;
  if (!mod && e.key === "F5") return { kind: "refresh" };
  if (mod) {
    // Shift changes the key's character (Shift+p is "P"): the letter is compared upper-cased.
    const key = e.key.length === 1 ? e.key.toUpperCase() : e.key;
    const keys = `Ctrl+${e.shiftKey && /^[A-Z]$/.test(key) ? "Shift+" : ""}${key}`;
    return SHORTCUTS.find((s) => s.keys === keys)?.does ?? null;
  }
  if (e.key === "?" && !e.typing) return { kind: "sheet" };
  return null;
}

/** Whether the focus is where keys type text (a field, a text area, an editable element). */
export function isTyping(el: Element | null): boolean {
  if (!el) return false;
  if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true;
  if (el instanceof HTMLInputElement) return !["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].includes(el.type);
  return (el as HTMLElement).isContentEditable === true;
}
