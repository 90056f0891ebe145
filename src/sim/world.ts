/**
 * The simulated world: the source application, N sync service instances, the fleet coordinator
 * and the request counters, tied to one clock, with the faults in force (fault-book.ts) and the
 * verifier's process (verifier-host.ts). The HTTP layer (http.ts) turns requests into calls here;
 * the control API (control.ts) and the in-process `control` object call the same methods.
 */
import { SimClock } from "./clock.js";
import { BLOCKING, FleetCoordinator, type Command, type FleetError } from "./coordinator.js";
import { FaultBook, type Target } from "./fault-book.js";
import { faultApplies, formatFault, normalizeFault, parseFault, type ActiveFault, type FaultSpec } from "./faults.js";
import { SyncInstance } from "./instance.js";
import type { ModelParams } from "./model.js";
import { progressBody, type ProgressBody } from "./progress-body.js";
import { BAD, DROP, errorReply, isEmptyObject, ok, parseBody, type Reply } from "./replies.js";
import { SourceTimeline } from "./source.js";
import type { ClusterSetting, StartRequest, StartValidator } from "./validate-start.js";
import { SOURCE_DDL_TYPES } from "./verifier.js";
import type {
  DataSet,
  SourceDdlType,
  VerifierDdlHandling,
  VerifierInputs,
  VerifierNamespaces,
  VerifierRelease,
} from "./verifier.js";
import { VerifierHost } from "./verifier-host.js";
import { BEHAVIOUR_SINCE, LIVE_UPGRADE_TO, PROGRESS_SINCE, atLeast, liveUpgradeTarget } from "./versions.js";

/** facts: live upgrades "only where release notes say so — 1.12 → 1.13, to 1.18; not to 1.20". */
const noLiveUpgrade = (version: string): string =>
  `no live upgrade to service ${version} is published (only to ${LIVE_UPGRADE_TO.join(" and ")})`;

export interface WorldConfig {
  instances: number;
  ids: string[];
  clusters: Record<string, ClusterSetting>;
  totalBytes: number;
  timeScale: number;
  seed: number;
  serviceVersion: string;
  writes: { enabled: boolean; rate: number };
  model: ModelParams;
  graceMs: number;
  dataSet: DataSet;
  validateStart: StartValidator;
  /** The migration verifier release emulated: VERIFIER_RELEASES. */
  verifierRelease: VerifierRelease;
  /** The verifier process's namespaces: `all` (--verifyAll) or `none` (neither --verifyAll nor --srcNamespace). */
  verifierNamespaces: VerifierNamespaces;
  /** Whether the simulated documents match a check's filter (one with a condition): `all` or `none`. */
  checkFilterMatches: "all" | "none";
  /** The verifier process's `--ddlHandling`: `failAll` (source DDL makes it exit) or `warnMost` (counted, skipped). */
  verifierDdlHandling: VerifierDdlHandling;
}

export interface InstanceSnapshot {
  index: number;
  id: string;
  url: string;
  state: ProgressBody["state"];
  phase: "precopy" | "copy" | "cea" | null;
  down: boolean;
  canCommit: boolean;
  lagTimeSeconds: number | null;
  shareBytes: number;
  copiedBytes: number;
  eventsApplied: number;
  pendingEvents: number;
  writesLost: number;
  /** Source writes after this instance's commit that write blocking refused. */
  writesRefused: number;
  progressUnavailableForSeconds: number;
  /** Blocking commands this instance received and waits on (the rest of the fleet has not). */
  waitingFor: Command[];
  /** The migration failed on this instance: why (null: it did not). */
  failure: string | null;
  /**
   * Commands this instance accepted (took effect), by command: what a test counts to prove a
   * start or commit was never applied twice, whatever requests reached it (a refused one is not here).
   */
  accepted: Partial<Record<Command, number>>;
}

/** GET /sim/state. */
export interface SimState {
  time: { simSeconds: number; timeScale: number };
  serviceVersion: string;
  writes: { enabled: boolean; ratePerSecond: number; total: number; lost: number; refused: number };
  instances: InstanceSnapshot[];
  verifier: {
    url: string;
    /** The release emulated (`--verifier-release`). */
    release: VerifierRelease;
    /** The metadata holds an earlier process's verification that this one has not dropped (a check with --clean drops it). */
    holds: boolean;
    /** Started with --clean (its first check drops what the metadata holds). */
    clean: boolean;
    /** Started with --verifyAll (`all`) or with neither it nor --srcNamespace (`none`: generation 0 has no task). */
    namespaces: VerifierNamespaces;
    /** The current check's filter matches no simulated document (`checkFilterMatches: "none"`). */
    filterMatchesNothing: boolean;
    /** Its `--ddlHandling`: `failAll` (source DDL makes it exit) or `warnMost` (counted in eventCounts, skipped). */
    ddlHandling: VerifierDdlHandling;
    /** A check of this process resumed the earlier verification (started without --clean). */
    resumed: boolean;
    phase: string;
    running: boolean;
    generation: number;
    writesOff: boolean;
    checks: number;
    ddlDuringVerification: number;
    error: string | null;
    /** Why the verifier process exited (null: it runs; POST /sim/verifier/restart starts a new one). */
    exited: string | null;
  };
  fleetErrors: FleetError[];
  openRounds: { command: Command; accepted: number[]; ageMs: number; blocking?: true }[];
  faults: ActiveFault[];
  ddl: number;
}

/** Request counts, per target, keyed `METHOD /path` (unknown paths as `other`). */
export interface RequestCounts {
  instances: Record<string, number>[];
  verifier: Record<string, number>;
}

export class SimWorld {
  readonly clock: SimClock;
  readonly source: SourceTimeline;
  readonly instances: SyncInstance[];
  readonly book: FaultBook;
  readonly verifierHost: VerifierHost;
  readonly fleet: FleetCoordinator;
  urls: string[] = [];
  /** Set by the HTTP layer: closes or reopens an instance's listener. */
  setListening: (index: number, up: boolean) => Promise<void> = async () => {};

  #writes: { enabled: boolean; rate: number };
  #counts: Map<string, number>[];
  #accepted: Partial<Record<Command, number>>[];
  #verifierCounts = new Map<string, number>();
  #ddl = 0;
  #closed = false;
  /** Answers of blocking commands waiting for the rest of the fleet, per command. */
  #waiters = new Map<Command, { index: number; resolve: (r: Reply) => void }[]>();

  constructor(readonly config: WorldConfig) {
    const n = config.instances;
    this.clock = new SimClock(config.timeScale);
    this.#writes = { ...config.writes };
    this.source = new SourceTimeline(this.#perInstanceRate());
    const share = Math.floor(config.totalBytes / n);
    const hosts = Object.keys(config.clusters);
    const env = {
      source: this.source,
      params: config.model,
      version: config.serviceVersion,
      totalBytes: config.totalBytes,
      collections: config.dataSet.collections,
      ttlCollections: Math.min(config.dataSet.collections, config.dataSet.ttl),
      serverVersion: (name: string) => config.clusters[name]?.version ?? "7.0",
      sharded: (name: string) => config.clusters[name]?.topology === "sharded",
      ddlEvents: () => this.#ddl,
      lagFloor: (i: number, t: number) => this.book.value("lag-floor", i, t) ?? 0,
      onRestart: (i: number, t: number) => {
        // Errors 6: "Progress calls can fail for at least two minutes after a sync is resumed or restarted."
        const d = this.book.value("progress-down-after-resume", i, t);
        if (d !== undefined) this.instances[i]!.unavailableUntil = t + d;
      },
      clusterHost: (name: string) =>
        config.clusters[name]?.host ?? `127.0.0.1:${27017 + Math.max(0, hosts.indexOf(name))}`,
    };
    this.instances = Array.from({ length: n }, (_, i) => {
      // The last instance takes the remainder, so the shares add up to the total exactly.
      const s = i === n - 1 ? config.totalBytes - share * (n - 1) : share;
      return new SyncInstance(i, config.ids[i]!, config.ids[0]!, s, env);
    });
    this.fleet = new FleetCoordinator(n, config.graceMs);
    this.book = new FaultBook(this.clock, config.seed, {
      instanceCount: n,
      down: (i) => void this.down(i).catch(() => {}),
      up: (i) => void this.up(i).catch(() => {}),
      verifierExit: (reason) => this.verifierHost.exit(reason, false),
    });
    this.verifierHost = new VerifierHost(this);
    this.#counts = Array.from({ length: n }, () => new Map<string, number>());
    this.#accepted = Array.from({ length: n }, () => ({}));
  }

  get closed(): boolean {
    return this.#closed;
  }

  get version(): string {
    return this.config.serviceVersion;
  }

  #perInstanceRate(): number {
    return this.#writes.enabled ? this.#writes.rate / this.config.instances : 0;
  }

  // ---- evaluation --------------------------------------------------------------------

  /** Since when every instance satisfies `since` (each instance's own time), or undefined. */
  #fleetSince(since: (inst: SyncInstance) => number | undefined): number | undefined {
    let from = -Infinity;
    for (const inst of this.instances) {
      const s = since(inst);
      if (s === undefined) return undefined;
      from = Math.max(from, s);
    }
    return from;
  }

  #verifierInputs(): VerifierInputs {
    const n = this.instances.length;
    return {
      collectionsFrom: this.#fleetSince((i) => (i.started ? i.collectionsAt : undefined)),
      copiedFrom: this.#fleetSince((i) => (i.started ? i.copiedAt : undefined)),
      committedFrom: this.#fleetSince((i) => (i.state === "COMMITTED" ? i.committedAt : undefined)),
      sourceWrites: (t) => this.source.events(t) * n,
      issues: (t) => {
        const lost = this.instances.reduce((s, inst) => s + inst.lost(t), 0);
        const lostBatches = lost > 1e-6 ? Math.ceil(lost / this.config.model.recheckDocsPerTask) : 0;
        return lostBatches + this.fleet.errors.length;
      },
    };
  }

  /** Brings every instance and the verifier to now. Called before anything changes. */
  syncAll(): number {
    const t = this.clock.now();
    this.fleet.sweep();
    for (const inst of this.instances) inst.advance(t);
    this.verifierHost.verifier.error = this.book.active("verifier-error", "verifier", t)[0]?.message ?? null;
    const exit = this.verifierHost.verifier.advance(t, this.#verifierInputs());
    if (exit) this.verifierHost.exit(exit, false);
    return t;
  }

  // ---- faults (the book keeps them; what they do to instances is here) ---------------

  addFault(input: string | FaultSpec): ActiveFault {
    const spec = typeof input === "string" ? parseFault(input) : normalizeFault(input, input?.kind);
    for (const i of spec.instances ?? []) {
      if (i >= this.instances.length)
        throw new RangeError(
          `invalid fault "${formatFault(spec)}": there is no instance ${i} (the fleet has ${this.instances.length})`,
        );
    }
    if (spec.kind === "live-upgrade" && !liveUpgradeTarget(this.version))
      throw new RangeError(`invalid fault "${formatFault(spec)}": ${noLiveUpgrade(this.version)}`);
    if (spec.kind === "insufficient-disk-space" && !atLeast(this.version, BEHAVIOUR_SINCE.diskSpaceCheck))
      throw new RangeError(
        `invalid fault "${formatFault(spec)}": the destination disk space check is a ${BEHAVIOUR_SINCE.diskSpaceCheck} feature (this service is ${this.version})`,
      );
    const t = this.syncAll();
    const fault = this.book.add(spec, typeof input === "string" ? input : formatFault(spec), t);
    if (fault.kind === "live-upgrade") {
      for (const inst of this.instances)
        if (faultApplies({ ...fault, from: -Infinity }, inst.index, undefined, t))
          inst.pendingUpgrade = fault.value ?? 0.5;
    }
    return fault;
  }

  removeFault(id: number): boolean {
    const fault = this.book.remove(id);
    if (!fault) return false;
    if (fault.kind === "live-upgrade") for (const inst of this.instances) inst.pendingUpgrade = null;
    if (fault.kind === "down")
      for (const x of fault.instances ?? this.instances.map((y) => y.index))
        if (this.instances[x]?.down) void this.up(x).catch(() => {});
    return true;
  }

  clearFaults(): void {
    for (const id of this.book.ids()) this.removeFault(id);
  }

  faults(): ActiveFault[] {
    return this.book.list();
  }

  // ---- instances up and down ---------------------------------------------------------

  #checkIndex(i: number): SyncInstance {
    const inst = Number.isInteger(i) ? this.instances[i] : undefined;
    if (!inst) throw new RangeError(`there is no instance ${i} (the fleet has ${this.instances.length})`);
    return inst;
  }

  async down(i: number): Promise<void> {
    const inst = this.#checkIndex(i);
    if (inst.down || this.#closed) return;
    inst.setDown(this.syncAll(), true);
    // its waiting commit or reverse went with its connections
    for (const command of this.fleet.leave(i)) {
      const ws = this.#waiters.get(command) ?? [];
      for (const w of ws.filter((x) => x.index === i)) w.resolve(DROP);
      this.#waiters.set(
        command,
        ws.filter((x) => x.index !== i),
      );
    }
    await this.setListening(i, false);
  }

  async up(i: number): Promise<void> {
    const inst = this.#checkIndex(i);
    if (!inst.down || this.#closed) return;
    await this.setListening(i, true);
    inst.setDown(this.syncAll(), false);
  }

  liveUpgrade(i: number): void {
    const inst = this.#checkIndex(i);
    if (!liveUpgradeTarget(this.version)) throw new RangeError(noLiveUpgrade(this.version));
    const t = this.syncAll();
    inst.liveUpgrade(t);
  }

  // ---- the source application --------------------------------------------------------

  setWrites(w: { enabled?: unknown; rate?: unknown }): { enabled: boolean; ratePerSecond: number } {
    if (w.enabled !== undefined && typeof w.enabled !== "boolean") throw new TypeError("enabled must be a boolean");
    if (w.rate !== undefined && (typeof w.rate !== "number" || !Number.isFinite(w.rate) || w.rate < 0 || w.rate > 1e9))
      throw new TypeError("rate must be a number of writes per second from 0 to 1e9");
    this.syncAll();
    if (w.enabled !== undefined) this.#writes.enabled = w.enabled;
    if (w.rate !== undefined) this.#writes.rate = w.rate;
    this.source.setRate(this.clock.now(), this.#perInstanceRate());
    return { enabled: this.#writes.enabled, ratePerSecond: this.#writes.rate };
  }

  /**
   * `count` DDL events of `type` on the source (default one createIndexes). The verifier's change
   * reader reads them during a verification: under failAll it exits (verifier.ts).
   */
  ddl(o: { type?: unknown; count?: unknown } = {}): { duringVerification: boolean } {
    const type = o.type ?? "createIndexes";
    if (typeof type !== "string" || !(SOURCE_DDL_TYPES as readonly string[]).includes(type))
      throw new TypeError(`type must be one of ${SOURCE_DDL_TYPES.join(", ")}`);
    const count = o.count ?? 1;
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > 1_000_000)
      throw new TypeError("count must be an integer from 1 to 1000000");
    this.syncAll();
    this.#ddl += count;
    const host = this.verifierHost;
    const seen =
      host.verifier.exited === null ? host.verifier.ddl(type as SourceDdlType, count) : { duringVerification: false };
    if (seen.exit !== undefined) host.exitAnswering(seen.exit);
    return { duringVerification: seen.duringVerification };
  }

  setTimeScale(x: number): void {
    this.syncAll();
    this.clock.setTimeScale(x);
  }

  advance(seconds: number): void {
    this.syncAll();
    this.clock.advance(seconds);
    this.syncAll();
  }

  // ---- counts --------------------------------------------------------------------------

  count(target: Target, key: string): void {
    const m = target === "verifier" ? this.#verifierCounts : this.#counts[target]!;
    m.set(key, (m.get(key) ?? 0) + 1);
  }

  counts(): RequestCounts {
    return {
      instances: this.#counts.map((m) => Object.fromEntries(m)),
      verifier: Object.fromEntries(this.#verifierCounts),
    };
  }

  resetCounts(): void {
    for (const m of this.#counts) m.clear();
    this.#verifierCounts.clear();
  }

  // ---- the service API ---------------------------------------------------------------

  /** GET /api/v1/progress on instance i. Evaluates that instance only (the polling hot path). */
  progress(i: number): Reply {
    this.fleet.sweep();
    const inst = this.instances[i]!;
    const t = this.clock.now();
    inst.advance(t);
    if (t < inst.unavailableUntil) {
      return errorReply(
        503,
        "ProgressUnavailable",
        `progress is unavailable for a while after the sync was resumed or restarted (simulated; ${Math.ceil(inst.unavailableUntil - t)} s left); retrying is safe`,
      );
    }
    let body = progressBody(inst, t);
    if (!this.book.empty) body = this.#progressFaults(i, t, body);
    // facts: "top-level `success` | 1.8 | older answers have only `progress`"
    return {
      status: 200,
      body: atLeast(this.version, PROGRESS_SINCE.success) ? { success: true, progress: body } : { progress: body },
    };
  }

  /** The faults that change what progress says (never the model itself). */
  #progressFaults(i: number, t: number, original: ProgressBody): ProgressBody {
    const body: ProgressBody & Record<string, unknown> = { ...original };
    const idle = body.state === "IDLE" || body.state === "INITIALIZING";
    for (const f of this.book.active("identity-change", i, t)) {
      if (idle) continue;
      f.hits++;
      if (f.message === "direction" && body.directionMapping)
        body.directionMapping = {
          Source: body.directionMapping.Destination,
          Destination: body.directionMapping.Source,
        };
      else if (f.message === "coordinator" && "coordinatorID" in body)
        body.coordinatorID = `other-fleet-${this.instances[i]!.coordinatorId}`;
    }
    const neg = this.book.active("negative-lag", i, t)[0];
    if (neg && body.state === "RUNNING" && body.lagTimeSeconds !== null) {
      neg.hits++;
      body.lagTimeSeconds = -(neg.value ?? 5);
      if (body.lag) body.lag = { ...body.lag, overallLagSeconds: -(neg.value ?? 5) };
    }
    const huge = this.book.active("huge-progress", i, t)[0];
    if (huge) {
      huge.hits++;
      body.simulatorPadding = "x".repeat(huge.value ?? 0);
    }
    return body;
  }

  /** POST /api/v1/{start,commit,pause,resume,reverse} on instance i. */
  command(i: number, command: Command, text: string): Reply | Promise<Reply> {
    const parsed = parseBody(text);
    if (parsed === BAD) return errorReply(400, "BadJSON", `the ${command} request body is not valid JSON`);
    const inst = this.instances[i]!;
    let body: StartRequest | undefined;
    if (command === "start") {
      if (parsed === undefined)
        return errorReply(400, "BadJSON", "start needs a JSON body with at least source and destination");
      const check = this.config.validateStart(parsed, {
        clusters: this.config.clusters,
        serviceVersion: this.version,
      });
      if (!check.ok) return errorReply(400, "InvalidRequest", check.description);
      body = check.body;
    } else if (!isEmptyObject(parsed)) {
      // commit: "an empty JSON object `{}` must be sent; no parameters." (facts: `{}` where there are no options)
      return errorReply(
        400,
        "InvalidRequest",
        `${command} takes an empty JSON object {} as its body${parsed === undefined ? " (the body was empty)" : ""}`,
      );
    }
    const t = this.syncAll();
    const v = this.version;
    const refuse = (why: string): Reply =>
      errorReply(400, "InvalidStateTransition", `cannot ${command} in state ${inst.state}: ${why}`);
    if (inst.failure)
      return errorReply(
        400,
        "MigrationFailed",
        `cannot ${command}: the migration failed (${inst.failure.reason}); start a new migration`,
      );
    // late-effect: what progress showed before the command, kept for a while
    const before = this.book.active("late-effect", i, t, command).length > 0 ? progressBody(inst, t) : undefined;
    switch (command) {
      case "start":
        // facts: "Documented refusals: … `start` while INITIALIZING (1.20)"
        if (inst.state === "INITIALIZING") return refuse("the service is initializing and not ready for start");
        // Rule 1: "start is allowed only in IDLE."
        if (inst.state !== "IDLE") return refuse("start is allowed only in IDLE");
        // facts: "The one documented name: `InsufficientDestinationDiskSpace` (1.22; `start` option
        // `skipDiskSpaceCheck: true` skips the check)."
        if (body!.skipDiskSpaceCheck !== true && this.book.hit("insufficient-disk-space", i, t))
          return errorReply(
            507,
            "InsufficientDestinationDiskSpace",
            "the destination cluster does not have enough free disk space for the data to copy (simulated); free space, or start with skipDiskSpaceCheck: true",
          );
        inst.start(t, body!);
        this.book.started(t);
        break;
      case "commit":
        // "Preconditions: ... state RUNNING and canCommit true."
        if (inst.state !== "RUNNING") return refuse("commit needs state RUNNING");
        // facts: "Documented refusals: … `commit` while `canCommit` is false (1.21)"; below 1.21
        // such a commit is accepted and waits for the copy (and index builds) to finish
        if (!inst.canCommitAt(t) && atLeast(v, BEHAVIOUR_SINCE.commitRefusedUnlessCanCommit))
          return refuse("canCommit is false (the collection copy or the index builds are not finished)");
        if (this.book.hit("commit-refused", i, t))
          return errorReply(500, "CommitRefused", `instance ${i} refused the commit (simulated fault)`);
        break;
      case "pause":
        // facts: "`pause` only in RUNNING → PAUSED"
        if (inst.state !== "RUNNING") return refuse("pause is allowed only in RUNNING");
        inst.pause();
        break;
      case "resume":
        // facts: "`resume` only in PAUSED → RUNNING"; "Documented refusals: … `resume` before PAUSED (1.21)"
        if (inst.state === "RUNNING" && !atLeast(v, BEHAVIOUR_SINCE.resumeRefusedUnlessPaused)) return ok();
        if (inst.state !== "PAUSED") return refuse("resume is allowed only in PAUSED");
        inst.resume(t);
        break;
      case "reverse":
        // facts: "`reverse` (only in COMMITTED, only if `start` had `reversible: true`)"
        if (inst.state !== "COMMITTED") return refuse("reverse is allowed only in COMMITTED");
        if (inst.body?.reversible !== true) return refuse("the sync was not started with reversible: true");
        break;
    }
    this.book.trigger(i, command);
    if (before) {
      const f = this.book.hit("late-effect", i, t, command)!;
      inst.stale = { until: t + (f.value ?? 0), body: before };
    }
    const dropped = before !== undefined || this.book.rollDrop(i, t, command);
    if (BLOCKING.includes(command)) {
      const reply = this.#join(i, command, t);
      return dropped ? DROP : reply;
    }
    this.fleet.accepted(i, command, command === "start" ? parsed : undefined);
    this.#accept(i, command);
    return dropped ? DROP : ok();
  }

  #accept(i: number, command: Command): void {
    const a = this.#accepted[i]!;
    a[command] = (a[command] ?? 0) + 1;
  }

  /**
   * A blocking command reached instance i: it waits until the whole fleet has it, then every
   * instance applies it at once (facts: "`commit` and `reverse` block until they have been called
   * on every instance").
   */
  #join(i: number, command: Command, t: number): Reply | Promise<Reply> {
    const members = this.fleet.join(i, command);
    if (!members) {
      return new Promise<Reply>((resolve) => {
        const ws = this.#waiters.get(command) ?? [];
        ws.push({ index: i, resolve });
        this.#waiters.set(command, ws);
      });
    }
    const results = new Map<number, Reply>();
    for (const m of members) {
      const inst = this.instances[m]!;
      if (command === "commit" && inst.state === "RUNNING" && !inst.failure) {
        inst.commit(t);
        this.#accept(m, command);
        results.set(m, ok());
      } else if (command === "reverse" && inst.state === "COMMITTED" && !inst.failure) {
        inst.reverse(t);
        this.#accept(m, command);
        results.set(m, ok());
      } else
        results.set(m, errorReply(400, "InvalidStateTransition", `cannot ${command} in state ${inst.state} any more`));
    }
    const ws = this.#waiters.get(command) ?? [];
    this.#waiters.delete(command);
    for (const w of ws) w.resolve(results.get(w.index) ?? ok());
    return results.get(i) ?? ok();
  }

  /** Answers the waiting requests when the simulator closes (their connections are cut). */
  #releaseWaiters(): void {
    for (const ws of this.#waiters.values()) for (const w of ws) w.resolve(DROP);
    this.#waiters.clear();
  }

  // ---- state ---------------------------------------------------------------------------

  state(): SimState {
    const t = this.syncAll();
    const n = this.instances.length;
    const lost = this.instances.reduce((s, x) => s + x.lost(t), 0);
    const refused = this.instances.reduce((s, x) => s + (x.afterCommit(t) - (x.lost(t) - x.lostFrozen)), 0);
    const v = this.verifierHost.verifier;
    return {
      time: { simSeconds: t, timeScale: this.clock.timeScale },
      serviceVersion: this.version,
      writes: {
        enabled: this.#writes.enabled,
        ratePerSecond: this.#writes.rate,
        total: Math.floor(this.source.events(t) * n),
        lost: Math.max(0, Math.ceil(lost - 1e-6)),
        refused: Math.max(0, Math.ceil(refused - 1e-6)),
      },
      instances: this.instances.map((x) => ({
        index: x.index,
        id: x.id,
        url: this.urls[x.index] ?? "",
        state: x.state,
        phase: x.started ? x.phase : null,
        down: x.down,
        canCommit: x.canCommit,
        lagTimeSeconds: x.lag(t),
        shareBytes: x.share,
        copiedBytes: Math.floor(x.copied),
        eventsApplied: Math.floor(x.applied - x.counterBase),
        pendingEvents: !x.started ? 0 : Math.max(0, Math.ceil(this.source.events(t) - x.applied - 1e-6)),
        writesLost: Math.max(0, Math.ceil(x.lost(t) - 1e-6)),
        writesRefused: Math.max(0, Math.ceil(x.afterCommit(t) - (x.lost(t) - x.lostFrozen) - 1e-6)),
        progressUnavailableForSeconds: Math.max(0, Math.ceil(x.unavailableUntil - t)),
        waitingFor: BLOCKING.filter((c) => this.fleet.joined(x.index, c)),
        failure: x.failure?.reason ?? null,
        accepted: { ...this.#accepted[x.index] },
      })),
      verifier: {
        url: this.verifierHost.url,
        release: this.config.verifierRelease,
        holds: v.holds,
        clean: v.startClean,
        namespaces: v.namespaces,
        filterMatchesNothing: v.filterMatchesNothing,
        ddlHandling: v.ddlHandling,
        resumed: v.resumed,
        phase: v.phase,
        running: v.status === "running" || v.status === "setup",
        generation: v.generation,
        writesOff: v.writesOff,
        checks: v.checks,
        ddlDuringVerification: v.ddlDuring,
        error: v.error,
        exited: v.exited,
      },
      fleetErrors: [...this.fleet.errors],
      openRounds: this.fleet.openRounds(),
      faults: this.faults(),
      ddl: this.#ddl,
    };
  }

  close(): void {
    this.#closed = true;
    this.#releaseWaiters();
    this.clock.dispose();
  }
}
