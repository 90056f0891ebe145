/**
 * Small parsers for the simulator's options: byte sizes (`5GiB`, `500MB`, `1024`) and
 * durations (`120s`, `50ms`, `2m`, a bare number = seconds, like the runbook format).
 * Written here rather than pulled from a library: ten lines, and the units are exactly the
 * ones the CLI documents (a bare number in `ms` means milliseconds, which is a trap here).
 */

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** `5GiB` → 5368709120. Throws a RangeError with the offending text on bad input. */
export function parseBytes(text: string | number): number {
  if (typeof text === "number") {
    if (!Number.isFinite(text) || text < 0) throw new RangeError(`invalid byte size: ${text}`);
    return Math.round(text);
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? BYTE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new RangeError(`invalid byte size "${text}" (e.g. 5GiB, 500MB, 1048576)`);
  return Math.round(Number(m[1]) * unit);
}

const DURATION_UNITS: Record<string, number> = { "": 1, ms: 1e-3, s: 1, m: 60, h: 3600, d: 86400 };

/** `120s` → 120, `50ms` → 0.05, `2m` → 120, `3` → 3 (seconds). */
export function parseSeconds(text: string | number): number {
  if (typeof text === "number") {
    if (!Number.isFinite(text) || text < 0) throw new RangeError(`invalid duration: ${text}`);
    return text;
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) throw new RangeError(`invalid duration "${text}" (e.g. 120s, 50ms, 2m, or a number of seconds)`);
  return Number(m[1]) * DURATION_UNITS[m[2] ?? ""]!;
}

/** Compares dotted versions: `1.10.0` > `1.9`. Missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(".").map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}
