// A read of what Rust holds that follows the fleet's revision (a counter that grows with every
// change: a refresh's page, a rollout's step): asked at once, then again whenever the revision
// moves past the one its last answer reflects. One read at a time: a burst of changes (a scan's
// pages) costs the read under way and one more, not a read each, and no answer can overtake a
// newer one. The revision the view knows may come after the read was asked (the fleet status's
// first answer): an answer that already reflects it is not read again.

import { useEffect, useLayoutEffect, useState } from "preact/hooks";

export interface Follower {
  /** The fleet is at `revision` (-1: not known yet): reads if no answer or read reflects it. */
  want: (revision: number) => void;
  /** Nothing is shown any more (the view is gone): answers still to come are dropped. */
  stop: () => void;
}

/**
 * `read`'s answers go to `show`, its failures to `fail`; `revisionOf` says which revision an
 * answer reflects. A failure is not retried until the revision moves again.
 */
export function follower<T>(
  read: () => Promise<T>,
  revisionOf: (answer: T) => number,
  show: (answer: T) => void,
  fail: (error: unknown) => void,
): Follower {
  let wanted = -1;
  let reflected: number | null = null;
  let reading = false;
  let stopped = false;
  const due = () => !stopped && !reading && (reflected === null || wanted > reflected);
  const start = () => {
    reading = true;
    read().then(
      (answer) => {
        reading = false;
        if (stopped) return;
        reflected = revisionOf(answer);
        show(answer);
        if (due()) start();
      },
      (error) => {
        reading = false;
        if (stopped) return;
        // Counted as read up to what was wanted: the next change reads again.
        reflected = Math.max(wanted, reflected ?? -1);
        fail(error);
      },
    );
  };
  return {
    want: (revision) => {
      wanted = Math.max(wanted, revision);
      if (due()) start();
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
 * reads waited out for nothing. `read` and `revisionOf` are the first render's.
 */
export function useFollow<T>(revision: number, read: () => Promise<T>, revisionOf: (answer: T) => number) {
  const [answer, setAnswer] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [f] = useState(() =>
    follower(
      read,
      revisionOf,
      (a) => {
        setAnswer(() => a);
        setError(null);
      },
      setError,
    ),
  );
  useEffect(() => f.stop, [f]);
  useLayoutEffect(() => f.want(revision), [f, revision]);
  return { answer, error };
}
