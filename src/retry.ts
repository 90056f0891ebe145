/**
 * The one retry policy (issue 40): how many attempts, the pauses between them, which failures are
 * retried, and the pause that a signal cuts short. Its users keep their own loop (each says what
 * it says between attempts) and take every number and every "again?" from here:
 * - `sendHttp` (src/plugin/http.ts): a hook's or a notifier's request;
 * - the notifiers' deliveries (src/plugin/deliveries.ts), bounded by a time budget, not a count;
 * - the runner's fleet read (`readFleet`, src/steps/kit/fleet-ops.ts), bounded by its give-up time.
 * A command is no failure to retry here: fleet-ops resends one only where progress proves it did
 * not take effect, and never blindly (its `sendCommand`).
 */
import { delay } from "./timers.js";

export interface RetryPolicy<F> {
  /** Attempts in all, the first included (`Infinity`: a budget or a give-up time ends them). */
  readonly attempts: number;
  /** The first pause; each next one doubles. */
  readonly baseMs: number;
  /** No doubled pause is longer (a base above it is the first pause as written, this the rest). */
  readonly capMs: number;
  /**
   * `full`: each pause is random below its ceiling (AWS's full jitter: many instances retried at
   * once spread out); `none`: the ceiling itself (a pause a log line announces).
   */
  readonly jitter: "none" | "full";
  /** Whether a failure is retried; one that is not ends the attempts at once. */
  readonly retryable: (failure: F) => boolean;
}

/** The pause after the `retry`-th failed attempt (0: after the first), in ms. */
export function retryPauseMs<F>(policy: RetryPolicy<F>, retry: number, random: () => number = Math.random): number {
  const ceiling = retry === 0 ? policy.baseMs : Math.min(policy.capMs, policy.baseMs * 2 ** retry);
  return policy.jitter === "full" ? random() * ceiling : ceiling;
}

/** Whether another attempt follows `attempts` made, the last of which failed with `failure`. */
export function retriesAfter<F>(policy: RetryPolicy<F>, failure: F, attempts: number): boolean {
  return attempts < policy.attempts && policy.retryable(failure);
}

/** Waits a pause, or until the signal aborts (then at once); never rejects: the caller reads the signal. */
export function retryWait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return delay(ms, signal).catch(() => undefined);
}
