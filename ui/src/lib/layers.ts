// The open layers of the screen (dialogs, their confirmations, a picker's list), innermost last:
// Escape closes only the innermost one. Each layer says how it closes; a form dialog's close
// asks "Discard changes?" first when something was changed (see components/Modal).

import { useLayoutEffect, useRef } from "preact/hooks";

export type Layer = { close: () => void };

export class LayerStack {
  private layers: Layer[] = [];

  /** Opens a layer on top of the others; the answer removes it (wherever it is by then). */
  push(layer: Layer): () => void {
    this.layers.push(layer);
    return () => {
      const i = this.layers.lastIndexOf(layer);
      if (i >= 0) this.layers.splice(i, 1);
    };
  }

  get depth(): number {
    return this.layers.length;
  }

  /** Escape: asks the innermost layer to close; false when none is open. */
  escape(): boolean {
    const top = this.layers[this.layers.length - 1];
    if (!top) return false;
    top.close();
    return true;
  }
}

/** The app's one stack. */
export const layers = new LayerStack();

/**
 * Routes Escape to the innermost layer, before anything else sees it (a dialog's own Escape
 * would close the dialog under a picker or a confirmation). Installed once, by the first layer.
 */
let installed = false;
function installEscape() {
  if (installed || typeof document === "undefined") return;
  installed = true;
  document.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "Escape" || e.isComposing) return;
      if (layers.escape()) {
        e.preventDefault();
        e.stopPropagation();
      }
    },
    true,
  );
}

/**
 * While `open`, the component is a layer: Escape calls `close` when it is the innermost one.
 * `close` may change from render to render; the newest is called. A layout effect: the layer
 * comes and goes with the render that shows or removes it, so an Escape pressed right after a
 * layer closed reaches the one below (a plain effect runs a frame later).
 */
export function useLayer(open: boolean, close: () => void) {
  const latest = useRef(close);
  latest.current = close;
  useLayoutEffect(() => {
    if (!open) return;
    installEscape();
    return layers.push({ close: () => latest.current() });
  }, [open]);
}

/**
 * Whether a form's values differ from those it opened with: plain data (strings, numbers,
 * booleans, null, arrays, objects; key order ignored). An `undefined` member counts as absent.
 */
export function isChanged(initial: unknown, now: unknown): boolean {
  return !same(initial, now);
}

function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (a instanceof Set && b instanceof Set) return a.size === b.size && [...a].every((x) => b.has(x));
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => same(x, b[i]));
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
    const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}
