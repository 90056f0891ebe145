/**
 * Retry with capped exponential backoff and full jitter (delay = random × min(cap, base × 2^n)),
 * for progress only: the spec says progress is safe to retry and may fail for at least two
 * minutes after a resume or restart. Full jitter keeps 256 instances that failed together from
 * being polled again in lockstep. Commands are never retried here.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { ApiError } from "./errors.js";

export interface RetryOptions {
  /** First backoff ceiling (default 250 ms). */
  baseMs?: number;
  /** Largest backoff ceiling (default 10 s). */
  capMs?: number;
  /** Give up once this much time has passed since the first attempt (default 180 s). */
  deadlineMs?: number;
  /** Give up after this many attempts (default: no limit but the deadline). */
  maxAttempts?: number;
  /** Random source in [0, 1) (default Math.random); inject a seeded one in tests. */
  random?: () => number;
  /** Called before each wait; the runner turns it into "progress failing for 42 s (ECONNRESET), retrying". */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  /** Redacted URL. */
  url: string;
  operation: string;
  /** Attempts made so far (1 after the first failure). */
  attempt: number;
  /** Since the first failure of the current streak (which may have begun in an earlier call). */
  failingForMs: number;
  /** Wait before the next attempt. */
  delayMs: number;
  error: ApiError;
  /** `http://127.0.0.1:27182: progress failing for 42 s (ECONNRESET), retrying in 1.2 s` */
  message: string;
}

export const RETRY_DEFAULTS = { baseMs: 250, capMs: 10_000, deadlineMs: 180_000 } as const;

/** The ceiling of the n-th backoff (n from 0) and a jittered delay under it. */
export function backoffDelay(n: number, opts: { baseMs?: number; capMs?: number; random?: () => number } = {}): number {
  const base = opts.baseMs ?? RETRY_DEFAULTS.baseMs;
  const cap = opts.capMs ?? RETRY_DEFAULTS.capMs;
  const ceiling = Math.min(cap, base * 2 ** Math.min(n, 30));
  return Math.max(1, Math.floor((opts.random ?? Math.random)() * ceiling));
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/**
 * Runs `attempt` until it succeeds, a non-retryable error is thrown, the deadline or the
 * attempt limit is reached (the last error is thrown), or the signal aborts (its reason is thrown).
 */
export async function withRetry<T>(
  attempt: () => Promise<T>,
  ctx: {
    url: string;
    operation: string;
    retryable: (err: unknown) => err is ApiError;
    signal?: AbortSignal | undefined;
    /** performance.now() of the first failure of the current failure streak (spanning calls), if any. */
    failingSince?: () => number | undefined;
  },
  opts: RetryOptions,
): Promise<{ value: T; attempts: number }> {
  const start = performance.now();
  const deadline = opts.deadlineMs ?? RETRY_DEFAULTS.deadlineMs;
  for (let n = 0; ; n++) {
    ctx.signal?.throwIfAborted();
    try {
      return { value: await attempt(), attempts: n + 1 };
    } catch (err) {
      if (!ctx.retryable(err)) throw err;
      ctx.signal?.throwIfAborted();
      const now = performance.now();
      const elapsed = now - start;
      const remaining = deadline - elapsed;
      const failingFor = now - (ctx.failingSince?.() ?? start);
      if (remaining <= 0 || (opts.maxAttempts !== undefined && n + 1 >= opts.maxAttempts)) throw err;
      const delayMs = Math.min(backoffDelay(n, opts), remaining);
      const label = "label" in err ? String((err as { label: unknown }).label) : err.kind;
      opts.onRetry?.({
        url: ctx.url,
        operation: ctx.operation,
        attempt: n + 1,
        failingForMs: failingFor,
        delayMs,
        error: err,
        message: `${ctx.url}: ${ctx.operation} failing for ${formatDuration(failingFor)} (${label}), retrying in ${formatDuration(delayMs)}`,
      });
      await sleep(delayMs, undefined, ctx.signal ? { signal: ctx.signal } : undefined).catch((e: unknown) => {
        throw ctx.signal?.aborted ? ctx.signal.reason : e;
      });
    }
  }
}
