// A paged list as a small state machine: first page, more pages on demand, errors kept apart
// from the items already shown. Responses that arrive after a reset are dropped.

export interface PageResult<T> {
  items: T[];
  next: string | null;
}

export type PagerStatus = "idle" | "loading" | "ready" | "loadingMore" | "error";

export interface PagerState<T> {
  status: PagerStatus;
  items: T[];
  next: string | null;
  /** The last failure; items already loaded stay visible. */
  error: unknown;
  /** True once a page without a `next` link has arrived. */
  done: boolean;
}

export type FetchPage<T> = (next: string | null) => Promise<PageResult<T>>;

export class Pager<T> {
  private state: PagerState<T> = { status: "idle", items: [], next: null, error: null, done: false };
  private generation = 0;
  /** Pages loaded since the last reset (what a refresh fetches again). */
  private pages = 0;
  private listeners = new Set<(s: PagerState<T>) => void>();

  constructor(private fetchPage: FetchPage<T>) {}

  get snapshot(): PagerState<T> {
    return this.state;
  }

  /** Pages loaded since the last reset (what a refresh, or a watch of the list, covers). */
  get pageCount(): number {
    return this.pages;
  }

  subscribe(fn: (s: PagerState<T>) => void): () => void {
    this.listeners.add(fn);
    fn(this.state);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<PagerState<T>>) {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn(this.state);
  }

  /** Drops everything and loads the first page (also used to retry a failed first page). */
  async reload(fetchPage?: FetchPage<T>): Promise<void> {
    if (fetchPage) this.fetchPage = fetchPage;
    const gen = ++this.generation;
    this.pages = 0;
    this.set({ status: "loading", items: [], next: null, error: null, done: false });
    try {
      const page = await this.fetchPage(null);
      if (gen !== this.generation) return;
      this.pages = 1;
      this.set({ status: "ready", items: page.items, next: page.next, done: page.next === null });
    } catch (error) {
      if (gen !== this.generation) return;
      this.set({ status: "error", error });
    }
  }

  /** Loads the next page, unless one is loading already or the list is complete. */
  async loadMore(): Promise<void> {
    const s = this.state;
    if (s.status !== "ready" || s.done || s.next === null) return;
    const gen = this.generation;
    this.set({ status: "loadingMore", error: null });
    try {
      const page = await this.fetchPage(s.next);
      if (gen !== this.generation) return;
      this.pages += 1;
      this.set({ status: "ready", items: [...this.state.items, ...page.items], next: page.next, done: page.next === null });
    } catch (error) {
      if (gen !== this.generation) return;
      // Keep what was shown; `next` is unchanged so a retry asks for the same page.
      this.set({ status: "ready", error });
    }
  }

  /**
   * Fetches the pages already shown again and swaps them in without a loading state (for
   * auto-refresh). Dropped if the list was reset or grew meanwhile; a failure keeps the items
   * and sets `error`.
   */
  async refresh(): Promise<void> {
    const s = this.state;
    if (s.status !== "ready" || this.pages === 0) return;
    const gen = this.generation;
    const pages = this.pages;
    const unchanged = () => gen === this.generation && pages === this.pages && this.state.status === "ready";
    try {
      let items: T[] = [];
      let next: string | null = null;
      for (let i = 0; i < pages; i++) {
        const page = await this.fetchPage(next);
        items = [...items, ...page.items];
        next = page.next;
        if (next === null) break;
      }
      if (!unchanged()) return;
      this.set({ items, next, done: next === null, error: null });
    } catch (error) {
      if (!unchanged()) return;
      this.set({ error });
    }
  }

  /**
   * Swaps in the pages already shown as something else fetched them again (a watch in Rust
   * pushing a change), as `refresh` does; ignored unless the list is shown and as long as then.
   */
  apply(pushed: { ok: true; value: PageResult<T> } | { ok: false; error: unknown }, pages: number): void {
    if (this.state.status !== "ready" || pages !== this.pages) return;
    if (pushed.ok) this.set({ items: pushed.value.items, next: pushed.value.next, done: pushed.value.next === null, error: null });
    else this.set({ error: pushed.error });
  }
}
