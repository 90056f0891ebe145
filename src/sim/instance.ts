/**
 * One simulated sync service instance: its state, the commands that change it (the state machine
 * of spec/sync-service-api.md and spec/service-facts.md, for the service version it emulates),
 * its lag and canCommit. Time passing is `advance.ts` (closed form, nothing ticks), what its
 * progress endpoint answers `progress-body.ts`, the embedded verifier `embedded-verifier.ts`.
 */
import { advance } from "./advance.js";
import { embeddedVerifierOn, hashesNow, streamHashing } from "./embedded-verifier.js";
import type { ModelParams } from "./model.js";
import type { ProgressBody } from "./progress-body.js";
import type { SourceTimeline } from "./source.js";
import { blocksSourceWrites, type BuildIndexes, type StartRequest } from "./validate-start.js";
import { BEHAVIOUR_SINCE, CAN_COMMIT_MAX_LAG_SECONDS, PROGRESS_SINCE, atLeast } from "./versions.js";

export type SyncState = "INITIALIZING" | "IDLE" | "RUNNING" | "PAUSED" | "COMMITTING" | "COMMITTED" | "REVERSING";
/** Where a started sync is: before the copy, copying, or in change event application. */
export type SyncPhase = "precopy" | "copy" | "cea";

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
    readonly env: InstanceEnv,
  ) {
    this.share = share;
    const v = env.version;
    this.state =
      atLeast(v, BEHAVIOUR_SINCE.initializing) && env.params.initializingSeconds > 0 ? "INITIALIZING" : "IDLE";
    if (this.state === "INITIALIZING") this.initUntil = env.params.initializingSeconds;
  }

  /** Features by the version they were judged for (a live upgrade changes it): every progress answer asks. */
  #features = { version: "", has: new Map<keyof typeof PROGRESS_SINCE, boolean>() };

  /** Whether the emulated version reports a progress feature (`PROGRESS_SINCE`). */
  has(feature: keyof typeof PROGRESS_SINCE): boolean {
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

  /** Moves the model to simulated time t (advance.ts). */
  advance(t: number): void {
    advance(this, t);
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
  runningLag(t: number): number {
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
        if (this.earlyCommit) return Math.max(0, Math.ceil(this.runningLag(t) - 1e-9));
        return Math.max(0, Math.ceil(this.commitLeft - 1e-9));
      case "RUNNING":
        return Math.max(0, Math.ceil(this.runningLag(t) - 1e-9));
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
    if (embeddedVerifierOn(this) && atLeast(v, BEHAVIOUR_SINCE.canCommitWaitsForVerifier) && !streamHashing(this, t))
      return false;
    // facts: "from 1.21 false while the service **or** the embedded verifier reports more than **30 s** of lag"
    // (the simulated embedded verifier lags as the sync does)
    if (atLeast(v, BEHAVIOUR_SINCE.canCommitLagLimit) && this.runningLag(t) > CAN_COMMIT_MAX_LAG_SECONDS) return false;
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
    if (hashesNow(this)) this.hashFrom = t;
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
    if (this.reversingLeft <= 0) this.finishReverse(t);
  }

  /** REVERSING is over: RUNNING the other way. */
  finishReverse(t: number): void {
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
    this.hashFrom = hashesNow(this) && this.state !== "PAUSED" ? t : undefined;
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
}
