import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Pager, type FetchPage, type PagerState } from "./pager";

/**
 * A paged list for a view: the first page whenever `deps` change, more pages when the returned
 * sentinel row scrolls into view.
 */
export function usePagedList<T>(fetchPage: FetchPage<T>, deps: unknown[]) {
  const pager = useMemo(() => new Pager<T>(async () => ({ items: [], next: null })), []);
  const [state, setState] = useState<PagerState<T>>(pager.snapshot);
  const sentinel = useRef<HTMLTableRowElement>(null);

  useEffect(() => pager.subscribe(setState), [pager]);
  useEffect(() => {
    void pager.reload(fetchPage);
  }, [pager, ...deps]);

  useEffect(() => {
    const el = sentinel.current;
    if (!el) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void pager.loadMore();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [pager, state.status, state.items.length]);

  return { pager, state, sentinel };
}
