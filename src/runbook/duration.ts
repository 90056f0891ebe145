/**
 * Durations of the runbook format: `500ms`, `2s`, `10m`, `12h`, `1d`, or a number of seconds.
 * The schema's pattern admits exactly those strings; `ms` does the arithmetic.
 */
import ms from "ms";

const FORM = /^[0-9]+(\.[0-9]+)?(ms|s|m|h|d)$/;

/** Milliseconds of a duration, or undefined when it is not one (the schema should have caught it). */
export function durationMs(d: string | number | undefined): number | undefined {
  if (d === undefined) return undefined;
  if (typeof d === "number") return Number.isFinite(d) && d >= 0 ? d * 1000 : undefined;
  const t = d.trim();
  // a bare number is seconds in this format (`ms` would read it as milliseconds): `--var`
  // values and interpolated strings arrive that way
  if (/^[0-9]+(\.[0-9]+)?$/.test(t)) return Number(t) * 1000;
  if (!FORM.test(t)) return undefined;
  return ms(t as ms.StringValue);
}

/** Milliseconds of a duration, or the fallback when absent. */
export function durationOr(d: string | number | undefined, fallbackMs: number): number {
  return durationMs(d) ?? fallbackMs;
}

/**
 * A duration for people, the one format of every message, view and report: `750ms`, `2.5s`, `5s`,
 * `45s`, `4m 05s`, `3h 07m`, `2d 3h`; `?` for a negative or unknown one. Rounded to the unit shown,
 * never cut: 12.99 s is "13s", not "12s", and a value that rounds into the next unit takes its
 * form (59.6 s is "1m 00s"). A bound rounds outwards: "at most" up, "at least" down (a window's
 * "at most 12s" for 12.4 s would promise less downtime than there may have been).
 * Self-contained: the watch page inlines its source.
 */
export function formatDuration(msValue: number, round: "nearest" | "up" | "down" = "nearest"): string {
  if (!Number.isFinite(msValue) || msValue < 0) return "?";
  const r = round === "up" ? Math.ceil : round === "down" ? Math.floor : Math.round;
  const pad = (n: number): string => String(n).padStart(2, "0");
  const wholeMs = r(msValue);
  if (wholeMs < 1000) return `${wholeMs}ms`;
  const tenths = r(msValue / 100);
  if (tenths < 100) return `${tenths / 10}s`;
  const s = r(msValue / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  const m = r(msValue / 60_000);
  if (m < 24 * 60) return `${Math.floor(m / 60)}h ${pad(m % 60)}m`;
  const h = r(msValue / 3_600_000);
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}
