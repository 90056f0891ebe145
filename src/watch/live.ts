/**
 * The fleet's and the verifier's progress, read by `syncbook watch` itself: GET only (progress),
 * never a command, at most once a second, one read in flight at a time. So the page tells the
 * truth when the runner is gone, and before it starts. The answers go through the same fold as
 * the journal's (src/model/fold.ts, fed the `progress.sampled` / `verifier.sampled` events a run
 * would emit), so the instance views, the lag trend and the copy ETA are the model's own.
 */
import { createVerifierClient } from "../api/index.js";
import type { RunEvent, RunEventMap, RunEventType } from "../events.js";
import { createFleet, type Fleet, type FleetInstance } from "../fleet/index.js";
import type { WindowKindTraits } from "../fleet/window.js";
import { CutoverFold } from "../model/fold.js";
import type { ModelInstance, ModelVerifier } from "../model/contract.js";
import type { CopyView } from "../fleet/eta.js";
import { errorMessage } from "../errors.js";
import { fanOutSignal } from "../timers.js";

/** The shortest time between two reads (the issue: at most once a second). */
export const LIVE_MIN_INTERVAL_MS = 1000;

export interface LiveOptions {
  instances: FleetInstance[];
  verifier?: string;
  traits: WindowKindTraits;
  /** The first process's index among `instances`: its canWrite alone is shown (the others' is not valid). */
  canWriteFrom?: number;
  redact: (s: string) => string;
  requestTimeoutMs?: number;
}

export interface LiveView {
  /** When the last read began (epoch ms); undefined before the first. */
  at?: number;
  instances: ModelInstance[];
  copy: CopyView;
  verifier?: ModelVerifier;
  /** The verifier's progress read failed: why. */
  verifierError?: string;
}

export class LiveReader {
  readonly #fold: CutoverFold;
  readonly #fleet: Fleet | undefined;
  readonly #verifier: ReturnType<typeof createVerifierClient> | undefined;
  readonly #redact: (s: string) => string;
  /** Requests in one read: one per instance, and the verifier's. */
  readonly #width: number;
  #seq = 0;
  #at: number | undefined;
  #verifierError: string | undefined;
  #last = 0;

  constructor(opts: LiveOptions) {
    this.#redact = opts.redact;
    this.#width = opts.instances.length + (opts.verifier !== undefined ? 1 : 0);
    this.#fold = new CutoverFold({
      traits: opts.traits,
      ...(opts.canWriteFrom !== undefined ? { canWriteFrom: opts.canWriteFrom } : {}),
    });
    const timeout = opts.requestTimeoutMs ?? 5000;
    const emit = <K extends RunEventType>(type: K, payload: RunEventMap[K]): RunEvent => {
      const e = { type, seq: ++this.#seq, at: Date.now(), ...payload } as RunEvent;
      // only the reads' results: a request/response record is the runner's, not the model's
      if (type === "progress.sampled" || type === "poll.failed") this.#fold.apply(e);
      return e;
    };
    this.#fleet = opts.instances.length
      ? createFleet({ instances: opts.instances, requestTimeoutMs: timeout, redact: opts.redact, emit })
      : undefined;
    this.#verifier =
      opts.verifier !== undefined
        ? createVerifierClient(opts.verifier, { requestTimeoutMs: timeout, redact: opts.redact })
        : undefined;
  }

  /** One read of every instance and the verifier (at most once a second: an earlier call returns at once). */
  async read(signal?: AbortSignal): Promise<void> {
    const now = Date.now();
    if (now - this.#last < LIVE_MIN_INTERVAL_MS) return;
    this.#last = now;
    this.#at = now;
    // every request listens to the signal it is given: the read's own, not watch's (src/timers.ts)
    const fan = fanOutSignal(signal, this.#width);
    const fleet = this.#fleet?.progress(fan.signal).catch(() => undefined);
    const verifier = this.#verifier
      ?.progress({ signal: fan.signal })
      .then((progress) => {
        this.#verifierError = undefined;
        this.#fold.apply({ type: "verifier.sampled", seq: ++this.#seq, at: Date.now(), progress });
      })
      .catch((err: unknown) => {
        this.#verifierError = this.#redact(errorMessage(err));
      });
    try {
      await Promise.all([fleet, verifier]);
    } finally {
      fan.release();
    }
  }

  view(): LiveView {
    const m = this.#fold.view();
    return {
      ...(this.#at !== undefined ? { at: this.#at } : {}),
      instances: m.fleet.instances,
      copy: m.fleet.copy,
      ...(m.verifier ? { verifier: m.verifier } : {}),
      ...(this.#verifierError !== undefined ? { verifierError: this.#verifierError } : {}),
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#fleet?.close(), this.#verifier?.close()]);
  }
}
