import { describe, expect, it } from "vitest";
import { follower } from "./follow";

/** A read whose answers the test gives by hand, in any order. */
function harness() {
  const pending: { answer: (rev: number) => void; refuse: (e: string) => void }[] = [];
  const shown: number[] = [];
  const failed: string[] = [];
  const f = follower<number>(
    () =>
      new Promise<number>((resolve, reject) => {
        pending.push({ answer: resolve, refuse: (e) => reject(new Error(e)) });
      }),
    (rev) => rev,
    (rev) => shown.push(rev),
    (e) => failed.push((e as Error).message),
  );
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return { f, pending, shown, failed, settle };
}

describe("follower", () => {
  it("reads at once, before the revision is known", () => {
    const h = harness();
    h.f.want(-1);
    expect(h.pending).toHaveLength(1);
  });

  it("does not read again for a revision the answer under way already reflects", async () => {
    const h = harness();
    h.f.want(-1);
    h.f.want(7); // the status's first answer came before the read's
    expect(h.pending).toHaveLength(1);
    h.pending[0].answer(7);
    await h.settle();
    expect(h.shown).toEqual([7]);
    expect(h.pending).toHaveLength(1);
  });

  it("reads once more when the answer is older than the revision now known", async () => {
    const h = harness();
    h.f.want(-1);
    h.f.want(8);
    h.pending[0].answer(7);
    await h.settle();
    expect(h.shown).toEqual([7]);
    expect(h.pending).toHaveLength(2);
    h.pending[1].answer(8);
    await h.settle();
    expect(h.shown).toEqual([7, 8]);
    expect(h.pending).toHaveLength(2);
  });

  it("costs one more read for a burst of changes, not one each", async () => {
    const h = harness();
    h.f.want(1);
    for (let rev = 2; rev <= 50; rev++) h.f.want(rev);
    expect(h.pending).toHaveLength(1);
    h.pending[0].answer(1);
    await h.settle();
    expect(h.pending).toHaveLength(2);
    h.pending[1].answer(50);
    await h.settle();
    expect(h.shown).toEqual([1, 50]);
    expect(h.pending).toHaveLength(2);
  });

  it("shows a failure, and reads again only when the revision moves", async () => {
    const h = harness();
    h.f.want(3);
    h.pending[0].refuse("the fleet database is not available");
    await h.settle();
    expect(h.failed).toEqual(["the fleet database is not available"]);
    h.f.want(3);
    expect(h.pending).toHaveLength(1);
    h.f.want(4);
    expect(h.pending).toHaveLength(2);
    h.pending[1].answer(4);
    await h.settle();
    expect(h.shown).toEqual([4]);
  });

  it("drops answers once stopped, and reads no more", async () => {
    const h = harness();
    h.f.want(1);
    h.f.stop();
    h.pending[0].answer(1);
    await h.settle();
    h.f.want(2);
    expect(h.shown).toEqual([]);
    expect(h.pending).toHaveLength(1);
  });

  it("without revisionOf, counts an answer as of the revision wanted when its read was asked", async () => {
    const pending: ((answer: string) => void)[] = [];
    const shown: string[] = [];
    const f = follower<string>(
      () => new Promise<string>((resolve) => pending.push(resolve)),
      undefined,
      (a) => shown.push(a),
      () => {},
    );
    f.want(3);
    for (let rev = 4; rev <= 40; rev++) f.want(rev); // a burst while the first read is on its way
    expect(pending).toHaveLength(1);
    pending[0]("as of 3");
    await new Promise((r) => setTimeout(r, 0));
    expect(pending).toHaveLength(2); // 40 came after the read was asked: read once more
    pending[1]("as of 40");
    await new Promise((r) => setTimeout(r, 0));
    f.want(40);
    expect(pending).toHaveLength(2);
    expect(shown).toEqual(["as of 3", "as of 40"]);
  });

  it("reads again when asked, after the read under way, whatever the revision", async () => {
    const h = harness();
    h.f.want(5);
    h.f.again(); // a change the view made while the first read was on its way
    expect(h.pending).toHaveLength(1);
    h.pending[0].answer(5);
    await h.settle();
    expect(h.pending).toHaveLength(2); // that read may have been asked before the change
    h.pending[1].answer(5);
    await h.settle();
    expect(h.pending).toHaveLength(2);
    h.f.again(); // nothing under way: at once
    expect(h.pending).toHaveLength(3);
    h.pending[2].refuse("the fleet database is not available");
    await h.settle();
    expect(h.shown).toEqual([5, 5]);
    expect(h.failed).toEqual(["the fleet database is not available"]);
    expect(h.pending).toHaveLength(3);
  });
});
