// A read of what Rust holds that follows the fleet's revision (a counter that grows with every
// change: a refresh's end, a rollout's step, the settings): asked at once, then again whenever
// the revision moves past the one its last answer reflects. One read at a time: a burst of
// changes (a refresh that moves rollouts raises the revision once for each and once at its end)
// costs the read under way and one more, not a read each, and no answer can overtake a newer
// one. The revision the view knows may come after the read was asked (the fleet status's first
// answer): an answer that already reflects it is not read again. Every view that reads again as
// the fleet changes reads through this (a plain effect per revision read once a step, each read
// queued behind the last on the fleet database).

import { useEffect, useLayoutEffect, useMemo, useState } from "preact/hooks";

export interface Follower {
  /** The fleet is at `revision` (-1: not known yet): reads if no answer or read reflects it. */
  want: (revision: number) => void;
  /** Reads again whatever the revision (the view changed something itself, or a retry): after
   * the read under way, if there is one, since that one may have been asked before the change. */
  again: () => void;
  /** Nothing is shown any more (the view is gone): answers still to come are dropped. */
  stop: () => void;
}

/**
 * `read`'s answers go to `show`, its failures to `fail`; `revisionOf` says which revision an
 * answer reflects (without it: the revision wanted when its read was asked, which the read
 * came after). A failure is not retried until the revision moves again.
 */
export function follower<T>(
  read: () => Promise<T>,
  revisionOf: ((answer: T) => number) | undefined,
  show: (answer: T) => void,
  fail: (error: unknown) => void,
): Follower {
  let wanted = -1;
  let reflected: number | null = null;
  let reading = false;
  let stopped = false;
  // Calls of `again` so far: a read asked before the last of them is read once more.
  let agains = 0;
  const due = () => !stopped && !reading && (reflected === null || wanted > reflected);
  const start = () => {
    reading = true;
    const asked = wanted;
    const askedAgains = agains;
    read().then(
      (answer) => {
        reading = false;
        if (stopped) return;
        reflected = revisionOf ? revisionOf(answer) : asked;
        show(answer);
        if (due() || askedAgains !== agains) start();
      },
      (error) => {
        reading = false;
        if (stopped) return;
        // Counted as read up to what was wanted: the next change reads again.
        reflected = Math.max(wanted, reflected ?? -1);
        fail(error);
        if (askedAgains !== agains) start();
      },
    );
  };
  return {
    want: (revision) => {
      wanted = Math.max(wanted, revision);
      if (due()) start();
    },
    again: () => {
      agains++;
      if (!stopped && !reading) start();
    },
    stop: () => {
      stopped = true;
    },
  };
}

/**
 * [`follower`] as a view's state: the latest answer and the latest failure (cleared by the next
 * answer). The read is asked as the view is put on the page, not after its first paint (when a
 * plain effect runs): on a cold start the first frame took 50 to 90 ms, which the first screen's
 * reads waited out for nothing. `again` reads once more (see [`Follower`]). `key` names what is
 * read (a module, a query): a new key starts a
 * new follower with that render's `read` and `revisionOf`; until its first answer or failure,
 * the last ones shown stay, with `current` false.
 */
export function useFollow<T>(
  revision: number,
  read: () => Promise<T>,
  { revisionOf, key = "" }: { revisionOf?: (answer: T) => number; key?: string } = {},
) {
  const [shown, setShown] = useState<{ key: string; answer: T | null; error: unknown }>({
    key,
    answer: null,
    error: null,
  });
  const f = useMemo(
    () =>
      follower(
        read,
        revisionOf,
        (answer) => setShown({ key, answer, error: null }),
        (error) => setShown((s) => ({ key, answer: s.answer, error })),
      ),
    [key],
  );
  useEffect(() => f.stop, [f]);
  useLayoutEffect(() => f.want(revision), [f, revision]);
  return { answer: shown.answer, error: shown.error, current: shown.key === key, again: f.again };
}
