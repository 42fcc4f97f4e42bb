// What the operator chose last (area, tab, filters, sort), kept across starts in the web view's
// local storage. Nothing secret is ever stored here: only names of views and filter values. A
// stored value is untrusted (an older version, or a hand edit, may have written it): each caller
// gives a check, and a value that fails it is ignored.

import { useEffect, useState } from "preact/hooks";

const PREFIX = "dcs.ui.";

/** The stored value of `key` if it passes `valid`, else `fallback`. */
export function recall<T>(key: string, fallback: T, valid: (v: unknown) => v is T): T {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    if (raw === null) return fallback;
    const v: unknown = JSON.parse(raw);
    return valid(v) ? v : fallback;
  } catch {
    return fallback;
  }
}

export function remember(key: string, value: unknown): void {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // Storage full or unavailable: the choice is only not remembered.
  }
}

/** `useState` whose value outlives the app: read once at mount, written on every change. */
export function useRemembered<T>(key: string, fallback: T, valid: (v: unknown) => v is T): [T, (v: T | ((latest: T) => T)) => void] {
  const [value, setValue] = useState<T>(() => recall(key, fallback, valid));
  useEffect(() => remember(key, value), [key, value]);
  return [value, setValue];
}

/** A check for `useRemembered`: one of the given strings. */
export function oneOf<T extends string>(...allowed: readonly T[]) {
  return (v: unknown): v is T => typeof v === "string" && (allowed as readonly string[]).includes(v);
}

export const isString = (v: unknown): v is string => typeof v === "string" && v.length <= 500;
