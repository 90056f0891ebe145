/**
 * The simulated migration verifier (spec: "Verifier progress response"; facts: "The migration
 * verifier"). Phases `idle` → `check` (first generation: every collection partition) →
 * `recheck` (documents changed on the source since, generation after generation) → `idle`
 * once `writesOff` has been received and the last rechecks are done.
 *
 * Counters, with the invariants the tests check:
 *   totalTasks = addedTasks + processingTasks + completedTasks + failedTasks + metadataMismatchTasks
 *   recheckTasks = rechecks queued for the next generation (not part of totalTasks)
 *   all ≥ 0; totalTasks, completedTasks and failedTasks never decrease during one check.
 *
 * Work happens only while the fleet is ready (every instance in change event application,
 * COMMITTING or COMMITTED, and up): "verification checks may start" only after progress shows
 * `change event application`. The world tells `advance` since when the fleet has been ready;
 * in between external events readiness can only begin, never end (pausing, a command or an
 * instance going down are external events, and the world advances the verifier before them).
 * Inside a stretch the verifier steps in small slices of simulated time (at most 400 a call).
 *
 * What fails tasks: writes lost after commit (their recheck fails), DDL on the source while
 * verification is in progress ("The verifier does not support DDL operations"), and fleet
 * errors (a command that reached only part of the fleet leaves the destination inconsistent).
 */
import type { ModelParams } from "./instance.js";

export type VerifierPhase = "idle" | "check" | "recheck";

export interface VerificationStatus {
  totalTasks: number;
  addedTasks: number;
  processingTasks: number;
  failedTasks: number;
  completedTasks: number;
  metadataMismatchTasks: number;
  recheckTasks: number;
}

export interface VerifierProgressBody {
  phase: VerifierPhase;
  error: string | null;
  verificationStatus: VerificationStatus;
}

/** What the verifier learns from the world for the stretch it is advanced over. */
export interface VerifierInputs {
  /** Since when every instance has been ready (undefined: not ready at the end of the stretch). */
  readyFrom: number | undefined;
  /** Fleet-wide source writes produced up to t. */
  sourceWrites(t: number): number;
  /** Problems found up to t, each worth one failing task (lost-write batches, fleet errors). */
  issues(t: number): number;
}

export class Verifier {
  phase: VerifierPhase = "idle";
  running = false;
  t = 0;
  added = 0;
  addedFailing = 0;
  completed = 0;
  failed = 0;
  mismatch = 0;
  queued = 0;
  #docsAcc = 0;
  #work = 0;
  #issuesCounted = 0;
  #generation = 0;
  writesOff = false;
  checks = 0;
  ddlDuring = 0;
  /** Set by a verifier-error fault: the verifier stops and reports it. */
  error: string | null = null;
  #lastReady = false;

  constructor(
    private readonly params: ModelParams,
    private readonly totalBytes: number,
  ) {}

  /** POST /api/v1/check. Returns false when a check is already in progress. */
  check(t: number, inputs: VerifierInputs): boolean {
    if (this.running) return false;
    this.running = true;
    this.phase = "check";
    this.t = t;
    this.#generation = 0;
    this.added = Math.max(1, Math.ceil(this.totalBytes / this.params.verifyBytesPerTask));
    this.addedFailing = this.completed = this.failed = this.mismatch = this.queued = 0;
    this.#docsAcc = this.#work = 0;
    this.ddlDuring = 0;
    // Lost writes and fleet errors from before the check are found by this check too.
    this.#issuesCounted = inputs.issues(t);
    this.addedFailing = this.#issuesCounted;
    this.checks++;
    return true;
  }

  /** POST /api/v1/writesOff: writes have stopped on the source; the verifier may finish. */
  setWritesOff(): void {
    this.writesOff = true;
  }

  /** DDL on the source. Returns true when it happened during verification. */
  ddl(): boolean {
    if (!this.running) return false;
    this.ddlDuring++;
    // The collection's metadata no longer matches and its documents cannot be compared.
    this.mismatch++;
    this.addedFailing++;
    return true;
  }

  advance(t: number, inputs: VerifierInputs): void {
    if (!(t > this.t)) return;
    if (!this.running || this.error !== null) {
      this.t = t;
      this.#lastReady = false;
      return;
    }
    const span = t - this.t;
    const step = Math.max(0.5, span / 400);
    let cur = this.t;
    while (cur < t && this.running) {
      const next = Math.min(t, cur + step);
      // Rechecks: documents the source application changed in this slice.
      this.#docsAcc += Math.max(0, inputs.sourceWrites(next) - inputs.sourceWrites(cur));
      const q = Math.floor(this.#docsAcc / this.params.recheckDocsPerTask);
      if (q > 0) {
        this.queued += q;
        this.#docsAcc -= q * this.params.recheckDocsPerTask;
      }
      const issues = inputs.issues(next);
      if (issues > this.#issuesCounted) {
        this.addedFailing += issues - this.#issuesCounted;
        this.#issuesCounted = issues;
      }
      const activeFrom = inputs.readyFrom === undefined ? Infinity : Math.max(cur, inputs.readyFrom);
      const active = next - activeFrom;
      if (active > 0) {
        const rate =
          this.#generation === 0
            ? this.params.verifyBytesPerSecond / this.params.verifyBytesPerTask
            : this.params.recheckTasksPerSecond;
        let capacity = this.#work + active * rate;
        const n = Math.min(Math.floor(capacity), this.added);
        this.added -= n;
        this.completed += n;
        capacity -= n;
        const f = Math.min(Math.floor(capacity), this.addedFailing);
        this.addedFailing -= f;
        this.failed += f;
        capacity -= f;
        this.#work = this.added + this.addedFailing > 0 ? Math.min(capacity, 1) : 0;
        if (this.added + this.addedFailing === 0) this.#endOfGeneration();
      }
      cur = next;
    }
    this.#lastReady = inputs.readyFrom !== undefined;
    this.t = t;
  }

  #endOfGeneration(): void {
    if (this.writesOff && this.#docsAcc > 0) {
      this.queued += 1; // the last few changed documents
      this.#docsAcc = 0;
    }
    if (this.queued > 0) {
      this.#generation++;
      this.added += this.queued;
      this.queued = 0;
      this.phase = "recheck";
      return;
    }
    if (this.writesOff) {
      // "`idle` means the verification checks are complete."
      this.phase = "idle";
      this.running = false;
      return;
    }
    // Nothing changed yet: the verifier waits in the recheck phase for changes or writesOff.
    this.phase = "recheck";
    this.#generation = Math.max(1, this.#generation);
  }

  progress(): VerifierProgressBody {
    const pending = this.added + this.addedFailing;
    const processing =
      this.running && this.error === null && this.#lastReady ? Math.min(this.params.verifierWorkers, pending) : 0;
    const status: VerificationStatus = {
      totalTasks: pending + this.completed + this.failed + this.mismatch,
      addedTasks: pending - processing,
      processingTasks: processing,
      failedTasks: this.failed,
      completedTasks: this.completed,
      metadataMismatchTasks: this.mismatch,
      recheckTasks: this.queued,
    };
    return { phase: this.phase, error: this.error, verificationStatus: status };
  }
}
