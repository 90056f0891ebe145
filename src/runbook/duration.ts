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
 * `45s`, `4m 05s`, `3h 07m`, `2d 3h`; `?` for a negative or unknown one.
 */
export function formatDuration(msValue: number): string {
  if (!Number.isFinite(msValue) || msValue < 0) return "?";
  if (msValue < 1000) return `${Math.round(msValue)}ms`;
  if (msValue < 10_000) return `${Math.floor(msValue / 100) / 10}s`;
  const s = Math.floor(msValue / 1000);
  if (s < 60) return `${s}s`;
  const pad = (n: number): string => String(n).padStart(2, "0");
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${pad(s % 60)}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${pad(m % 60)}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}
