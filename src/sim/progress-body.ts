/**
 * What one instance's progress endpoint answers at a simulated time, for the service version it
 * emulates (spec/sync-service-api.md's progress rules, service-facts.md's fields by version): the
 * fields present from their version, null or omitted where the facts say, and the documented
 * strings.
 */
import { embeddedVerification, type EmbeddedVerifierSide } from "./embedded-verifier.js";
import type { SyncInstance, SyncState } from "./instance.js";
import { blocksSourceWrites } from "./validate-start.js";
import { BEHAVIOUR_SINCE, atLeast } from "./versions.js";

export interface ProgressBody {
  state: SyncState;
  canCommit: boolean;
  canWrite: boolean | null;
  info: string | null;
  lagTimeSeconds: number | null;
  totalEventsApplied?: number | null;
  collectionCopy: { estimatedTotalBytes: number; estimatedCopiedBytes: number } | null;
  directionMapping: { Source: string; Destination: string } | null;
  mongosyncID?: string | null;
  coordinatorID?: string | null;
  verification?: { source: EmbeddedVerifierSide; destination: EmbeddedVerifierSide } | null;
  estimatedSecondsToCEACatchup?: number | null;
  /** 1.17: the instance's ping to each cluster (absent under 1 ms or before the first ping). */
  source?: { pingLatencyMs?: number };
  destination?: { pingLatencyMs?: number };
  indexBuilding?: {
    indexesBuilt: number;
    totalIndexesToBuild: number;
    collectionsFinished: number;
    collectionsTotal: number;
  } | null;
  estimatedOplogTimeRemaining?: string | null;
  warnings?: string[] | null;
  lag?: { overallLagSeconds: number; crudLagSeconds: number | null; ddlLagSeconds: number | null } | null;
  ceaStage?: string | null;
}

/** Indexes per collection, for indexBuilding (the simulated data set has this many secondary indexes each). */
const INDEXES_PER_COLLECTION = 3;

function copyFields(inst: SyncInstance): { estimatedTotalBytes: number; estimatedCopiedBytes: number } {
  const total = inst.env.totalBytes;
  // Rule 3: "Before the collection copy phase, estimatedCopiedBytes is 0 and estimatedTotalBytes is 1."
  if (inst.phase === "precopy") return { estimatedTotalBytes: 1, estimatedCopiedBytes: 0 };
  if (inst.upgrade) {
    if (inst.upgrade.totalAfter === null) return { estimatedTotalBytes: 1, estimatedCopiedBytes: 0 };
    const tot = inst.upgrade.totalAfter;
    return {
      estimatedTotalBytes: tot,
      estimatedCopiedBytes: Math.min(tot, Math.max(0, Math.floor(inst.copied - inst.upgrade.base))),
    };
  }
  // facts: "Before 1.21 `estimatedCopiedBytes` may exceed `estimatedTotalBytes` (the total is an
  // estimate); from 1.21 the service raises `estimatedTotalBytes` when the copied bytes pass it"
  const estimate = Math.max(1, Math.round(total * inst.env.params.estimatedTotalRatio));
  const copied = Math.floor(inst.copied);
  const raised = atLeast(inst.env.version, BEHAVIOUR_SINCE.totalRaisedToCopied);
  return { estimatedTotalBytes: raised ? Math.max(estimate, copied) : estimate, estimatedCopiedBytes: copied };
}

function info(inst: SyncInstance): string | null {
  if (inst.failure) return `migration failed: ${inst.failure.reason}`;
  // facts: "`info` values documented: `collection copy`, `change event application`,
  // `waiting for commit to complete`, `commit completed`"
  if (inst.state === "REVERSING") return null;
  if (inst.state === "COMMITTING") return "waiting for commit to complete";
  if (inst.state === "COMMITTED") return "commit completed";
  return inst.phase === "cea" ? "change event application" : "collection copy";
}

/** The `progress` object of an instance at t (advance it first). */
export function progressBody(inst: SyncInstance, t: number): ProgressBody {
  if (inst.stale && t < inst.stale.until) return inst.stale.body;
  inst.stale = undefined;
  const idle = inst.state === "IDLE" || inst.state === "INITIALIZING";
  const out: ProgressBody = {
    state: inst.state,
    canCommit: idle ? false : inst.canCommit,
    canWrite: null,
    info: null,
    lagTimeSeconds: null,
    collectionCopy: null,
    directionMapping: null,
  };
  if (inst.has("totalEventsApplied")) out.totalEventsApplied = null;
  if (inst.has("ids")) Object.assign(out, { mongosyncID: null, coordinatorID: null });
  // Rule 1: "In state IDLE, all fields except `state` and `canCommit` are null." (INITIALIZING
  // likewise). The fields the facts say are omitted where they do not apply are left out instead.
  if (inst.has("verification")) out.verification = null;
  if (inst.has("lag")) out.lag = null;
  if (idle) return out;

  const lag = inst.lag(t);
  const cea = inst.phase === "cea" && inst.state === "RUNNING";
  // the cutover page: "only check that canWrite is true on the first mongosync process. The
  // canWrite status of any subsequent mongosync processes is not valid". The first process is
  // the instance started first (index 0); the others' is a value of no meaning: by default never
  // true, so a wait on theirs never ends, or (`model.otherCanWriteAfter`) true before the first
  // process's, so a window closed on it closes early; a test of either fails, as it may with the
  // real service
  const after = inst.index === 0 ? inst.env.params.canWriteAfter : inst.env.params.otherCanWriteAfter;
  out.canWrite =
    (inst.index === 0 || after <= 1) &&
    !inst.failure &&
    (inst.state === "COMMITTED" ||
      (inst.state === "COMMITTING" &&
        !inst.earlyCommit &&
        inst.commitLeft <= inst.commitDuration * (1 - after) + 1e-9));
  out.info = info(inst);
  out.lagTimeSeconds = lag;
  if (inst.has("totalEventsApplied")) out.totalEventsApplied = Math.max(0, Math.floor(inst.applied - inst.counterBase));
  out.collectionCopy = copyFields(inst);
  const dir = inst.direction!;
  out.directionMapping = {
    Source: `${dir.source}: ${inst.env.clusterHost(dir.source)}`,
    Destination: `${dir.destination}: ${inst.env.clusterHost(dir.destination)}`,
  };
  if (inst.has("ids")) {
    out.mongosyncID = inst.id;
    // facts: "`coordinatorID` may be null at start-up"
    out.coordinatorID = t < inst.idsFrom ? null : inst.coordinatorId;
  }
  if (inst.has("verification")) out.verification = embeddedVerification(inst, t);
  if (inst.has("estimatedSecondsToCEACatchup") && cea) {
    // facts: "**omitted** outside change event application, or when lag has not decreased"
    // the drain of the copy's backlog applies at its own rate (model.ts `drainApplyFactor`)
    const draining = inst.applied < inst.drainTo - 1e-6;
    const A = inst.env.params.applyEventsPerSecond * (draining ? inst.env.params.drainApplyFactor : 1);
    const src = inst.env.source;
    const backlog = Math.max(0, src.events(t) - inst.applied);
    if (backlog < 1) out.estimatedSecondsToCEACatchup = 0;
    else if (A > src.rate) out.estimatedSecondsToCEACatchup = Math.ceil(backlog / (A - src.rate));
  }
  // facts: "`source.pingLatencyMs`, `destination.pingLatencyMs` | 1.17 | **absent** when under 1 ms"
  const ping = inst.env.params.pingLatencyMs;
  if (inst.has("pingLatencyMs") && (ping >= 1 || ping === -1)) {
    out.source = { pingLatencyMs: ping };
    out.destination = { pingLatencyMs: ping };
  }
  // facts: "`indexBuilding` | 1.19 | **only during change event application**, with index builds after the copy"
  if (inst.has("indexBuilding") && cea && inst.indexesReadyAt !== undefined) {
    const dur = inst.env.params.indexBuildSeconds;
    const frac = dur > 0 ? Math.min(1, Math.max(0, 1 - (inst.indexesReadyAt - t) / dur)) : 1;
    const colls = inst.env.collections;
    out.indexBuilding = {
      indexesBuilt: Math.floor(colls * INDEXES_PER_COLLECTION * frac),
      totalIndexesToBuild: colls * INDEXES_PER_COLLECTION,
      collectionsFinished: Math.floor(colls * frac),
      collectionsTotal: colls,
    };
  }
  // facts: "a human string … **only in RUNNING before `canWrite` is true**"
  if (inst.has("estimatedOplogTimeRemaining") && inst.state === "RUNNING")
    out.estimatedOplogTimeRemaining =
      inst.phase === "precopy"
        ? "not checked yet"
        : oplogTimeRemaining(inst.env.params.oplogWindowSeconds - (lag ?? 0));
  // facts: "`warnings` | 1.19 | array of strings, **omitted when there are none**; one says the
  // service blocks user writes on the source" (dual write blocking, after commit)
  if (inst.has("warnings") && inst.commitAt !== undefined && blocksSourceWrites(inst.body))
    out.warnings = ["the sync service is blocking user writes on the source cluster"];
  // facts: "`ddlLagSeconds` null with a pre-6.0 source or before any DDL event, `crudLagSeconds`
  // null before the first CRUD timestamp; `lag` null while PAUSED"
  if (inst.has("lag") && lag !== null) {
    const crud = inst.env.source.events(t) > inst.startEvents + 1e-6;
    const ddl = inst.env.ddlEvents() > inst.startDdl && atLeast(inst.env.serverVersion(inst.direction!.source), "6.0");
    out.lag = { overallLagSeconds: lag, crudLagSeconds: crud ? lag : null, ddlLagSeconds: ddl ? lag : null };
  }
  // facts: "`ceaStage` | 1.22 | **only during change event application**: "collection copy drain" or "steady state""
  if (inst.has("ceaStage") && cea)
    out.ceaStage = inst.applied < inst.drainTo - 1e-6 ? "collection copy drain" : "steady state";
  return out;
}

/**
 * `estimatedOplogTimeRemaining` as the documented strings: "12 hours", "45 minutes", "less than
 * 15 minutes", "more than 72 hours" (the facts give no other form).
 */
export function oplogTimeRemaining(seconds: number): string {
  if (seconds > 72 * 3600) return "more than 72 hours";
  if (seconds < 15 * 60) return "less than 15 minutes";
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)} hours`;
  return `${Math.floor(seconds / 60)} minutes`;
}
