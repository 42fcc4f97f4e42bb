// Which profile and customer the screen shows, as a count of switches: the key that remounts the
// area's screen so that its lists load afresh for the new scope. The first scope known (the
// first answer of `appInfo`) is no switch: Home, which reads only the fleet database, is shown
// before that answer comes, so that its reads go out with it, and is not mounted again by it.

/** The scope last seen (null before the first) and how many times it changed since. */
export interface Switches {
  scope: string | null;
  count: number;
}

/** `s` after the screen saw `scope` (null: not known yet, which changes nothing). */
export function noteScope(s: Switches, scope: string | null): Switches {
  if (scope === null || scope === s.scope) return s;
  return { scope, count: s.scope === null ? s.count : s.count + 1 };
}
