/**
 * Timers for every duration a runbook can write. Node keeps a timer's delay in a signed 32-bit
 * number of milliseconds: a delay above 2^31 − 1 ms (24.8 days) is replaced by 1 ms (with a
 * warning), and `AbortSignal.timeout` throws. So `timeout: 30d` fired after a few milliseconds
 * and `pollInterval: 25d` polled in a tight loop. These chain shorter timers instead: a duration
 * means what it says, however long.
 */
import { defaultMaxListeners, setMaxListeners } from "node:events";
import { formatDuration } from "./runbook/duration.js";

/**
 * The one timeout error: a time limit of `ms` passed (a plugin call's under `withTimeout`, an
 * HTTP request's; a step's own limit is its subclass `StepTimeout`, src/steps/kit/context.ts, so
 * that a step failing on a call's limit never reads as its own). `instanceof` tells it from an
 * interruption.
 */
export class TimeoutError extends Error {
  override name = "TimeoutError";
  constructor(readonly ms: number) {
    super(`timed out after ${formatDuration(ms)}`);
  }
}

/** The longest delay one Node timer holds (2^31 − 1 ms, 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A delay one timer can hold, for backstops whose exact length past 24.8 days does not matter. */
export function timerMs(ms: number): number {
  if (Number.isNaN(ms) || ms < 0) return 0;
  return Math.min(ms, MAX_TIMER_MS);
}

export interface LongTimeout {
  /** Cancels it (a no-op once it fired). */
  clear(): void;
}

/**
 * `setTimeout` for any delay: longer ones are chained in pieces of at most MAX_TIMER_MS.
 * `Infinity` never fires. Like setTimeout, it keeps the process alive until it fires or is cleared.
 */
export function setLongTimeout(fn: () => void, ms: number): LongTimeout {
  let left = Number.isNaN(ms) ? 0 : Math.max(0, ms);
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const piece = Math.min(left, MAX_TIMER_MS);
    left -= piece;
    timer = setTimeout(() => {
      timer = undefined;
      if (left > 0) arm();
      else fn();
    }, piece);
  };
  arm();
  return {
    clear: () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * Why a signal aborted, as an Error: the reason as given (a step's `StepTimeout`, an
 * interruption's Error: callers tell them apart), else an `AbortError` with the text given.
 */
export function abortReason(signal: AbortSignal | undefined): Error {
  const r: unknown = signal?.reason;
  if (r instanceof Error) return r;
  const e = new Error(typeof r === "string" ? r : "aborted");
  e.name = "AbortError";
  return e;
}

/**
 * Settles as `p` does, or rejects at once with the signal's reason when it aborts first, whatever
 * `p` does after (the caller closes what it opened; a late rejection of `p` is not news). Node has
 * no race of a promise against a signal of its own: `events.once` and `timers/promises` take a
 * signal for their own waits only.
 */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * Waits `ms` (any length). Rejects with the signal's own reason when it aborts (a step's
 * `StepTimeout`, an interruption), never with a bare "The operation was aborted".
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const reason = (): Error => abortReason(signal);
    if (signal?.aborted) {
      reject(reason());
      return;
    }
    const onAbort = (): void => {
      t.clear();
      reject(reason());
    };
    const t = setLongTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Waits until `now()` (by default the monotonic clock, `performance.now()`) reads `at` or later. A
 * Node timer can fire before its delay has passed by the clock (it counts from the event loop's
 * cached time, which lags while a long turn runs), so a bound kept by the clock is kept by
 * looping until the clock says so.
 */
export async function delayUntil(
  at: number,
  signal?: AbortSignal,
  now: () => number = () => performance.now(),
): Promise<void> {
  for (let left = at - now(); left > 0; left = at - now()) await delay(left, signal);
}

/**
 * A signal that aborts after `ms` (any length) with a `TimeoutError` DOMException, as
 * `AbortSignal.timeout` does; `clear()` releases its timer when the work ends first.
 */
export function timeoutSignal(ms: number): { signal: AbortSignal; clear(): void } {
  const ctl = new AbortController();
  const t = setLongTimeout(
    () => ctl.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  return { signal: ctl.signal, clear: () => t.clear() };
}

/**
 * The signal one fan-out of `width` requests listens to, in place of the caller's: each request
 * adds one 'abort' listener to the signal it is given and removes it when it settles
 * (src/api/http.ts), so a read of 64 instances put 64 listeners on the caller's long-lived signal
 * at once, and Node printed MaxListenersExceededWarning (10 is its limit). Here the caller's
 * signal gets one listener, removed by `release()` when the fan-out ends; the fan-out's own signal
 * is allowed `width` listeners, which is no leak: they are bounded by the fan-out and each is
 * removed as its request settles, and the signal itself dies with the fan-out. More than `width`
 * still warns, as a leak should.
 */
export function fanOutSignal(signal: AbortSignal | undefined, width: number): { signal: AbortSignal; release(): void } {
  const ctl = new AbortController();
  setMaxListeners(Math.max(width, defaultMaxListeners), ctl.signal);
  if (!signal) return { signal: ctl.signal, release: () => undefined };
  if (signal.aborted) {
    ctl.abort(signal.reason);
    return { signal: ctl.signal, release: () => undefined };
  }
  const follow = (): void => ctl.abort(signal.reason);
  signal.addEventListener("abort", follow, { once: true });
  return { signal: ctl.signal, release: () => signal.removeEventListener("abort", follow) };
}
