/**
 * The one polling loop: read, judge, wait, again. Every wait of the runner is one of these (a
 * condition wait, the fleet read retried while progress fails, the verifier's progress), so the
 * rules live in one place:
 * - the period counts from the start of the previous read, so a slow answer does not stretch it,
 *   and by the monotonic clock, so a timer that fires early does not shorten it, nor a wall clock
 *   stepped back stretch it;
 * - `every` may be a function of the round (a retry policy's pauses, src/retry.ts);
 * - the signal (Ctrl-C, the step's time limit) ends the wait at once, throwing its reason;
 * - `giveUpMs` ends it with the last value read, judged or not (the caller decides what that means).
 */
import { delay as sleep, delayUntil } from "../../timers.js";

export interface PollOptions<T, R> {
  /** One attempt. A read that throws ends the poll with that error (read leniently inside if failures are data). */
  read(signal: AbortSignal): Promise<T>;
  /** A result ends the poll; `undefined` reads again. */
  judge(value: T, round: number): R | undefined;
  /** Milliseconds from the start of one read to the start of the next, or a function of the round (0-based). */
  every: number | ((round: number) => number);
  signal: AbortSignal;
  /** Stop once this much time has passed since the first read, returning the last value unjudged. */
  giveUpMs?: number;
}

export type PollResult<T, R> = { done: true; result: R; value: T } | { done: false; value: T };

/** The result of a poll without `giveUpMs`: it returns only with one (or throws). */
export function pollResult<T, R>(r: PollResult<T, R>): R {
  if (!r.done) throw new Error("unreachable: a poll without giveUpMs always ends with a result");
  return r.result;
}

/** Polls until `judge` returns a result, `giveUpMs` passes, or the signal aborts (throws its reason). */
export async function poll<T, R>(o: PollOptions<T, R>): Promise<PollResult<T, R>> {
  // the monotonic clock: a wall clock stepped back (NTP, a VM's clock sync) must not stretch a
  // pause, nor one stepped forward shorten it below the bound
  const clock = (): number => performance.now();
  const started = clock();
  for (let round = 0; ; round++) {
    o.signal.throwIfAborted();
    const t0 = clock();
    const value = await o.read(o.signal);
    const result = o.judge(value, round);
    if (result !== undefined) return { done: true, result, value };
    const left = o.giveUpMs === undefined ? Infinity : o.giveUpMs - (clock() - started);
    if (left <= 0) return { done: false, value };
    const period = typeof o.every === "number" ? o.every : o.every(round);
    const at = Math.min(clock() + left, t0 + period);
    try {
      // always a turn of the event loop, then by the clock: a timer that fires early would read sooner than `every` allows
      await sleep(Math.max(0, at - clock()), o.signal);
      await delayUntil(at, o.signal, clock);
    } catch {
      throw abortError(o.signal);
    }
  }
}

function abortError(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason ?? new Error("aborted");
}
