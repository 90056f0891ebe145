/**
 * Time passing for one simulated instance, in closed form. Nothing ticks: `advance(inst, t)` moves
 * the instance from the simulated time it was last evaluated at to `t`: within one stretch of time
 * every rate is constant (copy rate, apply rate, the source's event rate), and whatever changes a
 * rate from outside (a command, the writes switch, an instance going down) first advances every
 * instance to "now". The transitions that happen on their own (INITIALIZING → IDLE, pre-copy →
 * copy → change event application, index builds, COMMITTING → COMMITTED, REVERSING → RUNNING, a
 * live upgrade at a copy fraction, a migration failing on source writes during commit) are found
 * at their exact time. This is what lets one process answer hundreds of instances on a few % of a
 * core.
 */
import { embeddedVerifierOn, hashesNow } from "./embedded-verifier.js";
import type { SyncInstance } from "./instance.js";
import { blocksSourceWrites } from "./validate-start.js";
import { BEHAVIOUR_SINCE, atLeast } from "./versions.js";

/** Moves an instance to simulated time t (see the file comment). */
export function advance(inst: SyncInstance, t: number): void {
  if (!(t > inst.t)) return;
  if (inst.state === "COMMITTING" && !inst.failure && !inst.down) {
    const failAt = sourceWriteFailure(inst, inst.t);
    if (failAt !== undefined && failAt < t) {
      step(inst, failAt);
      if (inst.state === "COMMITTING") {
        // "From 1.17 the service fails the migration if it sees writes on the source during commit"
        inst.failure = { at: failAt, reason: "writes were seen on the source during commit" };
        inst.t = t;
        return;
      }
    }
  }
  step(inst, t);
}

function step(inst: SyncInstance, t: number): void {
  if (!(t > inst.t)) return;
  const p = inst.env.params;
  let cur = inst.t;
  // Each pass handles one stretch and either reaches t (break) or a transition (continue).
  for (let guard = 0; cur < t && guard < 24; guard++) {
    if (inst.down || inst.failure) break;
    if (inst.state === "INITIALIZING") {
      if (inst.initUntil > t) break;
      cur = Math.max(cur, inst.initUntil);
      // "once initialization completes it reports IDLE, or, after a crash or restart, the state it had before the crash"
      inst.state = inst.afterInit ?? "IDLE";
      inst.afterInit = undefined;
      if (inst.ready) inst.readySince = cur;
      if (hashesNow(inst) && inst.state !== "PAUSED") inst.hashFrom = cur;
      continue;
    }
    const copying = inst.state === "RUNNING" || (inst.state === "COMMITTING" && inst.earlyCommit);
    if (copying && inst.phase === "precopy") {
      const end = cur + inst.precopyLeft;
      if (end > t) {
        inst.precopyLeft -= t - cur;
        cur = t;
        break;
      }
      cur = end;
      inst.precopyLeft = 0;
      inst.phase = "copy";
      inst.collectionsAt ??= cur;
      if (hashesNow(inst)) inst.hashFrom ??= cur;
      continue;
    }
    if (copying && inst.phase === "copy") {
      const rate = p.copyBytesPerSecond;
      const tEnd = cur + Math.max(0, inst.share - inst.copied) / rate;
      if (inst.pendingUpgrade !== null) {
        const target = inst.pendingUpgrade * inst.share;
        const tUp = inst.copied >= target ? cur : cur + (target - inst.copied) / rate;
        if (tUp <= t && tUp <= tEnd) {
          inst.copied = Math.max(inst.copied, Math.min(inst.share, target));
          cur = tUp;
          inst.liveUpgrade(cur);
          continue;
        }
      }
      if (tEnd > t) {
        inst.copied += (t - cur) * rate;
        cur = t;
        break;
      }
      inst.copied = inst.share;
      cur = tEnd;
      enterCea(inst, cur);
      continue;
    }
    if (inst.state === "RUNNING" && inst.phase === "cea") {
      if (inst.pendingUpgrade !== null) {
        inst.liveUpgrade(cur);
        continue;
      }
      inst.applied = applyUntil(inst, cur, t);
      cur = t;
      break;
    }
    if (inst.state === "COMMITTING" && inst.earlyCommit && inst.phase === "cea") {
      // the early commit proceeds once the index builds are done, for the lag left then
      const ready = inst.indexesReadyAt ?? cur;
      if (ready > t) {
        inst.applied = applyUntil(inst, cur, t);
        cur = t;
        break;
      }
      inst.applied = applyUntil(inst, cur, Math.max(cur, ready));
      cur = Math.max(cur, ready);
      inst.earlyCommit = false;
      const lag = inst.runningLag(cur);
      inst.commitLeft = lag;
      inst.commitDuration = lag;
      inst.commitEvents = Math.max(inst.commitEvents, inst.applied);
      continue;
    }
    if (inst.state === "COMMITTING") {
      const end = cur + inst.commitLeft;
      inst.applied = Math.min(inst.commitEvents, inst.applied + p.applyEventsPerSecond * (Math.min(end, t) - cur));
      if (end > t) {
        inst.commitLeft -= t - cur;
        cur = t;
        break;
      }
      cur = end;
      inst.commitLeft = 0;
      inst.applied = inst.commitEvents;
      inst.state = "COMMITTED";
      inst.committedAt = cur;
      continue;
    }
    if (inst.state === "REVERSING") {
      const end = cur + inst.reversingLeft;
      if (end > t) {
        inst.reversingLeft -= t - cur;
        cur = t;
        break;
      }
      cur = end;
      inst.reversingLeft = 0;
      inst.finishReverse(cur);
      continue;
    }
    break; // IDLE, PAUSED, COMMITTED: nothing moves.
  }
  inst.t = t;
}

function enterCea(inst: SyncInstance, t: number): void {
  inst.phase = "cea";
  inst.readySince = t;
  inst.drainTo = inst.env.source.events(t);
  if (atLeast(inst.env.version, BEHAVIOUR_SINCE.embeddedVerifierAtCea)) inst.hashFrom = t;
  inst.copiedAt ??= t;
  inst.indexesReadyAt = inst.buildsAfterCopy ? t + inst.env.params.indexBuildSeconds : undefined;
  // facts: the embedded verifier, "with `buildIndexes: never` and TTL collections it fails the migration"
  if (embeddedVerifierOn(inst) && inst.buildIndexes === "never" && inst.env.ttlCollections > 0)
    inst.failure = {
      at: t,
      reason: 'the embedded verifier cannot verify TTL indexes the sync did not build (buildIndexes "never")',
    };
}

/** 1.17+: the time a write reaches the source during this commit, if one does from `from` on. */
function sourceWriteFailure(inst: SyncInstance, from: number): number | undefined {
  if (!atLeast(inst.env.version, BEHAVIOUR_SINCE.failOnSourceWritesDuringCommit)) return undefined;
  if (inst.commitAt === undefined || blocksSourceWrites(inst.body)) return undefined;
  const src = inst.env.source;
  const base = src.events(inst.commitAt);
  const now = src.events(from);
  if (now > base + 1e-6) return from;
  if (!(src.rate > 0)) return undefined;
  return from + (base + 1e-6 - now) / src.rate;
}

/**
 * Events applied by time t1 when applying at full rate from t0 (queue reflection formula). The
 * drain of the copy's backlog (`drainTo`) goes at `drainApplyFactor` of the rate first: below the
 * backlog every event is already on the source, so only the rate bounds it.
 */
function applyUntil(inst: SyncInstance, t0: number, t1: number): number {
  const factor = inst.env.params.drainApplyFactor;
  if (factor !== 1 && inst.applied < inst.drainTo - 1e-6) {
    const rate = inst.env.params.applyEventsPerSecond * factor;
    const drained = t0 + (inst.drainTo - inst.applied) / rate;
    if (drained >= t1) return inst.applied + rate * (t1 - t0);
    inst.applied = inst.drainTo;
    t0 = drained;
  }
  const A = inst.env.params.applyEventsPerSecond;
  const src = inst.env.source;
  return Math.min(inst.applied + A * (t1 - t0), src.events(t1), src.minThroughBreakpoints(t0, t1, A));
}
