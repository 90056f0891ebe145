/**
 * One simulated sync service instance: the state machine of spec/sync-service-api.md and the
 * quantities its progress endpoint reports, evaluated lazily.
 *
 * Nothing ticks. `advance(t)` moves the instance from the simulated time it was last evaluated
 * at to `t` in closed form: within one stretch of time every rate is constant (copy rate,
 * apply rate, the source's event rate), and whatever changes a rate from outside (a command,
 * the writes switch, an instance going down) first advances every instance to "now". Inside
 * `advance`, the transitions that happen on their own (pre-copy → copy → change event
 * application, COMMITTING → COMMITTED, a live upgrade at a copy fraction) are found at their
 * exact time. This is what lets one process answer hundreds of instances on a few % of a core.
 */
import type { SourceTimeline } from "./source.js";
import type { StartRequest } from "./validate-start.js";

export type SyncState = "IDLE" | "RUNNING" | "PAUSED" | "COMMITTING" | "COMMITTED";
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
  /** Verifier: bytes compared per simulated second (default 256 MiB). */
  verifyBytesPerSecond: number;
  /** Verifier: bytes per first-generation task (default 256 MiB). */
  verifyBytesPerTask: number;
  /** Verifier: changed documents per recheck task (default 1000). */
  recheckDocsPerTask: number;
  /** Verifier: recheck tasks done per simulated second (default 20). */
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
  /** Global estimated total bytes (spec: "total bytes to copy globally across all instances"). */
  totalBytes: number;
  /** Lag floor from `lag-floor` faults in force at t (0 when none). */
  lagFloor(index: number, t: number): number;
  /** The instance resumed or restarted at t (progress may fail for a while: faults). */
  onRestart(index: number, t: number): void;
  /** `host:port` of a cluster setting, for directionMapping. */
  clusterHost(name: string): string;
}

export interface ProgressBody {
  state: SyncState;
  canCommit: boolean;
  canWrite: boolean | null;
  info: string | null;
  lagTimeSeconds: number | null;
  totalEventsApplied: number | null;
  collectionCopy: { estimatedTotalBytes: number; estimatedCopiedBytes: number } | null;
  directionMapping: { Source: string; Destination: string } | null;
  mongosyncID?: string | null;
  coordinatorID?: string | null;
}

export class SyncInstance {
  state: SyncState = "IDLE";
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
  /** Simulated time commit was accepted (writes after it are lost), until a reverse. */
  commitAt: number | undefined;
  /** Lost events counted before a reverse. */
  lostFrozen = 0;
  /** Since when the instance has been in CEA, COMMITTING or COMMITTED without interruption. */
  readySince: number | undefined;
  /** Copy fraction at which a live upgrade is due (from a live-upgrade fault). */
  pendingUpgrade: number | null = null;
  /** Set by a live upgrade: copy progress is reported from this baseline. */
  upgrade: { base: number; totalAfter: number | null } | undefined;
  /** Progress answers an error until this simulated time (faults). */
  unavailableUntil = -Infinity;
  reversed = false;

  constructor(
    readonly index: number,
    readonly id: string,
    readonly coordinatorId: string,
    share: number,
    private readonly env: InstanceEnv,
    readonly showIds: boolean,
  ) {
    this.share = share;
  }

  /** Moves the model to simulated time t (see the file comment). */
  advance(t: number): void {
    if (!(t > this.t)) return;
    const p = this.env.params;
    let cur = this.t;
    // Each pass handles one stretch and either reaches t (break) or a transition (continue).
    for (let guard = 0; cur < t && guard < 16; guard++) {
      if (this.down) break;
      if (this.state === "RUNNING" && this.phase === "precopy") {
        const end = cur + this.precopyLeft;
        if (end > t) {
          this.precopyLeft -= t - cur;
          cur = t;
          break;
        }
        cur = end;
        this.precopyLeft = 0;
        this.phase = "copy";
        continue;
      }
      if (this.state === "RUNNING" && this.phase === "copy") {
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
        this.phase = "cea";
        this.readySince = tEnd;
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
        continue;
      }
      break; // IDLE, PAUSED, COMMITTED: nothing moves.
    }
    this.t = t;
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

  get canCommit(): boolean {
    return this.state === "RUNNING" && this.phase === "cea" && !this.down;
  }

  /** lagTimeSeconds at t (the instance advanced to t), per state. */
  lag(t: number): number | null {
    switch (this.state) {
      case "IDLE":
      case "PAUSED":
        return null; // Progress rules 1 and 2.
      case "COMMITTED":
        return 0; // "It is 0 when source and destination are consistent."
      case "COMMITTING":
        return Math.max(0, Math.ceil(this.commitLeft - 1e-9));
      case "RUNNING": {
        const src = this.env.source;
        const behind = this.applied < src.events(t) - 1e-6 ? t - src.timeOf(this.applied) : 0;
        // "Regular no-ops on the source often keep it a few seconds above zero even with no real writes."
        const lag = Math.max(behind, this.env.params.noopLagSeconds, this.env.lagFloor(this.index, t));
        return Math.max(0, Math.ceil(lag - 1e-9));
      }
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
  }

  commit(t: number): void {
    const lag = this.lag(t) ?? 0;
    this.state = "COMMITTING";
    // "Stays in COMMITTING for the number of seconds given by lagTimeSeconds."
    this.commitLeft = lag;
    this.commitDuration = lag;
    this.commitEvents = this.env.source.events(t);
    this.commitAt = t;
  }

  pause(): void {
    this.state = "PAUSED";
    this.readySince = undefined;
  }

  resume(t: number): void {
    this.state = "RUNNING";
    if (this.phase === "cea") this.readySince = t;
    this.env.onRestart(this.index, t);
  }

  reverse(t: number): void {
    this.lostFrozen = this.lost(t);
    this.commitAt = undefined;
    this.state = "RUNNING";
    this.phase = "cea";
    this.reversed = !this.reversed;
    if (this.direction) this.direction = { source: this.direction.destination, destination: this.direction.source };
    this.applied = this.env.source.events(t);
    this.counterBase = this.applied;
    this.readySince = t;
  }

  /** Restart after being down, or a live upgrade: the events counter is "not persisted". */
  restart(t: number): void {
    this.counterBase = this.applied;
    if (this.ready) this.readySince = t;
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
    if (this.state === "IDLE") return;
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

  /** Source writes that reached this instance's source after its commit (lost). */
  lost(t: number): number {
    if (this.commitAt === undefined) return this.lostFrozen;
    const src = this.env.source;
    return this.lostFrozen + Math.max(0, src.events(Math.max(t, this.commitAt)) - src.events(this.commitAt));
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
    // "estimatedCopiedBytes: bytes copied to the destination by this instance. Never greater than estimatedTotalBytes."
    return { estimatedTotalBytes: total, estimatedCopiedBytes: Math.min(total, Math.floor(this.copied)) };
  }

  #info(): string {
    if (this.state === "COMMITTING") return "waiting for commit to complete";
    if (this.state === "COMMITTED") return "commit completed";
    return this.phase === "cea" ? "change event application" : "collection copy";
  }

  /** The `progress` object at t (advance first). */
  progress(t: number): ProgressBody {
    if (this.state === "IDLE") {
      // Rule 1: "In state IDLE, all fields except `state` and `canCommit` are null."
      const idle: ProgressBody = {
        state: "IDLE",
        canCommit: false,
        canWrite: null,
        info: null,
        lagTimeSeconds: null,
        totalEventsApplied: null,
        collectionCopy: null,
        directionMapping: null,
      };
      if (this.showIds) Object.assign(idle, { mongosyncID: null, coordinatorID: null });
      return idle;
    }
    const canWrite =
      this.state === "COMMITTED" ||
      (this.state === "COMMITTING" &&
        this.commitLeft <= this.commitDuration * (1 - this.env.params.canWriteAfter) + 1e-9);
    const dir = this.direction!;
    const out: ProgressBody = {
      state: this.state,
      canCommit: this.canCommit,
      canWrite,
      info: this.#info(),
      lagTimeSeconds: this.lag(t),
      totalEventsApplied: Math.max(0, Math.floor(this.applied - this.counterBase)),
      collectionCopy: this.#copyFields(),
      directionMapping: {
        Source: `${dir.source}: ${this.env.clusterHost(dir.source)}`,
        Destination: `${dir.destination}: ${this.env.clusterHost(dir.destination)}`,
      },
    };
    if (this.showIds) Object.assign(out, { mongosyncID: this.id, coordinatorID: this.coordinatorId });
    return out;
  }
}
