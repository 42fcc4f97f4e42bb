import { describe, expect, it } from "vitest";
import { RowBlocks, StaleQuery } from "./rowBlocks";

/** A fetch whose answers the test releases one by one. */
function server(total: () => number, tag = "") {
  const calls: { offset: number; limit: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  const fetch = (offset: number, limit: number) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({
        offset,
        limit,
        resolve: () => {
          const n = Math.max(0, Math.min(limit, total() - offset));
          resolve(Array.from({ length: n }, (_, i) => `${tag}r${offset + i}`));
        },
        reject,
      });
    });
  return { fetch, calls };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("RowBlocks", () => {
  it("fetches the blocks in view once, and shows their rows when they arrive", async () => {
    const s = server(() => 1000);
    const c = new RowBlocks(s.fetch, { blockSize: 100 });
    let changes = 0;
    c.subscribe(() => changes++);
    c.reset(1000);
    c.want(150, 230);
    expect(s.calls.map((x) => [x.offset, x.limit])).toEqual([
      [100, 100],
      [200, 100],
    ]);
    expect(c.status(150)).toBe("loading");
    expect(c.row(150)).toBeUndefined();
    c.want(150, 230); // already on its way: no second request
    expect(s.calls).toHaveLength(2);
    s.calls[0].resolve();
    await settle();
    expect(c.row(150)).toBe("r150");
    expect(c.status(150)).toBe("ready");
    expect(c.status(230)).toBe("loading");
    expect(changes).toBe(1);
    s.calls[1].resolve();
    await settle();
    c.want(100, 299);
    expect(s.calls).toHaveLength(2); // both cached
  });

  it("drops answers of an old query, and starts over at the new one", async () => {
    const s = server(() => 1000);
    const c = new RowBlocks(s.fetch, { blockSize: 100 });
    c.reset(1000);
    c.want(0, 50);
    c.reset(500); // filter changed while block 0 was on its way
    c.want(0, 50);
    expect(s.calls).toHaveLength(2);
    s.calls[1].resolve();
    await settle();
    expect(c.row(0)).toBe("r0");
    // The old answer, late and with other rows, must not overwrite the new one.
    s.calls[0].resolve(); // still pending until now
    await settle();
    expect(c.size).toBe(1);
    expect(c.row(0)).toBe("r0");
  });

  it("keeps old rows on screen while fresher data is asked (same query)", async () => {
    let tag = "";
    const calls: (() => void)[] = [];
    const c = new RowBlocks<string>(
      (offset) =>
        new Promise((resolve) => {
          const t = tag;
          calls.push(() => resolve([`${t}r${offset}`]));
        }),
      { blockSize: 1 },
    );
    c.reset(1);
    c.want(0, 0);
    calls[0]();
    await settle();
    tag = "new-";
    c.invalidate();
    expect(calls).toHaveLength(2);
    expect(c.row(0)).toBe("r0"); // still shown
    calls[1]();
    await settle();
    expect(c.row(0)).toBe("new-r0");
  });

  it("asks a block once more after a burst of changes, never beside the request under way", async () => {
    const s = server(() => 1000);
    const c = new RowBlocks(s.fetch, { blockSize: 100, maxInFlight: 3 });
    c.reset(1000);
    c.want(0, 250); // blocks 0, 1 and 2
    expect(s.calls).toHaveLength(3);
    // A scan's pages: fifty new revisions while the first answers are on their way.
    for (let i = 0; i < 50; i++) c.invalidate();
    expect(s.calls).toHaveLength(3);
    for (const call of s.calls.slice(0, 3)) call.resolve();
    await settle();
    // Those answers are of older data: dropped, and each block asked once more.
    expect(c.row(0)).toBeUndefined();
    expect(s.calls.map((x) => x.offset)).toEqual([0, 100, 200, 0, 100, 200]);
    for (const call of s.calls.slice(3)) call.resolve();
    await settle();
    expect(c.row(0)).toBe("r0");
    expect(c.row(250)).toBe("r250");
    expect(s.calls).toHaveLength(6);
  });

  it("evicts the least recently shown blocks beyond its bound, never those in view", async () => {
    const s = server(() => 10_000);
    const c = new RowBlocks(s.fetch, { blockSize: 10, maxBlocks: 3, maxInFlight: 10 });
    c.reset(10_000);
    for (const first of [0, 10, 20, 30]) {
      c.want(first, first + 9);
      s.calls[s.calls.length - 1].resolve();
      await settle();
    }
    expect(c.size).toBe(3);
    expect(c.row(0)).toBeUndefined(); // the oldest went
    expect(c.row(35)).toBe("r35");
    // Block 1 used again, then a new one: block 2 is the oldest now and goes.
    c.want(10, 19);
    c.want(40, 49);
    s.calls[s.calls.length - 1].resolve();
    await settle();
    expect(c.row(15)).toBe("r15");
    expect(c.row(25)).toBeUndefined();
    // A view wider than the bound keeps every block in it.
    c.want(0, 59);
    for (const call of s.calls.slice(5)) call.resolve();
    await settle();
    for (let i = 0; i < 60; i += 10) expect(c.row(i)).toBe(`r${i}`);
  });

  it("asks only blocks still in view when a slot frees up", async () => {
    const s = server(() => 100_000);
    const c = new RowBlocks(s.fetch, { blockSize: 100, maxInFlight: 1 });
    c.reset(100_000);
    c.want(0, 99);
    c.want(100, 199); // scrolled on: block 1 waits
    c.want(50_000, 50_050); // scrolled far: block 1 is no longer wanted
    s.calls[0].resolve();
    await settle();
    expect(s.calls.map((x) => x.offset)).toEqual([0, 50_000]);
  });

  it("asks again for a short last block when the count grows", async () => {
    let total = 150;
    const s = server(() => total);
    const c = new RowBlocks(s.fetch, { blockSize: 100 });
    c.reset(150);
    c.want(100, 149);
    s.calls[0].resolve();
    await settle();
    expect(c.row(149)).toBe("r149");
    c.want(100, 149);
    expect(s.calls).toHaveLength(1); // short, but the count has not changed
    total = 180;
    c.setCount(180);
    c.want(100, 179);
    expect(s.calls).toHaveLength(2);
    s.calls[1].resolve();
    await settle();
    expect(c.row(179)).toBe("r179");
  });

  it("reports a failed block and asks again only on retry", async () => {
    const s = server(() => 1000);
    const c = new RowBlocks(s.fetch, { blockSize: 100 });
    c.reset(1000);
    c.want(0, 10);
    s.calls[0].reject(new Error("db locked"));
    await settle();
    expect(c.status(5)).toBe("error");
    expect((c.error as Error).message).toBe("db locked");
    c.want(0, 10);
    expect(s.calls).toHaveLength(1);
    c.retry();
    expect(s.calls).toHaveLength(2);
    s.calls[1].resolve();
    await settle();
    expect(c.row(5)).toBe("r5");
    expect(c.error).toBeUndefined();
  });

  it("gathers the rows of a range across cached and missing blocks", async () => {
    const calls: number[] = [];
    const c = new RowBlocks<string>(async (offset, limit) => {
      calls.push(offset);
      return Array.from({ length: Math.min(limit, 450 - offset) }, (_, i) => `r${offset + i}`);
    }, { blockSize: 100 });
    c.reset(450);
    c.want(0, 99);
    await settle();
    const rows = await c.rowsIn(95, 430);
    expect(rows).toHaveLength(336);
    expect(rows[0]).toBe("r95");
    expect(rows[rows.length - 1]).toBe("r430");
    expect(calls).toEqual([0, 100, 200, 300, 400]);
    expect(await c.rowsIn(440, 1000)).toEqual(Array.from({ length: 10 }, (_, i) => `r${440 + i}`));
  });

  it("refuses a range gathered across a query change", async () => {
    let release!: () => void;
    const c = new RowBlocks<string>(
      (offset) => new Promise((resolve) => (release = () => resolve([`r${offset}`]))),
      { blockSize: 1 },
    );
    c.reset(10);
    const p = c.rowsIn(0, 3);
    c.reset(5);
    release();
    await expect(p).rejects.toBeInstanceOf(StaleQuery);
  });
});
