import { describe, expect, it } from "vitest";
import { Pager } from "./pager";
import { subscribe, type PushedEvent } from "./useEvent";

/** An event source under test control: `push` delivers to the listeners subscribed so far. */
function source<T>() {
  const listeners = new Set<(e: { payload: T }) => void>();
  let settle: () => void = () => {};
  const settled = new Promise<void>((r) => (settle = r));
  const event: PushedEvent<T> = {
    listen: async (cb) => {
      await settled;
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
  };
  return { event, listeners, settle, push: (payload: T) => listeners.forEach((l) => l({ payload })) };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("subscribe", () => {
  it("hands every pushed payload over until dropped", async () => {
    const s = source<number>();
    const seen: number[] = [];
    const stop = subscribe(s.event, (n) => seen.push(n));
    s.settle();
    await tick();
    s.push(1);
    s.push(2);
    stop();
    s.push(3);
    expect(seen).toEqual([1, 2]);
    expect(s.listeners.size).toBe(0);
  });

  it("undoes a subscription dropped before it settled", async () => {
    const s = source<number>();
    const seen: number[] = [];
    const stop = subscribe(s.event, (n) => seen.push(n));
    stop();
    s.settle();
    await tick();
    s.push(1);
    expect(seen).toEqual([]);
    expect(s.listeners.size).toBe(0);
  });

  it("calls nothing where there is no event system", async () => {
    const failing: PushedEvent<number> = { listen: () => Promise.reject(new Error("no Tauri")) };
    const seen: number[] = [];
    subscribe(failing, (n) => seen.push(n))();
    await tick();
    expect(seen).toEqual([]);
  });
});

describe("Pager.apply", () => {
  it("swaps in pushed pages while the list shows as many, and keeps the items on a pushed failure", async () => {
    const pager = new Pager<number>(async (next) => (next === null ? { items: [1], next: "1" } : { items: [2], next: null }));
    await pager.reload();
    await pager.loadMore();
    expect(pager.pageCount).toBe(2);
    pager.apply({ ok: true, value: { items: [1], next: "1" } }, 1); // a watch of one page: the list grew since
    expect(pager.snapshot.items).toEqual([1, 2]);
    pager.apply({ ok: true, value: { items: [5, 6], next: null } }, 2);
    expect(pager.snapshot).toMatchObject({ status: "ready", items: [5, 6], done: true, error: null });
    pager.apply({ ok: false, error: new Error("offline") }, 2);
    expect(pager.snapshot.items).toEqual([5, 6]);
    expect(String(pager.snapshot.error)).toContain("offline");
  });
});
