// Rows of a long list, fetched from Rust in blocks as they scroll into view and kept in a
// bounded least-recently-used cache. A change of query drops everything, including answers
// still on their way; a change of data (same query, fresher rows) keeps showing the old rows
// until the new ones arrive.

export type FetchRows<Row> = (offset: number, limit: number) => Promise<Row[]>;

export type RowStatus = "ready" | "loading" | "error";

type Block<Row> = { rows: Row[]; epoch: number; countAtFetch: number };

export type RowBlocksOptions = {
  /** Rows per request. */
  blockSize?: number;
  /** Blocks kept; the least recently shown go first (never those in view). */
  maxBlocks?: number;
  /** Requests at once; further wanted blocks wait, and only those still in view are asked. */
  maxInFlight?: number;
};

export class RowBlocks<Row> {
  readonly blockSize: number;
  readonly maxBlocks: number;
  readonly maxInFlight: number;
  private fetchRows: FetchRows<Row>;
  /** Map order is the recency order: the first entry was used longest ago. */
  private blocks = new Map<number, Block<Row>>();
  private inFlight = new Map<number, number>();
  private errors = new Map<number, unknown>();
  private wanted: number[] = [];
  private epoch = 0;
  private count = 0;
  private listeners = new Set<() => void>();

  constructor(fetchRows: FetchRows<Row>, opts: RowBlocksOptions = {}) {
    this.fetchRows = fetchRows;
    this.blockSize = opts.blockSize ?? 200;
    this.maxBlocks = Math.max(1, opts.maxBlocks ?? 50);
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 3);
  }

  /** The function used for the next requests (a new closure per render is fine). */
  setFetch(fetchRows: FetchRows<Row>): void {
    this.fetchRows = fetchRows;
  }

  /** A new query: every cached row and every answer on its way is dropped. */
  reset(count: number): void {
    this.epoch++;
    this.blocks.clear();
    this.inFlight.clear();
    this.errors.clear();
    this.wanted = [];
    this.count = count;
  }

  /**
   * The same query over changed data: rows are asked again, old ones show until then. A block
   * already on its way is asked again once its answer is in, not beside it: a burst of changes
   * (a refresh's end and each rollout it moved, each a new revision) costs a block the request
   * under way and one more, and never more than `maxInFlight` at once.
   */
  invalidate(): void {
    this.epoch++;
    this.errors.clear();
    this.pump();
  }

  /** The number of matching rows; a block that was short of it is asked again. */
  setCount(count: number): void {
    if (count === this.count) return;
    this.count = count;
    this.pump();
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  row(index: number): Row | undefined {
    const b = this.blocks.get(Math.floor(index / this.blockSize));
    return b?.rows[index % this.blockSize];
  }

  status(index: number): RowStatus {
    const bi = Math.floor(index / this.blockSize);
    if (this.row(index) !== undefined) return "ready";
    return this.errors.has(bi) ? "error" : "loading";
  }

  /** The first error among the blocks in view, if any. */
  get error(): unknown {
    for (const bi of this.wanted) if (this.errors.has(bi)) return this.errors.get(bi);
    return undefined;
  }

  /** Rows `first`..`last` (inclusive) are in view: fetch what is missing or stale. */
  want(first: number, last: number): void {
    if (this.count === 0 || last < first) {
      this.wanted = [];
      return;
    }
    const lo = Math.floor(Math.max(0, first) / this.blockSize);
    const hi = Math.floor(Math.min(last, this.count - 1) / this.blockSize);
    const wanted: number[] = [];
    for (let bi = lo; bi <= hi; bi++) {
      wanted.push(bi);
      const b = this.blocks.get(bi);
      if (b) {
        // Most recently used now.
        this.blocks.delete(bi);
        this.blocks.set(bi, b);
      }
    }
    this.wanted = wanted;
    this.pump();
  }

  /** Ask again for the blocks in view that failed. */
  retry(): void {
    this.errors.clear();
    this.pump();
  }

  /** Blocks held (for tests and the harness). */
  get size(): number {
    return this.blocks.size;
  }

  /**
   * Rows `lo`..`hi` (inclusive), from the cache or asked block by block; for a range selection
   * beyond what was shown. Rejects with `StaleQuery` when the query changes meanwhile.
   */
  async rowsIn(lo: number, hi: number): Promise<Row[]> {
    const epoch = this.epoch;
    const out: Row[] = [];
    hi = Math.min(hi, this.count - 1);
    for (let bi = Math.floor(lo / this.blockSize); bi <= Math.floor(hi / this.blockSize) && hi >= lo; bi++) {
      let rows = this.fresh(bi)?.rows;
      if (!rows) {
        rows = await this.fetchRows(bi * this.blockSize, this.blockSize);
        if (epoch !== this.epoch) throw new StaleQuery();
        this.store(bi, rows, epoch);
      }
      const from = Math.max(lo, bi * this.blockSize) - bi * this.blockSize;
      const to = Math.min(hi, (bi + 1) * this.blockSize - 1) - bi * this.blockSize;
      out.push(...rows.slice(from, to + 1));
    }
    if (epoch !== this.epoch) throw new StaleQuery();
    return out;
  }

  /** The block when it is of this query and data and not short of the current count. */
  private fresh(bi: number): Block<Row> | undefined {
    const b = this.blocks.get(bi);
    if (!b || b.epoch !== this.epoch) return undefined;
    const expected = Math.min(this.blockSize, this.count - bi * this.blockSize);
    if (b.rows.length < expected && b.countAtFetch !== this.count) return undefined;
    return b;
  }

  private pump(): void {
    for (const bi of this.wanted) {
      if (this.inFlight.size >= this.maxInFlight) return;
      if (this.inFlight.has(bi) || this.errors.has(bi) || this.fresh(bi)) continue;
      this.start(bi);
    }
  }

  private start(bi: number): void {
    const epoch = this.epoch;
    const count = this.count;
    this.inFlight.set(bi, epoch);
    this.fetchRows(bi * this.blockSize, this.blockSize).then(
      (rows) => {
        if (this.inFlight.get(bi) !== epoch) return; // of a query since reset
        this.inFlight.delete(bi);
        // Of older data: dropped, and the block asked again.
        if (epoch === this.epoch) this.store(bi, rows, epoch, count);
        this.pump();
        this.emit();
      },
      (err: unknown) => {
        if (this.inFlight.get(bi) !== epoch) return;
        this.inFlight.delete(bi);
        if (epoch === this.epoch) this.errors.set(bi, err);
        this.pump();
        this.emit();
      },
    );
  }

  private store(bi: number, rows: Row[], epoch: number, countAtFetch = this.count): void {
    this.blocks.delete(bi);
    this.blocks.set(bi, { rows, epoch, countAtFetch });
    if (this.blocks.size <= this.maxBlocks) return;
    const keep = new Set(this.wanted);
    for (const old of this.blocks.keys()) {
      if (this.blocks.size <= this.maxBlocks) break;
      if (!keep.has(old) && old !== bi) this.blocks.delete(old);
    }
  }

  private emit(): void {
    for (const fn of this.listeners) fn();
  }
}

/** The query changed while rows were being gathered; the gathered rows are not wanted. */
export class StaleQuery extends Error {
  constructor() {
    super("the query changed");
    this.name = "StaleQuery";
  }
}
