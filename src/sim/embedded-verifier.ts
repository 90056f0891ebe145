/**
 * The service's embedded verifier (1.9) on one instance: whether it runs, when it hashes, how far
 * its current run has got, and the `verification` object progress reports. It starts over after a
 * pause and resume, or a restart (`hashFrom`, set by the instance's state machine).
 */
import type { SyncInstance } from "./instance.js";
import { BEHAVIOUR_SINCE, atLeast } from "./versions.js";

export interface EmbeddedVerifierSide {
  estimatedDocumentCount: number;
  hashedDocumentCount: number;
  lagTimeSeconds: number | null;
  totalCollectionCount: number;
  scannedCollectionCount: number;
  phase: "not started" | "initial hashing" | "stream hashing";
}

/**
 * Whether it runs: what start said, else its default, "on by default for replica sets from 1.9,
 * for sharded clusters from 1.10" (a sync with a sharded cluster on either side counts as sharded).
 */
export function embeddedVerifierOn(inst: SyncInstance): boolean {
  if (!inst.has("verification")) return false;
  const asked = inst.body?.verification?.enabled;
  if (asked !== undefined) return asked;
  const b = inst.body;
  const sharded = b !== undefined && (inst.env.sharded(b.source) || inst.env.sharded(b.destination));
  return !sharded || atLeast(inst.env.version, BEHAVIOUR_SINCE.embeddedVerifierSharded);
}

/** It hashes from the copy (before 1.22) or from change event application (1.22). */
export function hashesNow(inst: SyncInstance): boolean {
  if (inst.phase === "cea") return true;
  return inst.phase === "copy" && !atLeast(inst.env.version, BEHAVIOUR_SINCE.embeddedVerifierAtCea);
}

/** The fraction its current run has hashed by t (during the copy: no more than is copied). */
export function hashedFraction(inst: SyncInstance, t: number): number {
  if (!embeddedVerifierOn(inst) || inst.hashFrom === undefined || !hashesNow(inst)) return 0;
  const rate = inst.env.params.embeddedHashBytesPerSecond;
  const done = rate > 0 ? (Math.max(0, t - inst.hashFrom) * rate) / Math.max(1, inst.share) : 1;
  const copied = inst.phase === "cea" ? 1 : inst.copied / Math.max(1, inst.share);
  return Math.min(1, done, copied);
}

/** It is in `stream hashing` at t (facts: the state that allows commit). */
export function streamHashing(inst: SyncInstance, t: number): boolean {
  return inst.phase === "cea" && hashedFraction(inst, t) >= 1 - 1e-9;
}

/** Progress's `verification` object at t. */
export function embeddedVerification(
  inst: SyncInstance,
  t: number,
): { source: EmbeddedVerifierSide; destination: EmbeddedVerifierSide } {
  const docs = Math.round(inst.share / inst.env.params.averageDocumentBytes);
  const colls = inst.env.collections;
  // facts: "From 1.22 it starts at change event application and reports "not started" during the
  // collection copy"; it starts again from the beginning after a pause and resume, or a restart
  const started = embeddedVerifierOn(inst) && inst.hashFrom !== undefined && hashesNow(inst);
  const streaming = started && streamHashing(inst, t);
  const frac = started ? hashedFraction(inst, t) : 0;
  const side = (lag: number | null): EmbeddedVerifierSide => {
    return {
      estimatedDocumentCount: docs,
      hashedDocumentCount: Math.floor(docs * frac),
      lagTimeSeconds: streaming ? lag : null,
      totalCollectionCount: colls,
      scannedCollectionCount: Math.floor(colls * frac),
      phase: streaming ? "stream hashing" : started ? "initial hashing" : "not started",
    };
  };
  const lag = inst.lag(t);
  return { source: side(lag), destination: side(lag) };
}
