/**
 * One simulated sync service instance: the state machine of spec/sync-service-api.md and
 * spec/service-facts.md, and the quantities its progress endpoint reports for the service
 * version it emulates, evaluated lazily.
 *
 * Nothing ticks. `advance(t)` moves the instance from the simulated time it was last evaluated
 * at to `t` in closed form: within one stretch of time every rate is constant (copy rate,
 * apply rate, the source's event rate), and whatever changes a rate from outside (a command,
 * the writes switch, an instance going down) first advances every instance to "now". Inside
 * `advance`, the transitions that happen on their own (INITIALIZING → IDLE, pre-copy → copy →
 * change event application, index builds, COMMITTING → COMMITTED, REVERSING → RUNNING, a live
 * upgrade at a copy fraction, a migration failing on source writes during commit) are found at
 * their exact time. This is what lets one process answer hundreds of instances on a few % of a
 * core.
 */
import type { SourceTimeline } from "./source.js";
import { blocksSourceWrites, type BuildIndexes, type StartRequest } from "./validate-start.js";
import { BEHAVIOUR_SINCE, CAN_COMMIT_MAX_LAG_SECONDS, PROGRESS_SINCE, atLeast } from "./versions.js";

export type SyncState = "INITIALIZING" | "IDLE" | "RUNNING" | "PAUSED" | "COMMITTING" | "COMMITTED" | "REVERSING";
/** Where a started sync is: before the copy, copying, or in change event application. */
export type SyncPhase = "precopy" | "copy" | "cea";

/** The model's rates and durations (simulated time). */
export interface ModelParams {
  /** Bytes one instance copies per simulated second (default 64 MiB). */
  copyBytesPerSecond: number;
  /** Change events one instance applies per simulated second (default 4000). */
  applyEventsPerSecond: number;
  /** Seconds between start and the beginning of the copy, when progress shows 0 of 1 (default 3). */
  precopySeconds: number;
  /** The lag that no-ops keep even with no writes ("a few seconds above zero"; default 2). */
  noopLagSeconds: number;
  /** Fraction of COMMITTING after which canWrite turns true (default 0.5). */
  canWriteAfter: number;
  /** Service 1.20+: seconds an instance is INITIALIZING after it starts or restarts while IDLE (default 2). */
  initializingSeconds: number;
  /** Seconds after start or a restart during which coordinatorID is still null (default 1). */
  coordinatorNullSeconds: number;
  /** Index builds after the copy (buildIndexes afterDataCopy): seconds before canCommit (default 5). */
  indexBuildSeconds: number;
  /** Seconds in REVERSING before the reversed sync is RUNNING (default 3). */
  reversingSeconds: number;
  /** `source.pingLatencyMs` / `destination.pingLatencyMs` from 1.17 (default 1; absent under 1 ms). */
  pingLatencyMs: number;
  /** The copy total the service estimates, as a fraction of the real data (default 1: exact). */
  estimatedTotalRatio: number;
  /** The embedded verifier's initial hashing: bytes per simulated second (default 256 MiB). */
  embeddedHashBytesPerSecond: number;
  /** How long the source's oplog holds changes, for `estimatedOplogTimeRemaining` (default 100 h). */
  oplogWindowSeconds: number;
  /** Average document size, for document counts (default 1024). */
  averageDocumentBytes: number;
  /** Verifier: seconds between an accepted check and its first task; progress waits meanwhile (default 1). */
  verifierSetupSeconds: number;
  /** Verifier: bytes compared per simulated second (default 256 MiB). */
  verifyBytesPerSecond: number;
  /** Verifier: bytes per first-generation task (default 256 MiB). */
  verifyBytesPerTask: number;
  /** Verifier: changed documents per recheck task (default 1000). */
  recheckDocsPerTask: number;
  /** Verifier: recheck and collection tasks done per simulated second (default 20). */
  recheckTasksPerSecond: number;
  /** Verifier: tasks processed at once (default 4). */
  verifierWorkers: number;
}

export const DEFAULT_MODEL: ModelParams = {
  copyBytesPerSecond: 64 * 2 ** 20,
  applyEventsPerSecond: 4000,
  precopySeconds: 3,
  noopLagSeconds: 2,
  canWriteAfter: 0.5,
  initializingSeconds: 2,
  coordinatorNullSeconds: 1,
  indexBuildSeconds: 5,
  reversingSeconds: 3,
  pingLatencyMs: 1,
  estimatedTotalRatio: 1,
  embeddedHashBytesPerSecond: 256 * 2 ** 20,
  oplogWindowSeconds: 100 * 3600,
  averageDocumentBytes: 1024,
  verifierSetupSeconds: 1,
  verifyBytesPerSecond: 256 * 2 ** 20,
  verifyBytesPerTask: 256 * 2 ** 20,
  recheckDocsPerTask: 1000,
  recheckTasksPerSecond: 20,
  verifierWorkers: 4,
};

/** What an instance needs from the world around it. */
export interface InstanceEnv {
  source: SourceTimeline;
  params: ModelParams;
  /** The emulated service version. */
  version: string;
  /** Global estimated total bytes (spec: "total bytes to copy globally across all instances"). */
  totalBytes: number;
  /** Collections of the data set, and how many have TTL indexes. */
  collections: number;
  ttlCollections: number;
  /** Server version of a cluster setting (default 7.0). */
  serverVersion(name: string): string;
  /** Whether a cluster setting is a sharded cluster. */
  sharded(name: string): boolean;
  /** DDL events on the source so far. */
  ddlEvents(): number;
  /** Lag floor from `lag-floor` faults in force at t (0 when none). */
  lagFloor(index: number, t: number): number;
  /** The instance resumed or restarted at t (progress may fail for a while: faults). */
  onRestart(index: number, t: number): void;
  /** `host:port` of a cluster setting, for directionMapping. */
  clusterHost(name: string): string;
}

interface EmbeddedVerifierSide {
  estimatedDocumentCount: number;
  hashedDocumentCount: number;
  lagTimeSeconds: number | null;
  totalCollectionCount: number;
  scannedCollectionCount: number;
  phase: "not started" | "initial hashing" | "stream hashing";
}

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

export class SyncInstance {
  state: SyncState;
  phase: SyncPhase = "precopy";
  /** Simulated time this instance has been advanced to. */
  t = 0;
  down = false;
  body: StartRequest | undefined;
  direction: { source: string; destination: string } | undefined;
  /** This instance's share of the data (the total split across instances). */
  share: number;
  copied = 0;
  /** Source events (per-instance units of the shared timeline) applied so far. */
  applied = 0;
  /** `applied` when totalEventsApplied last restarted from 0 (start; restarts: "not persisted"). */
  counterBase = 0;
  precopyLeft = 0;
  commitLeft = 0;
  commitDuration = 0;
  commitEvents = 0;
  /** A commit accepted before canCommit (below 1.21): COMMITTING waits for the copy and index builds first. */
  earlyCommit = false;
  /** Simulated time commit was accepted (writes after it are lost), until a reverse. */
  commitAt: number | undefined;
  /** Lost events counted before a reverse. */
  lostFrozen = 0;
  /** Since when the instance has been in CEA, COMMITTING or COMMITTED without interruption. */
  readySince: number | undefined;
  /** When this instance's copy began (collections exist on the destination), since its start. */
  collectionsAt: number | undefined;
  /** When this instance's copy ended, since its start. */
  copiedAt: number | undefined;
  /** When this instance reached COMMITTED. */
  committedAt: number | undefined;
  /** Copy fraction at which a live upgrade is due (from a live-upgrade fault). */
  pendingUpgrade: number | null = null;
  /** Set by a live upgrade: copy progress is reported from this baseline. */
  upgrade: { base: number; totalAfter: number | null } | undefined;
  /** Progress answers an error until this simulated time (faults). */
  unavailableUntil = -Infinity;
  reversed = false;
  /** INITIALIZING until this time (1.20+). */
  initUntil = -Infinity;
  /** coordinatorID is null before this time ("may be null at start-up"). */
  idsFrom = -Infinity;
  /** Index builds after the copy: canCommit waits until this time. */
  indexesReadyAt: number | undefined;
  reversingLeft = 0;
  /** The migration failed: when, and why. Every command is refused from then on. */
  failure: { at: number; reason: string } | undefined;
  /** late-effect: progress shows this answer, from before a command, until `until`. */
  stale: { until: number; body: ProgressBody } | undefined;
  /** 1.20+: the state a restarted instance returns to once INITIALIZING is over (facts: "the state it had before the crash"). */
  afterInit: SyncState | undefined;
  /** When the embedded verifier's current run began hashing (it starts over after a pause, resume or restart). */
  hashFrom: number | undefined;
  /** Source events at the start of change event application: until they are applied, `ceaStage` is the copy drain. */
  drainTo = 0;
  /** Source events and DDL events at start: `lag.crudLagSeconds` / `ddlLagSeconds` are null until there are more. */
  startEvents = 0;
  startDdl = 0;

  constructor(
    readonly index: number,
    readonly id: string,
    readonly coordinatorId: string,
    share: number,
    private readonly env: InstanceEnv,
  ) {
    this.share = share;
    const v = env.version;
    this.state =
      atLeast(v, BEHAVIOUR_SINCE.initializing) && env.params.initializingSeconds > 0 ? "INITIALIZING" : "IDLE";
    if (this.state === "INITIALIZING") this.initUntil = env.params.initializingSeconds;
  }

  /** Features by the version they were judged for (a live upgrade changes it): every progress answer asks. */
  #features = { version: "", has: new Map<keyof typeof PROGRESS_SINCE, boolean>() };

  #has(feature: keyof typeof PROGRESS_SINCE): boolean {
    if (this.#features.version !== this.env.version) this.#features = { version: this.env.version, has: new Map() };
    let has = this.#features.has.get(feature);
    if (has === undefined) {
      has = atLeast(this.env.version, PROGRESS_SINCE[feature]);
      this.#features.has.set(feature, has);
    }
    return has;
  }

  /** The buildIndexes in effect: "from 1.17 `afterDataCopy` is the default for sources on server 6.0+". */
  get buildIndexes(): BuildIndexes {
    const asked = this.body?.buildIndexes;
    if (asked) return asked;
    const src = this.body ? this.env.serverVersion(this.body.source) : "7.0";
    return atLeast(this.env.version, BEHAVIOUR_SINCE.afterDataCopyDefault) && atLeast(src, "6.0")
      ? "afterDataCopy"
      : "beforeDataCopy";
  }

  get buildsAfterCopy(): boolean {
    const b = this.buildIndexes;
    return b === "afterDataCopy" || b === "excludeHashedAfterCopy";
  }

  /**
   * The embedded verifier (1.9): what start said, else its default, "on by default for replica
   * sets from 1.9, for sharded clusters from 1.10" (a sync with a sharded cluster on either side
   * counts as sharded).
   */
  get embeddedVerifier(): boolean {
    if (!this.#has("verification")) return false;
    const asked = this.body?.verification?.enabled;
    if (asked !== undefined) return asked;
    const b = this.body;
    const sharded = b !== undefined && (this.env.sharded(b.source) || this.env.sharded(b.destination));
    return !sharded || atLeast(this.env.version, BEHAVIOUR_SINCE.embeddedVerifierSharded);
  }

  /** The embedded verifier hashes from the copy (before 1.22) or from change event application (1.22). */
  get #hashesNow(): boolean {
    if (this.phase === "cea") return true;
    return this.phase === "copy" && !atLeast(this.env.version, BEHAVIOUR_SINCE.embeddedVerifierAtCea);
  }

  /** The fraction the embedded verifier's current run has hashed by t (during the copy: no more than is copied). */
  #hashed(t: number): number {
    if (!this.embeddedVerifier || this.hashFrom === undefined || !this.#hashesNow) return 0;
    const rate = this.env.params.embeddedHashBytesPerSecond;
    const done = rate > 0 ? (Math.max(0, t - this.hashFrom) * rate) / Math.max(1, this.share) : 1;
    const copied = this.phase === "cea" ? 1 : this.copied / Math.max(1, this.share);
    return Math.min(1, done, copied);
  }

  /** The embedded verifier is in `stream hashing` at t (facts: the state that allows commit). */
  #streaming(t: number): boolean {
    return this.phase === "cea" && this.#hashed(t) >= 1 - 1e-9;
  }

  /** Moves the model to simulated time t (see the file comment). */
  advance(t: number): void {
    if (!(t > this.t)) return;
    if (this.state === "COMMITTING" && !this.failure && !this.down) {
      const failAt = this.#sourceWriteFailure(this.t);
      if (failAt !== undefined && failAt < t) {
        this.#step(failAt);
        if (this.state === "COMMITTING") {
          // "From 1.17 the service fails the migration if it sees writes on the source during commit"
          this.failure = { at: failAt, reason: "writes were seen on the source during commit" };
          this.t = t;
          return;
        }
      }
    }
    this.#step(t);
  }

  #step(t: number): void {
    if (!(t > this.t)) return;
    const p = this.env.params;
    let cur = this.t;
    // Each pass handles one stretch and either reaches t (break) or a transition (continue).
    for (let guard = 0; cur < t && guard < 24; guard++) {
      if (this.down || this.failure) break;
      if (this.state === "INITIALIZING") {
        if (this.initUntil > t) break;
        cur = Math.max(cur, this.initUntil);
        // "once initialization completes it reports IDLE, or, after a crash or restart, the state it had before the crash"
        this.state = this.afterInit ?? "IDLE";
        this.afterInit = undefined;
        if (this.ready) this.readySince = cur;
        if (this.#hashesNow && this.state !== "PAUSED") this.hashFrom = cur;
        continue;
      }
      const copying = this.state === "RUNNING" || (this.state === "COMMITTING" && this.earlyCommit);
      if (copying && this.phase === "precopy") {
        const end = cur + this.precopyLeft;
        if (end > t) {
          this.precopyLeft -= t - cur;
          cur = t;
          break;
        }
        cur = end;
        this.precopyLeft = 0;
        this.phase = "copy";
        this.collectionsAt ??= cur;
        if (this.#hashesNow) this.hashFrom ??= cur;
        continue;
      }
      if (copying && this.phase === "copy") {
        const rate = p.copyBytesPerSecond;
        const tEnd = cur + Math.max(0, this.share - this.copied) / rate;
        if (this.pendingUpgrade !== null) {
          const target = this.pendingUpgrade * this.share;
          const tUp = this.copied >= target ? cur : cur + (target - this.copied) / rate;
          if (tUp <= t && tUp <= tEnd) {
            this.copied = Math.max(this.copied, Math.min(this.share, target));
            cur = tUp;
            this.liveUpgrade(cur);
            continue;
          }
        }
        if (tEnd > t) {
          this.copied += (t - cur) * rate;
          cur = t;
          break;
        }
        this.copied = this.share;
        cur = tEnd;
        this.#enterCea(cur);
        continue;
      }
      if (this.state === "RUNNING" && this.phase === "cea") {
        if (this.pendingUpgrade !== null) {
          this.liveUpgrade(cur);
          continue;
        }
        this.applied = this.#applyUntil(cur, t);
        cur = t;
        break;
      }
      if (this.state === "COMMITTING" && this.earlyCommit && this.phase === "cea") {
        // the early commit proceeds once the index builds are done, for the lag left then
        const ready = this.indexesReadyAt ?? cur;
        if (ready > t) {
          this.applied = this.#applyUntil(cur, t);
          cur = t;
          break;
        }
        this.applied = this.#applyUntil(cur, Math.max(cur, ready));
        cur = Math.max(cur, ready);
        this.earlyCommit = false;
        const lag = this.#runningLag(cur);
        this.commitLeft = lag;
        this.commitDuration = lag;
        this.commitEvents = Math.max(this.commitEvents, this.applied);
        continue;
      }
      if (this.state === "COMMITTING") {
        const end = cur + this.commitLeft;
        this.applied = Math.min(this.commitEvents, this.applied + p.applyEventsPerSecond * (Math.min(end, t) - cur));
        if (end > t) {
          this.commitLeft -= t - cur;
          cur = t;
          break;
        }
        cur = end;
        this.commitLeft = 0;
        this.applied = this.commitEvents;
        this.state = "COMMITTED";
        this.committedAt = cur;
        continue;
      }
      if (this.state === "REVERSING") {
        const end = cur + this.reversingLeft;
        if (end > t) {
          this.reversingLeft -= t - cur;
          cur = t;
          break;
        }
        cur = end;
        this.reversingLeft = 0;
        this.#finishReverse(cur);
        continue;
      }
      break; // IDLE, PAUSED, COMMITTED: nothing moves.
    }
    this.t = t;
  }

  #enterCea(t: number): void {
    this.phase = "cea";
    this.readySince = t;
    this.drainTo = this.env.source.events(t);
    if (atLeast(this.env.version, BEHAVIOUR_SINCE.embeddedVerifierAtCea)) this.hashFrom = t;
    this.copiedAt ??= t;
    this.indexesReadyAt = this.buildsAfterCopy ? t + this.env.params.indexBuildSeconds : undefined;
    // facts: the embedded verifier, "with `buildIndexes: never` and TTL collections it fails the migration"
    if (this.embeddedVerifier && this.buildIndexes === "never" && this.env.ttlCollections > 0)
      this.failure = {
        at: t,
        reason: 'the embedded verifier cannot verify TTL indexes the sync did not build (buildIndexes "never")',
      };
  }

  /** 1.17+: the time a write reaches the source during this commit, if one does from `from` on. */
  #sourceWriteFailure(from: number): number | undefined {
    if (!atLeast(this.env.version, BEHAVIOUR_SINCE.failOnSourceWritesDuringCommit)) return undefined;
    if (this.commitAt === undefined || blocksSourceWrites(this.body)) return undefined;
    const src = this.env.source;
    const base = src.events(this.commitAt);
    const now = src.events(from);
    if (now > base + 1e-6) return from;
    if (!(src.rate > 0)) return undefined;
    return from + (base + 1e-6 - now) / src.rate;
  }

  /** Events applied by time t1 when applying at full rate from t0 (queue reflection formula). */
  #applyUntil(t0: number, t1: number): number {
    const A = this.env.params.applyEventsPerSecond;
    const src = this.env.source;
    return Math.min(this.applied + A * (t1 - t0), src.events(t1), src.minThroughBreakpoints(t0, t1, A));
  }

  /** Ready for the verifier: in CEA or committing/committed, and up. */
  get ready(): boolean {
    if (this.down) return false;
    return (
      (this.state === "RUNNING" && this.phase === "cea") || this.state === "COMMITTING" || this.state === "COMMITTED"
    );
  }

  /** canCommit at the time the instance was advanced to. */
  get canCommit(): boolean {
    if (this.failure) return false;
    return this.state === "RUNNING" && !this.down && this.canCommitAt(this.t);
  }

  /** Started (a body accepted): INITIALIZING after a restart is not the IDLE of a new service. */
  get started(): boolean {
    return this.body !== undefined;
  }

  /** The lag a RUNNING instance in CEA would report at t (no rounding). */
  #runningLag(t: number): number {
    const src = this.env.source;
    const behind = this.applied < src.events(t) - 1e-6 ? t - src.timeOf(this.applied) : 0;
    // "Regular no-ops on the source often keep it a few seconds above zero even with no real writes."
    return Math.max(behind, this.env.params.noopLagSeconds, this.env.lagFloor(this.index, t));
  }

  /** lagTimeSeconds at t (the instance advanced to t), per state. */
  lag(t: number): number | null {
    if (this.failure) return null;
    switch (this.state) {
      case "INITIALIZING":
      case "IDLE":
      case "PAUSED":
      case "REVERSING":
        return null; // Progress rules 1 and 2.
      case "COMMITTED":
        return 0; // "It is 0 when source and destination are consistent."
      case "COMMITTING":
        if (this.earlyCommit) return Math.max(0, Math.ceil(this.#runningLag(t) - 1e-9));
        return Math.max(0, Math.ceil(this.commitLeft - 1e-9));
      case "RUNNING":
        return Math.max(0, Math.ceil(this.#runningLag(t) - 1e-9));
    }
  }

  // ---- commands (the world has advanced every instance to t and checked the state) -------

  start(t: number, body: StartRequest): void {
    this.state = "RUNNING";
    this.phase = "precopy";
    this.body = body;
    this.direction = { source: body.source, destination: body.destination };
    this.precopyLeft = this.env.params.precopySeconds;
    this.copied = 0;
    this.applied = this.env.source.events(t);
    this.counterBase = this.applied;
    this.upgrade = undefined;
    this.readySince = undefined;
    this.collectionsAt = undefined;
    this.copiedAt = undefined;
    this.indexesReadyAt = undefined;
    this.hashFrom = undefined;
    this.startEvents = this.applied;
    this.startDdl = this.env.ddlEvents();
    this.idsFrom = t + this.env.params.coordinatorNullSeconds;
  }

  commit(t: number): void {
    const lag = this.lag(t) ?? 0;
    const early = !this.canCommitAt(t);
    this.commitAt = t;
    this.commitEvents = this.env.source.events(t);
    this.state = "COMMITTING";
    // below 1.21 a commit before canCommit is accepted: it waits for the copy and index builds first
    this.earlyCommit = early;
    // "Stays in COMMITTING for the number of seconds given by lagTimeSeconds."
    this.commitLeft = early ? 0 : lag;
    this.commitDuration = this.commitLeft;
  }

  /** canCommit of a RUNNING instance at t, advanced to t (before a command changes the state). */
  canCommitAt(t: number): boolean {
    const indexesReady = this.indexesReadyAt === undefined || t >= this.indexesReadyAt - 1e-9;
    if (!(this.phase === "cea" && indexesReady)) return false;
    const v = this.env.version;
    // facts: "from 1.17 false until the embedded verifier is in a state that allows commit"
    if (this.embeddedVerifier && atLeast(v, BEHAVIOUR_SINCE.canCommitWaitsForVerifier) && !this.#streaming(t))
      return false;
    // facts: "from 1.21 false while the service **or** the embedded verifier reports more than **30 s** of lag"
    // (the simulated embedded verifier lags as the sync does)
    if (atLeast(v, BEHAVIOUR_SINCE.canCommitLagLimit) && this.#runningLag(t) > CAN_COMMIT_MAX_LAG_SECONDS) return false;
    return true;
  }

  pause(): void {
    this.state = "PAUSED";
    this.readySince = undefined;
    // facts: the embedded verifier "cannot be resumed: after a pause and resume … verification starts again"
    this.hashFrom = undefined;
  }

  resume(t: number): void {
    this.state = "RUNNING";
    if (this.phase === "cea") this.readySince = t;
    if (this.#hashesNow) this.hashFrom = t;
    this.env.onRestart(this.index, t);
  }

  /** COMMITTED → REVERSING; RUNNING the other way after `reversingSeconds`. */
  reverse(t: number): void {
    this.lostFrozen = this.lost(t);
    this.commitAt = undefined;
    this.state = "REVERSING";
    this.reversingLeft = this.env.params.reversingSeconds;
    this.readySince = undefined;
    this.committedAt = undefined;
    if (this.reversingLeft <= 0) this.#finishReverse(t);
  }

  #finishReverse(t: number): void {
    this.state = "RUNNING";
    this.phase = "cea";
    this.reversed = !this.reversed;
    // "`directionMapping` swaps Source and Destination"
    if (this.direction) this.direction = { source: this.direction.destination, destination: this.direction.source };
    this.applied = this.env.source.events(t);
    this.counterBase = this.applied;
    this.readySince = t;
    this.indexesReadyAt = undefined;
    this.drainTo = this.applied;
    this.hashFrom = t;
  }

  /** Restart after being down, or a live upgrade: the events counter is "not persisted". */
  restart(t: number): void {
    this.counterBase = this.applied;
    if (this.ready) this.readySince = t;
    this.idsFrom = t + this.env.params.coordinatorNullSeconds;
    // facts: the embedded verifier starts again from the beginning after a restart of the service
    this.hashFrom = this.#hashesNow && this.state !== "PAUSED" ? t : undefined;
    // facts [progress 1.20]: INITIALIZING first, then IDLE, or "after a crash or restart, the state it had before the crash"
    const init = this.env.params.initializingSeconds;
    if (atLeast(this.env.version, BEHAVIOUR_SINCE.restartInitializes) && init > 0) {
      if (this.state !== "INITIALIZING") this.afterInit = this.state === "IDLE" ? undefined : this.state;
      this.state = "INITIALIZING";
      this.initUntil = t + init;
      this.readySince = undefined;
    }
    this.env.onRestart(this.index, t);
  }

  setDown(t: number, down: boolean): void {
    this.advance(t);
    if (this.down === down) return;
    this.down = down;
    if (down) this.readySince = undefined;
    else this.restart(t);
  }

  /** A live upgrade now (spec progress rule 4). */
  liveUpgrade(t: number): void {
    this.pendingUpgrade = null;
    if (this.state === "IDLE" || this.state === "INITIALIZING") return;
    const copying = !(this.phase === "cea");
    // "collection copy progress restarts from 0 copied of 1 total and only reports data copied
    // after the upgrade finished": the remaining data is what is left to report.
    this.upgrade = {
      base: this.copied,
      totalAfter: copying
        ? Math.max(1, Math.round(this.env.totalBytes * (1 - this.copied / Math.max(1, this.share))))
        : null,
    };
    if (copying) {
      this.phase = "precopy"; // the restarted process reports 0 of 1 until its copy resumes
      this.precopyLeft = this.env.params.precopySeconds;
    }
    this.restart(t);
  }

  /** Source writes that reached this instance's source after its commit (lost, unless write blocking refused them). */
  lost(t: number): number {
    if (this.commitAt === undefined || blocksSourceWrites(this.body)) return this.lostFrozen;
    return this.lostFrozen + this.afterCommit(t);
  }

  /** Source writes after this instance's commit (whatever became of them). */
  afterCommit(t: number): number {
    if (this.commitAt === undefined) return 0;
    const src = this.env.source;
    return Math.max(0, src.events(Math.max(t, this.commitAt)) - src.events(this.commitAt));
  }

  #copyFields(): { estimatedTotalBytes: number; estimatedCopiedBytes: number } {
    const total = this.env.totalBytes;
    // Rule 3: "Before the collection copy phase, estimatedCopiedBytes is 0 and estimatedTotalBytes is 1."
    if (this.phase === "precopy") return { estimatedTotalBytes: 1, estimatedCopiedBytes: 0 };
    if (this.upgrade) {
      if (this.upgrade.totalAfter === null) return { estimatedTotalBytes: 1, estimatedCopiedBytes: 0 };
      const tot = this.upgrade.totalAfter;
      return {
        estimatedTotalBytes: tot,
        estimatedCopiedBytes: Math.min(tot, Math.max(0, Math.floor(this.copied - this.upgrade.base))),
      };
    }
    // facts: "Before 1.21 `estimatedCopiedBytes` may exceed `estimatedTotalBytes` (the total is an
    // estimate); from 1.21 the service raises `estimatedTotalBytes` when the copied bytes pass it"
    const estimate = Math.max(1, Math.round(total * this.env.params.estimatedTotalRatio));
    const copied = Math.floor(this.copied);
    const raised = atLeast(this.env.version, BEHAVIOUR_SINCE.totalRaisedToCopied);
    return { estimatedTotalBytes: raised ? Math.max(estimate, copied) : estimate, estimatedCopiedBytes: copied };
  }

  #info(): string | null {
    if (this.failure) return `migration failed: ${this.failure.reason}`;
    // facts: "`info` values documented: `collection copy`, `change event application`,
    // `waiting for commit to complete`, `commit completed`"
    if (this.state === "REVERSING") return null;
    if (this.state === "COMMITTING") return "waiting for commit to complete";
    if (this.state === "COMMITTED") return "commit completed";
    return this.phase === "cea" ? "change event application" : "collection copy";
  }

  #embedded(t: number): ProgressBody["verification"] {
    const docs = Math.round(this.share / this.env.params.averageDocumentBytes);
    const colls = this.env.collections;
    // facts: "From 1.22 it starts at change event application and reports "not started" during the
    // collection copy"; it starts again from the beginning after a pause and resume, or a restart
    const started = this.embeddedVerifier && this.hashFrom !== undefined && this.#hashesNow;
    const streaming = started && this.#streaming(t);
    const frac = started ? this.#hashed(t) : 0;
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
    const lag = this.lag(t);
    return { source: side(lag), destination: side(lag) };
  }

  /** The `progress` object at t (advance first). */
  progress(t: number): ProgressBody {
    if (this.stale && t < this.stale.until) return this.stale.body;
    this.stale = undefined;
    const idle = this.state === "IDLE" || this.state === "INITIALIZING";
    const out: ProgressBody = {
      state: this.state,
      canCommit: idle ? false : this.canCommit,
      canWrite: null,
      info: null,
      lagTimeSeconds: null,
      collectionCopy: null,
      directionMapping: null,
    };
    if (this.#has("totalEventsApplied")) out.totalEventsApplied = null;
    if (this.#has("ids")) Object.assign(out, { mongosyncID: null, coordinatorID: null });
    // Rule 1: "In state IDLE, all fields except `state` and `canCommit` are null." (INITIALIZING
    // likewise). The fields the facts say are omitted where they do not apply are left out instead.
    if (this.#has("verification")) out.verification = null;
    if (this.#has("lag")) out.lag = null;
    if (idle) return out;

    const lag = this.lag(t);
    const cea = this.phase === "cea" && this.state === "RUNNING";
    // the cutover page: "only check that canWrite is true on the first mongosync process. The
    // canWrite status of any subsequent mongosync processes is not valid". The first process is
    // the instance started first (index 0); the others never report true, so a wait on theirs never
    // ends and a test of it fails, as it may with the real service
    out.canWrite =
      this.index === 0 &&
      !this.failure &&
      (this.state === "COMMITTED" ||
        (this.state === "COMMITTING" &&
          !this.earlyCommit &&
          this.commitLeft <= this.commitDuration * (1 - this.env.params.canWriteAfter) + 1e-9));
    out.info = this.#info();
    out.lagTimeSeconds = lag;
    if (this.#has("totalEventsApplied"))
      out.totalEventsApplied = Math.max(0, Math.floor(this.applied - this.counterBase));
    out.collectionCopy = this.#copyFields();
    const dir = this.direction!;
    out.directionMapping = {
      Source: `${dir.source}: ${this.env.clusterHost(dir.source)}`,
      Destination: `${dir.destination}: ${this.env.clusterHost(dir.destination)}`,
    };
    if (this.#has("ids")) {
      out.mongosyncID = this.id;
      // facts: "`coordinatorID` may be null at start-up"
      out.coordinatorID = t < this.idsFrom ? null : this.coordinatorId;
    }
    if (this.#has("verification")) out.verification = this.#embedded(t);
    if (this.#has("estimatedSecondsToCEACatchup") && cea) {
      // facts: "**omitted** outside change event application, or when lag has not decreased"
      const A = this.env.params.applyEventsPerSecond;
      const src = this.env.source;
      const backlog = Math.max(0, src.events(t) - this.applied);
      if (backlog < 1) out.estimatedSecondsToCEACatchup = 0;
      else if (A > src.rate) out.estimatedSecondsToCEACatchup = Math.ceil(backlog / (A - src.rate));
    }
    // facts: "`source.pingLatencyMs`, `destination.pingLatencyMs` | 1.17 | **absent** when under 1 ms"
    const ping = this.env.params.pingLatencyMs;
    if (this.#has("pingLatencyMs") && (ping >= 1 || ping === -1)) {
      out.source = { pingLatencyMs: ping };
      out.destination = { pingLatencyMs: ping };
    }
    // facts: "`indexBuilding` | 1.19 | **only during change event application**, with index builds after the copy"
    if (this.#has("indexBuilding") && cea && this.indexesReadyAt !== undefined) {
      const dur = this.env.params.indexBuildSeconds;
      const frac = dur > 0 ? Math.min(1, Math.max(0, 1 - (this.indexesReadyAt - t) / dur)) : 1;
      const colls = this.env.collections;
      out.indexBuilding = {
        indexesBuilt: Math.floor(colls * INDEXES_PER_COLLECTION * frac),
        totalIndexesToBuild: colls * INDEXES_PER_COLLECTION,
        collectionsFinished: Math.floor(colls * frac),
        collectionsTotal: colls,
      };
    }
    // facts: "a human string … **only in RUNNING before `canWrite` is true**"
    if (this.#has("estimatedOplogTimeRemaining") && this.state === "RUNNING")
      out.estimatedOplogTimeRemaining =
        this.phase === "precopy"
          ? "not checked yet"
          : oplogTimeRemaining(this.env.params.oplogWindowSeconds - (lag ?? 0));
    // facts: "`warnings` | 1.19 | array of strings, **omitted when there are none**; one says the
    // service blocks user writes on the source" (dual write blocking, after commit)
    if (this.#has("warnings") && this.commitAt !== undefined && blocksSourceWrites(this.body))
      out.warnings = ["the sync service is blocking user writes on the source cluster"];
    // facts: "`ddlLagSeconds` null with a pre-6.0 source or before any DDL event, `crudLagSeconds`
    // null before the first CRUD timestamp; `lag` null while PAUSED"
    if (this.#has("lag") && lag !== null) {
      const crud = this.env.source.events(t) > this.startEvents + 1e-6;
      const ddl =
        this.env.ddlEvents() > this.startDdl && atLeast(this.env.serverVersion(this.direction!.source), "6.0");
      out.lag = { overallLagSeconds: lag, crudLagSeconds: crud ? lag : null, ddlLagSeconds: ddl ? lag : null };
    }
    // facts: "`ceaStage` | 1.22 | **only during change event application**: "collection copy drain" or "steady state""
    if (this.#has("ceaStage") && cea)
      out.ceaStage = this.applied < this.drainTo - 1e-6 ? "collection copy drain" : "steady state";
    return out;
  }
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
