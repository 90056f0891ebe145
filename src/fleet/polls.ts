/**
 * Every poll in the record, compactly. A progress read (of an instance or of the verifier) is
 * counted with its latency in a histogram per target and endpoint; each failure is an event of
 * its own (`poll.failed`), and the counts are emitted as one `polls.summary` event (cumulative
 * since the runner started) at every step's end, at the run's end, and at least every
 * `everyMs` while a long wait polls. So a 12-hour wait is a handful of summary lines, not one
 * line per poll, and a failure is never folded away.
 *
 * The histogram's buckets grow by a factor of 2^(1/4) (≈19 %): a percentile read from it is off
 * by less than that, whatever the latency, with at most ~90 buckets from 0.1 ms to 10 min.
 */
import { ServiceError, TransportError, type ApiError } from "../api/errors.js";
import type { InstanceRef, RunEventMap } from "../events.js";
import type { FleetEmit } from "./record.js";

export type PollTarget = PollStat["target"];
export type PollStat = RunEventMap["polls.summary"]["polls"][number];

/** Bucket k holds latencies in (bound(k-1), bound(k)]; bucket 0 holds everything ≤ 0.1 ms. */
const BASE_MS = 0.1;
const GROWTH = 2 ** 0.25;

export function bucketOf(ms: number): number {
  if (!(ms > BASE_MS)) return 0;
  return Math.ceil(Math.log(ms / BASE_MS) / Math.log(GROWTH) - 1e-9);
}

/** The upper bound of bucket k, in ms (rounded to 0.01 ms for the journal). */
export function bucketBound(k: number): number {
  return Math.round(BASE_MS * GROWTH ** k * 100) / 100;
}

/**
 * A percentile (0-100) from a histogram of `[upper bound ms, count]` pairs: the upper bound of
 * the bucket holding that rank (an overestimate by less than one bucket's width), capped at the
 * largest latency seen. Undefined for an empty histogram.
 */
export function histogramPercentile(
  histogram: readonly (readonly [number, number])[],
  p: number,
  maxMs?: number,
): number | undefined {
  const total = histogram.reduce((n, [, c]) => n + c, 0);
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [le, c] of [...histogram].sort((a, b) => a[0] - b[0])) {
    seen += c;
    if (seen >= rank) return maxMs === undefined ? le : Math.min(le, maxMs);
  }
  return maxMs;
}

/** Adds histogram b into a (both `[upper bound, count]` pairs), sorted by bound. */
export function mergeHistograms(
  a: readonly (readonly [number, number])[],
  b: readonly (readonly [number, number])[],
): [number, number][] {
  const m = new Map<number, number>();
  for (const [le, c] of [...a, ...b]) m.set(le, (m.get(le) ?? 0) + c);
  return [...m.entries()].sort((x, y) => x[0] - y[0]);
}

/** A PollStat being counted: its histogram as a map of bucket → count. */
type Stat = Omit<PollStat, "histogram"> & { buckets: Map<number, number> };

export interface PollOutcome {
  durationMs: number;
  /** Undefined: answered. */
  error?: ApiError;
}

export interface PollRecorder {
  /** One poll: counted, and a failure emitted at once (a read aborted by Ctrl-C or a step's limit is not a poll). */
  record(target: PollTarget, instance: InstanceRef | undefined, path: string, outcome: PollOutcome): void;
  /** Emits `polls.summary` when anything was counted since the last one. */
  flush(): void;
}

export interface PollRecorderOptions {
  /** A summary at least this often while polls go on (ms; default 60 s). */
  everyMs?: number;
  now?: () => number;
}

export function createPollRecorder(emit: FleetEmit, opts: PollRecorderOptions = {}): PollRecorder {
  const everyMs = opts.everyMs ?? 60_000;
  const now = opts.now ?? Date.now;
  const stats = new Map<string, Stat>();
  let dirty = false;
  let lastFlush = now();

  const flush = (): void => {
    if (!dirty) return;
    dirty = false;
    lastFlush = now();
    emit("polls.summary", {
      polls: [...stats.values()].map((s) => ({
        target: s.target,
        ...(s.instance ? { instance: s.instance } : {}),
        path: s.path,
        count: s.count,
        failed: s.failed,
        totalMs: round(s.totalMs),
        maxMs: round(s.maxMs),
        histogram: [...s.buckets.entries()].sort((a, b) => a[0] - b[0]).map(([k, c]) => [bucketBound(k), c]),
      })),
    });
  };

  return {
    record(target, instance, path, outcome) {
      if (outcome.error instanceof TransportError && outcome.error.code === "aborted") return;
      const key = `${target}\u0000${instance?.index ?? ""}\u0000${path}`;
      let s = stats.get(key);
      if (!s) {
        s = {
          target,
          ...(instance ? { instance } : {}),
          path,
          count: 0,
          failed: 0,
          totalMs: 0,
          maxMs: 0,
          buckets: new Map(),
        };
        stats.set(key, s);
      }
      const ms = Math.max(0, outcome.durationMs);
      s.count++;
      s.totalMs += ms;
      s.maxMs = Math.max(s.maxMs, ms);
      const k = bucketOf(ms);
      s.buckets.set(k, (s.buckets.get(k) ?? 0) + 1);
      dirty = true;
      const err = outcome.error;
      if (err) {
        s.failed++;
        const status =
          err instanceof ServiceError ? err.status : err instanceof TransportError ? err.status : undefined;
        emit("poll.failed", {
          target,
          ...(instance ? { instance } : {}),
          path,
          error: err.message,
          errorKind: err instanceof ServiceError ? "service" : "transport",
          ...(status !== undefined ? { status } : {}),
          durationMs: round(ms),
        });
      }
      if (now() - lastFlush >= everyMs) flush();
    },
    flush,
  };
}

const round = (ms: number): number => Math.round(ms * 100) / 100;
