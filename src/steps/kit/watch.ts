/**
 * The fleet read while a person is asked (issue 39, point 3). A `--step` question or a `confirm`
 * can wait minutes; without reads the screen kept the state before the last step (an instance
 * IDLE after `start` succeeded, the copy at 0 %) while `status` in another pane said RUNNING.
 * Progress reads are GETs ("safe to retry", the contract): reading while the question waits
 * changes nothing on the service, and every read passes the run's identity check as any other.
 */
import type { RunContext } from "./context.js";
import { poll } from "./poll.js";

export interface FleetWatch {
  /**
   * Stops reading. Resolves once the read in flight (if any) has its answer: the step that runs
   * next reads the fleet afresh, after the answer was given, never joins a read started before.
   */
  stop(): Promise<void>;
}

/**
 * Reads the whole fleet every `run.defaults.pollMs` until stopped: a person reads the screen, so
 * the runbook's interval does (the write-stop window's fast reads serve a wait's reaction time).
 */
export function watchFleet(run: RunContext, signal: AbortSignal): FleetWatch {
  const stopped = new AbortController();
  const until = AbortSignal.any([signal, stopped.signal]);
  let inFlight: Promise<unknown> = Promise.resolve();
  const loop = poll({
    // the run's signal, not `until`: stopping must not abort a read (an aborted read is recorded
    // as a failed poll, and the screen would say the instance is not answering)
    read: () => {
      const read = run.fleet.progress(signal);
      inFlight = read.catch(() => undefined);
      return inFlight;
    },
    judge: () => undefined,
    every: run.defaults.pollMs,
    signal: until,
  }).catch(() => undefined);
  return {
    async stop() {
      stopped.abort();
      await loop;
      await inFlight;
    },
  };
}

/** `ask` with the fleet read while it waits for its answer. */
export async function whileWatching<T>(run: RunContext, signal: AbortSignal, ask: () => Promise<T>): Promise<T> {
  const watch = watchFleet(run, signal);
  try {
    return await ask();
  } finally {
    await watch.stop();
  }
}
