/**
 * The run's memory of its verification (what the verifier showed when it began, and what it was
 * asked since): kept by the verify step kinds (src/steps/kit/verifier.ts) and rebuilt from the
 * journal for \`--resume\` (src/journal/verifier.ts). Here, below both, so that the journal needs
 * nothing from the step kinds (the layers: docs/ARCHITECTURE.md).
 */
import type { VerifierProgress } from "./types.js";

/**
 * One operational request to the verifier and its outcome: `ok` accepted, `error` refused (or
 * never sent), `unknown` no usable answer (it may have arrived: it is never resent while it may
 * still be in flight, service facts: a second one shuts the verifier down).
 */
export interface VerifierAsk {
  answered: "ok" | "error" | "unknown";
  /** Epoch ms when it was sent. */
  at: number;
  /**
   * No answer, and the request may still be on its way until its time limit has passed (it timed
   * out or was cut short by the caller; or the journal has no answer line). A reset connection
   * ended the exchange on both sides: not in flight.
   */
  inFlight?: boolean;
  /** The refusal or transport error, when there was one. */
  error?: string;
}

/** The run's verification: what the verifier showed when it began, and what it was asked since. */
export interface VerifierMemory {
  /** Its progress before this run's check (the `verifier.baseline` event, journaled). */
  baseline?: VerifierProgress;
  /** The check was already running when the verification began: adopted, not sent. */
  adopted?: boolean;
  check?: VerifierAsk;
  writesOff?: VerifierAsk;
  /**
   * The highest generation the verifier has shown since this verification began (or since its
   * last restart): a lower one is a new process (service facts: a restarted verifier shows
   * generation 0 until a check resumes its persisted one).
   */
  highestGeneration?: number;
  /**
   * The highest count of change events the verifier has shown since this verification began (or
   * its last restart): the count is kept with the verification, so a lower one is another
   * verification (src/steps/kit/earned.ts `eventsSeen`).
   */
  highestEvents?: number;
  /**
   * The verifier's generation when this verification's writesOff was sent (journaled
   * `verifier.writesOff`): a result comes from a later generation (after writesOff the verifier
   * finishes the generation it is in and runs one more).
   */
  writesOffGeneration?: number;
  /**
   * This verification's writesOff went out with the application's writes not known stopped: its
   * `writes-stopped` interlock was forced (journaled on `verifier.writesOff`). Writes after
   * writesOff are never compared, so no result of it verifies the cutover (an adversarial run: the
   * report said SUCCEEDED · VERIFIED with the sync RUNNING and writes on).
   */
  writesOffForced?: boolean;
  /**
   * This verification's check went with a filter (JSON, journaled on `verifier.baseline`): the
   * check is "to only check documents within that filter" (migration-verifier README.md, v0.2.1),
   * so a result verifies those alone, and every output says so.
   */
  filter?: string;
  /** The verifier restarted during this verification: its next check resumes the persisted one. */
  resuming?: boolean;
  /** Restarts seen during this run's verifications (journaled `verifier.restarted`). */
  restarts?: number;
  /** Progress answered an empty HTTP 500 before a check: releases v0.1.6 to v0.2.0 do. */
  oldRelease?: boolean;
  /**
   * This verification's check went to a verifier whose answer before it could not tell whether
   * the check starts afresh or resumes an earlier verification (idle at generation 0 with tasks,
   * with or without `--clean`; an empty HTTP 500): its first answers decide (earned.ts
   * `freshStart`, journaled `verifier.origin`). Until then nothing it shows is this cutover's.
   */
  unproven?: "persisted" | "oldRelease";
  /**
   * The first answers after this run's check showed a verification this cutover did not start
   * (resumed): why. Its check no longer counts, and a check found running is not adopted (it may
   * be that very one) until a verification of this cutover's shows (journaled `verifier.origin`).
   */
  refused?: string;
  /**
   * This verification began at generation 0 for this cutover, the pass that compares every
   * document (journaled on `verifier.baseline` and `verifier.origin`): its check went to a verifier
   * with nothing to resume, its first answers showed a fresh start, a check it adopted was still in
   * generation 0, or it is this cutover's own resumed after a restart. Without it no result is
   * "verified" (earned.ts `notFromStart`).
   */
  fromStart?: boolean;
  /** A `verify` step passed on this cutover's result (journaled `verifier.verified`). */
  verified?: { at: number; generation: number };
  /**
   * The id of a `reverse` step that ended ok since the last verification began (its baseline): the
   * sync runs the other way, so what the verifier compared (and a `verify` passed on) no longer
   * speaks for it.
   */
  reversed?: string;
}

/**
 * The change events the verifier counted since its verification first started: both sides'
 * `eventCounts`, summed. migration-verifier v0.2.1 internal/verifier/change_reader.go:
 * `cumulativeEventCounts` "tallies all change events seen since the verifier first started.
 * Unlike EventRecorder, this is never reset and is persisted alongside the resume token so it
 * survives restarts"; saved at most every 10 s (recheck_persist.go), so a restarted process may
 * show fewer than its last answer did. Undefined where a release shows none.
 */
export function eventsSeen(p: VerifierProgress): number | undefined {
  let sum: number | undefined;
  for (const side of [p.srcChangeStats, p.dstChangeStats]) {
    const counts = isRecord(side) ? side.eventCounts : undefined;
    if (!isRecord(counts)) continue;
    for (const v of Object.values(counts)) if (Number.isFinite(v)) sum = (sum ?? 0) + (v as number);
  }
  return sum;
}

/** A new process (or an adopted check): the change events it shows now are the floor of its later ones. */
export function eventsFloor(m: VerifierMemory, p: VerifierProgress | undefined): void {
  const n = p && eventsSeen(p);
  if (n === undefined) delete m.highestEvents;
  else m.highestEvents = n;
}

/** A JSON object: not null, not an array. */
export const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

/** Forgets the run's verification: a new one begins (the verifier restarted, or none ran yet). */
export function forgetVerification(m: VerifierMemory): void {
  delete m.baseline;
  delete m.adopted;
  delete m.check;
  delete m.writesOff;
  delete m.writesOffGeneration;
  delete m.writesOffForced;
  delete m.filter;
  delete m.highestGeneration;
  delete m.highestEvents;
  delete m.resuming;
  delete m.unproven;
  delete m.fromStart;
  delete m.verified;
}

/**
 * A `reverse` ended ok: the verification so far, its check and a `verify` that passed on it,
 * compared the sync before the reverse. None of it counts for the reversed one (a check after it
 * is a new verification, which a verifier that finished one refuses: src/steps/kit/verifier.ts
 * beginCheck), and the run no longer ends "verified" on it. Kept by the run and by the journal's
 * fold alike (src/journal/verifier.ts), so that `--resume` knows it too.
 */
export function reversedVerification(m: VerifierMemory, step: string): void {
  forgetVerification(m);
  m.reversed = step;
}
