import { describe, expect, it } from "vitest";
import { Pager, type PageResult } from "./pager";

function pages(...ps: PageResult<number>[]) {
  const calls: (string | null)[] = [];
  const fetch = async (next: string | null) => {
    calls.push(next);
    const i = next === null ? 0 : Number(next);
    const p = ps[i];
    if (!p) throw new Error(`no page ${i}`);
    return p;
  };
  return { fetch, calls };
}

describe("Pager", () => {
  it("loads the first page, then follows next links until done", async () => {
    const { fetch, calls } = pages({ items: [1, 2], next: "1" }, { items: [3], next: null });
    const pager = new Pager(fetch);
    await pager.reload();
    expect(pager.snapshot).toMatchObject({ status: "ready", items: [1, 2], done: false });
    await pager.loadMore();
    expect(pager.snapshot).toMatchObject({ status: "ready", items: [1, 2, 3], done: true });
    await pager.loadMore(); // complete: no further request
    expect(calls).toEqual([null, "1"]);
  });

  it("keeps loaded items when a later page fails, and retries the same page", async () => {
    let fail = true;
    const pager = new Pager<number>(async (next) => {
      if (next === null) return { items: [1], next: "x" };
      if (fail) throw new Error("boom");
      return { items: [2], next: null };
    });
    await pager.reload();
    await pager.loadMore();
    expect(pager.snapshot.items).toEqual([1]);
    expect(String(pager.snapshot.error)).toContain("boom");
    fail = false;
    await pager.loadMore();
    expect(pager.snapshot).toMatchObject({ items: [1, 2], error: null, done: true });
  });

  it("reports a failed first page as an error state", async () => {
    const pager = new Pager<number>(async () => {
      throw new Error("down");
    });
    await pager.reload();
    expect(pager.snapshot.status).toBe("error");
    expect(pager.snapshot.items).toEqual([]);
  });

  it("drops a response that arrives after a reload", async () => {
    let release: (p: PageResult<number>) => void = () => {};
    const slow = new Promise<PageResult<number>>((r) => (release = r));
    const pager = new Pager<number>(() => slow);
    const first = pager.reload();
    const second = pager.reload(async () => ({ items: [9], next: null }));
    await second;
    release({ items: [1], next: null });
    await first;
    expect(pager.snapshot.items).toEqual([9]);
  });

  it("ignores loadMore while a page is loading", async () => {
    const { fetch, calls } = pages({ items: [1], next: "1" }, { items: [2], next: null });
    const pager = new Pager(fetch);
    await pager.reload();
    const a = pager.loadMore();
    const b = pager.loadMore();
    await Promise.all([a, b]);
    expect(calls).toEqual([null, "1"]);
  });

  it("refreshes the pages shown in place, without a loading state", async () => {
    let round = 0;
    const pager = new Pager<string>(async (next) => {
      if (next === null) return { items: [`a${round}`], next: "1" };
      return { items: [`b${round}`], next: round === 0 ? "2" : null };
    });
    await pager.reload();
    await pager.loadMore();
    expect(pager.snapshot.items).toEqual(["a0", "b0"]);
    round = 1;
    const seen: string[] = [];
    pager.subscribe((s) => seen.push(s.status));
    await pager.refresh();
    expect(pager.snapshot).toMatchObject({ status: "ready", items: ["a1", "b1"], done: true });
    expect(seen.every((s) => s === "ready")).toBe(true);
  });

  it("drops a refresh overtaken by a reset, and keeps the items when it fails", async () => {
    let release: (p: PageResult<number>) => void = () => {};
    let slow = false;
    const pager = new Pager<number>(async () => (slow ? new Promise((r) => (release = r)) : { items: [1], next: null }));
    await pager.reload();
    slow = true;
    const refreshing = pager.refresh();
    slow = false;
    await pager.reload(async () => ({ items: [7], next: null }));
    release({ items: [2], next: null });
    await refreshing;
    expect(pager.snapshot.items).toEqual([7]);

    const failing = new Pager<number>(async (n) => {
      if (n === null && failing.snapshot.items.length) throw new Error("offline");
      return { items: [3], next: null };
    });
    await failing.reload();
    await failing.refresh();
    expect(failing.snapshot.items).toEqual([3]);
    expect(String(failing.snapshot.error)).toContain("offline");
  });
});
