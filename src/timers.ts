/**
 * Timers for every duration a runbook can write. Node keeps a timer's delay in a signed 32-bit
 * number of milliseconds: a delay above 2^31 − 1 ms (24.8 days) is replaced by 1 ms (with a
 * warning), and `AbortSignal.timeout` throws. So `timeout: 30d` fired after a few milliseconds
 * and `pollInterval: 25d` polled in a tight loop. These chain shorter timers instead: a duration
 * means what it says, however long.
 */

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
 * Waits `ms` (any length). Rejects with the signal's own reason when it aborts (a step's
 * `StepTimeout`, an interruption), never with a bare "The operation was aborted".
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // the reason as given (a StepTimeout, an interruption's Error): callers tell them apart
    const reason = (): Error => {
      const r: unknown = signal?.reason;
      return r instanceof Error ? r : new Error("aborted");
    };
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
