/**
 * The last `verify` step's failure in the runs that count, or none: why "no `verify` step passed on
 * this cutover's verification result" (src/steps/kit/earned.ts `verification`, which names it). One
 * fold of the events for every reader of it, as the write-stop window's is (src/fleet/window.ts):
 * the read model embeds it (`cutover.verifyFailed`: the report, the watch page, `status`) and the
 * runner feeds it the earlier runs' events and its own (src/run/assemble.ts) for the run's end, so
 * each says the same why. Before it, the report and the page said only "no `verify` step passed"
 * where the run's failure and `status` named the refusal (the verifier skipped DDL on the source).
 *
 * What ends it: the verify step started again (its new attempt speaks), a new verification
 * (`verifier.baseline`: a refusal of the one before no longer says why this one is not verified),
 * a verify that passed, and a run that is not a `--resume` (it counts nothing of the runs before it
 * but what it carried, as the fold's `verified`). Lenient, as the fold is: a field it cannot read
 * is left out.
 */
import type { RunEvent } from "../events.js";
import type { CutoverModel } from "./contract.js";

/** A `verify` step that failed: its number (from 1), id, and the error it failed with, as its event carries it (redacted). */
export type VerifyFailed = NonNullable<CutoverModel["cutover"]["verifyFailed"]>;

/**
 * What the tracker must know of a step kind, handed down (the steps sit above): the step that waits
 * for the verifier's result is the `verify` step (`waitsFor: "verifier"`, src/steps/verify.ts).
 */
export type VerifyKindTraits = (kind: string | undefined) => { readonly waitsFor: string | undefined };

export class VerifyFailedTracker {
  readonly #traits: VerifyKindTraits;
  /** The steps a `step.started` said are verify steps, by index. */
  readonly #verify = new Set<number>();
  #failed: VerifyFailed | undefined;

  constructor(traits: VerifyKindTraits) {
    this.#traits = traits;
  }

  apply(e: RunEvent): void {
    switch (e.type) {
      case "run.started":
        if (e.mode !== "resume") this.#failed = undefined;
        break;
      case "step.started":
        if (this.#traits(e.kind).waitsFor === "verifier") {
          this.#verify.add(e.index);
          this.#failed = undefined;
        }
        break;
      case "step.finished":
        if (e.outcome === "failed" && this.#verify.has(e.index))
          this.#failed = {
            step: e.index + 1,
            id: e.id,
            ...(typeof e.error === "string" ? { error: e.error } : {}),
          };
        break;
      case "verifier.baseline":
      case "verifier.verified":
        this.#failed = undefined;
        break;
    }
  }

  /** The last verify step's failure, while nothing since ended it. */
  get failed(): VerifyFailed | undefined {
    return this.#failed === undefined ? undefined : { ...this.#failed };
  }
}
