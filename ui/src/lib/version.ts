// The order of firmware versions, in one place. The service states none: versions are text
// (for example "1.2.1", "2.0", "1.2.0-rc1"). Read them as parts split at "." and "-": two parts
// that are both numbers compare as numbers (so 1.10.0 > 1.9.0), any other pair as text; when one
// version is the other plus more parts, the longer one is newer unless its next part starts a
// pre-release ("-rc1"), so 2.0 < 2.0.0 and 1.2.0-rc1 < 1.2.0.

type Part = { text: string; pre: boolean };

function parts(v: string): Part[] {
  const out: Part[] = [];
  let pre = false;
  for (const piece of v.trim().split(/([.-])/)) {
    if (piece === ".") pre = false;
    else if (piece === "-") pre = true;
    else out.push({ text: piece, pre });
  }
  return out;
}

const isNumber = (s: string) => /^\d+$/.test(s);

/** Two runs of digits as numbers of any length: "010" = "10" < "9000000000000000000000". */
function compareDigits(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, "");
  const y = b.replace(/^0+(?=\d)/, "");
  if (x.length !== y.length) return x.length < y.length ? -1 : 1;
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Negative when `a` is older than `b`, positive when newer, 0 when the same. */
export function compareVersions(a: string, b: string): number {
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (!x) return y.pre ? 1 : -1; // `b` goes on: a pre-release of `a` is older, more parts newer
    if (!y) return x.pre ? -1 : 1;
    if (x.pre !== y.pre) return x.pre ? -1 : 1; // 1.2.0-rc1 < 1.2.0.1
    if (isNumber(x.text) && isNumber(y.text)) {
      const c = compareDigits(x.text, y.text);
      if (c !== 0) return c;
    } else if (x.text !== y.text) {
      return x.text < y.text ? -1 : 1;
    }
  }
  return 0;
}

/** The newest of `versions`, or null for none. */
export function newestVersion(versions: readonly string[]): string | null {
  let best: string | null = null;
  for (const v of versions) if (best === null || compareVersions(v, best) > 0) best = v;
  return best;
}

/** A target that is older than what some of the devices run. */
export type Downgrade = {
  /** The newest version the devices run. */
  newest: string;
  /** Devices that run that newest version. */
  newestDevices: number;
  /** Devices that run a version newer than the target. */
  devices: number;
};

/**
 * Whether `target` is a downgrade for devices running `running` (version, devices): older than
 * the current version of at least one of them; how many, and the newest they run.
 */
export function downgradeOf(target: string, running: readonly { version: string; devices: number }[]): Downgrade | null {
  let newest: string | null = null;
  let newestDevices = 0;
  let devices = 0;
  for (const r of running) {
    if (r.devices <= 0 || compareVersions(r.version, target) <= 0) continue;
    devices += r.devices;
    const c = newest === null ? 1 : compareVersions(r.version, newest);
    if (c > 0) {
      newest = r.version;
      newestDevices = r.devices;
    } else if (c === 0) newestDevices += r.devices;
  }
  return newest === null ? null : { newest, newestDevices, devices };
}

/** "downgrade: older than 1.2.1, which 240 of the chosen devices run" (and how many in all). */
export function downgradeText(d: Downgrade, whose = "the chosen devices"): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const rest = d.devices > d.newestDevices ? `; ${n(d.devices)} in all run a newer version than this` : "";
  return `downgrade: older than ${d.newest}, which ${n(d.newestDevices)} of ${whose} run${rest}`;
}
