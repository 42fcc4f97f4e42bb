import {
  elementScroll,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
  type PartialKeys,
  type VirtualizerOptions,
} from "@tanstack/virtual-core";
import { useLayoutEffect, useReducer, useState } from "preact/hooks";

export type ElementVirtualizerOptions<S extends Element, I extends Element> = PartialKeys<
  VirtualizerOptions<S, I>,
  "observeElementRect" | "observeElementOffset" | "scrollToFn"
>;

/**
 * A @tanstack/virtual-core `Virtualizer` over a scrolling element, for Preact (the library ships
 * adapters for other frameworks only). One instance per component; its options are refreshed on
 * every render, and it renders the component again whenever the range in view changes.
 */
export function useVirtualizer<S extends Element, I extends Element>(
  options: ElementVirtualizerOptions<S, I>,
): Virtualizer<S, I> {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const resolved: VirtualizerOptions<S, I> = {
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    ...options,
    onChange: (instance, sync) => {
      rerender(0);
      options.onChange?.(instance, sync);
    },
  };
  const [instance] = useState(() => new Virtualizer<S, I>(resolved));
  instance.setOptions(resolved);
  useLayoutEffect(() => instance._didMount(), []);
  useLayoutEffect(() => {
    instance._willUpdate();
  });
  return instance;
}
