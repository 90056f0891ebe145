/**
 * The simulated world: the source application, N sync service instances, the verifier, the
 * fleet coordinator, the faults in force and the request counters, tied to one clock. The HTTP
 * layer (http.ts) turns requests into calls here; the control API (control.ts) and the
 * in-process `control` object call the same methods.
 */
import { SimClock } from "./clock.js";
import { BLOCKING, FleetCoordinator, type Command, type FleetError } from "./coordinator.js";
import {
  faultApplies,
  formatFault,
  normalizeFault,
  parseFault,
  type ActiveFault,
  type FaultKind,
  type FaultSpec,
} from "./faults.js";
import { SyncInstance, type ModelParams, type ProgressBody } from "./instance.js";
import { streamFor, type Random } from "./prng.js";
import { SourceTimeline } from "./source.js";
import type { ClusterSetting, StartRequest, StartValidator } from "./validate-start.js";
import {
  LATEST_VERIFIER_RELEASE,
  Verifier,
  specialCollections,
  type DataSet,
  type VerifierInputs,
  type VerifierRelease,
} from "./verifier.js";
import { BEHAVIOUR_SINCE, PROGRESS_SINCE, atLeast } from "./versions.js";

/**
 * An HTTP answer: a JSON body, a raw text (`text`, with its content type), or nothing at all
 * (`drop`: the connection is destroyed without an answer).
 */
export interface Reply {
  status: number;
  body?: unknown;
  text?: string;
  contentType?: string;
  drop?: boolean;
}

/** Error names (the real ones are undocumented: a client must rely on `success`). */
export type ErrorName =
  | "BadJSON"
  | "InvalidRequest"
  | "InvalidStateTransition"
  | "NotFound"
  | "MethodNotAllowed"
  | "PayloadTooLarge"
  | "InternalError"
  | "ProgressUnavailable"
  | "CommitRefused"
  | "BadRequest"
  | "MigrationFailed"
  | "InsufficientDestinationDiskSpace";

/** facts: "Error: `{"success": false, "error": "<Name>", "errorDescription": "<text>"}`". */
export const errorReply = (status: number, error: ErrorName, errorDescription: string): Reply => ({
  status,
  body: { success: false, error, errorDescription },
});
const ok = (extra: Record<string, unknown> = {}): Reply => ({ status: 200, body: { success: true, ...extra } });
const DROP: Reply = { status: 0, drop: true };
/** The verifier's `{"error": …}` answers (no `success` field). */
const verifierError = (status: number, error: string): Reply => ({ status, body: { error } });

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
    /** This process found an earlier one's metadata (restarted without --clean). */
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

type Target = number | "verifier";

interface TransportDecision {
  reset: boolean;
  latencyMs: number;
  http500: boolean;
  nonJson: boolean;
  /** Which non-JSON answer to give (drawn from the same seeded stream). */
  variant: number;
  resetAfter: boolean;
}

/** Parses a request body: undefined when empty, a marker on bad JSON. */
const BAD = Symbol("bad json");
function parseBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return BAD;
  }
}
const isEmptyObject = (v: unknown): boolean =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const goType = (v: unknown): string =>
  Array.isArray(v) ? "array" : typeof v === "string" ? "string" : typeof v === "number" ? "number" : "bool";

export class SimWorld {
  readonly clock: SimClock;
  readonly source: SourceTimeline;
  readonly instances: SyncInstance[];
  verifier: Verifier;
  readonly fleet: FleetCoordinator;
  urls: string[] = [];
  verifierUrl = "";
  /** Set by the HTTP layer: closes or reopens an instance's listener. */
  setListening: (index: number, up: boolean) => Promise<void> = async () => {};
  /**
   * Set by the HTTP layer: the verifier process exits (listener closed, connections cut; when
   * `afterInFlight`, once the request holding its lock has been answered) or starts again.
   */
  setVerifierRunning: (running: boolean, afterInFlight?: Promise<void>) => Promise<void> = async () => {};

  #writes: { enabled: boolean; rate: number };
  #faults: ActiveFault[] = [];
  #cancels = new Map<number, (() => void)[]>();
  #nextFaultId = 1;
  #firstStartAt: number | undefined;
  #random: Random[];
  #verifierRandom: Random;
  #counts: Map<string, number>[];
  #accepted: Partial<Record<Command, number>>[];
  #verifierCounts = new Map<string, number>();
  #ddl = 0;
  #closed = false;
  /** Answers of blocking commands waiting for the rest of the fleet, per command. */
  #waiters = new Map<Command, { index: number; resolve: (r: Reply) => void }[]>();
  /** The verifier's one operational request at a time: settles when the one in flight is answered. */
  #verifierLock: Promise<void> | undefined;

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
      lagFloor: (i: number, t: number) => this.#faultValue("lag-floor", i, t) ?? 0,
      onRestart: (i: number, t: number) => {
        // Errors 6: "Progress calls can fail for at least two minutes after a sync is resumed or restarted."
        const d = this.#faultValue("progress-down-after-resume", i, t);
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
    this.verifier = new Verifier(config.model, config.totalBytes, config.dataSet);
    this.fleet = new FleetCoordinator(n, config.graceMs);
    this.#random = Array.from({ length: n }, (_, i) => streamFor(config.seed, i));
    this.#verifierRandom = streamFor(config.seed, -1);
    this.#counts = Array.from({ length: n }, () => new Map<string, number>());
    this.#accepted = Array.from({ length: n }, () => ({}));
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
      collectionsFrom: this.#fleetSince((i) =>
        i.state === "IDLE" || i.state === "INITIALIZING" ? undefined : i.collectionsAt,
      ),
      copiedFrom: this.#fleetSince((i) => (i.state === "IDLE" || i.state === "INITIALIZING" ? undefined : i.copiedAt)),
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
    this.verifier.error = this.#activeFaults("verifier-error", "verifier", t)[0]?.message ?? null;
    const exit = this.verifier.advance(t, this.#verifierInputs());
    if (exit) this.#verifierExit(exit, false);
    return t;
  }

  // ---- faults ------------------------------------------------------------------------

  #activeFaults(kind: FaultKind, target: Target, t: number, endpoint?: string): ActiveFault[] {
    if (this.#faults.length === 0) return [];
    return this.#faults.filter((f) => f.kind === kind && faultApplies(f, target, endpoint, t));
  }

  #faultValue(kind: FaultKind, target: Target, t: number): number | undefined {
    const fs = this.#activeFaults(kind, target, t);
    return fs.length === 0 ? undefined : Math.max(...fs.map((f) => f.value ?? 0));
  }

  /** The first fault of this kind in force, counted as having acted. */
  #hit(kind: FaultKind, target: Target, t: number, endpoint?: string): ActiveFault | undefined {
    const f = this.#activeFaults(kind, target, t, endpoint)[0];
    if (f) f.hits++;
    return f;
  }

  /** Draws the transport faults for one request (seeded, per target). */
  transport(target: Target, endpoint: string | undefined): TransportDecision {
    const d: TransportDecision = {
      reset: false,
      latencyMs: 0,
      http500: false,
      nonJson: false,
      variant: 0,
      resetAfter: false,
    };
    if (this.#faults.length === 0) return d;
    const t = this.clock.now();
    const rnd = target === "verifier" ? this.#verifierRandom : this.#random[target]!;
    const roll = (kind: FaultKind): boolean => {
      const f = this.#activeFaults(kind, target, t, endpoint).find((x) => rnd() < (x.value ?? 1));
      if (f) f.hits++;
      return f !== undefined;
    };
    d.reset = roll("reset");
    const lat = this.#activeFaults("latency", target, t, endpoint);
    d.latencyMs = lat.length ? Math.max(...lat.map((f) => f.value ?? 0)) * 1000 : 0;
    for (const f of lat) f.hits++;
    d.http500 = roll("http500");
    d.nonJson = roll("non-json");
    if (d.nonJson) d.variant = Math.floor(rnd() * 3);
    d.resetAfter = roll("reset-after");
    return d;
  }

  addFault(input: string | FaultSpec): ActiveFault {
    const spec = typeof input === "string" ? parseFault(input) : normalizeFault(input, input?.kind);
    for (const i of spec.instances ?? []) {
      if (i >= this.instances.length)
        throw new RangeError(
          `invalid fault "${formatFault(spec)}": there is no instance ${i} (the fleet has ${this.instances.length})`,
        );
    }
    if (spec.kind === "live-upgrade" && atLeast(this.version, BEHAVIOUR_SINCE.noLiveUpgrades))
      throw new RangeError(
        `invalid fault "${formatFault(spec)}": live upgrades of a running sync are not supported from ${BEHAVIOUR_SINCE.noLiveUpgrades} (this service is ${this.version})`,
      );
    if (spec.kind === "insufficient-disk-space" && !atLeast(this.version, BEHAVIOUR_SINCE.diskSpaceCheck))
      throw new RangeError(
        `invalid fault "${formatFault(spec)}": the destination disk space check is a ${BEHAVIOUR_SINCE.diskSpaceCheck} feature (this service is ${this.version})`,
      );
    const t = this.syncAll();
    const fault: ActiveFault = {
      ...spec,
      id: this.#nextFaultId++,
      text: typeof input === "string" ? input : formatFault(spec),
      from: null,
      until: Infinity,
      hits: 0,
      ...(spec.on !== undefined ? { triggered: [] } : {}),
    };
    this.#faults.push(fault);
    if (spec.after === undefined) this.#activate(fault, t);
    else if (this.#firstStartAt !== undefined) this.#activate(fault, t + spec.after);
    if (fault.kind === "live-upgrade") {
      for (const inst of this.instances)
        if (faultApplies({ ...fault, from: -Infinity }, inst.index, undefined, t))
          inst.pendingUpgrade = fault.value ?? 0.5;
    }
    return fault;
  }

  #activate(fault: ActiveFault, from: number): void {
    fault.from = from;
    fault.until = fault.for === undefined ? Infinity : from + fault.for;
    if (fault.kind === "verifier-exit") {
      const exit = (): void => {
        fault.hits++;
        this.#verifierExit(fault.message ?? "simulated exit", false);
      };
      if (from <= this.clock.now()) exit();
      else this.#cancels.set(fault.id, [this.clock.at(from, exit)]);
      return;
    }
    if (fault.kind !== "down") return;
    const targets = fault.instances ?? this.instances.map((x) => x.index);
    const cancels: (() => void)[] = [];
    cancels.push(this.clock.at(from, () => targets.forEach((i) => void this.down(i).catch(() => {}))));
    if (fault.until !== Infinity)
      cancels.push(this.clock.at(fault.until, () => targets.forEach((i) => void this.up(i).catch(() => {}))));
    this.#cancels.set(fault.id, cancels);
  }

  removeFault(id: number): boolean {
    const i = this.#faults.findIndex((f) => f.id === id);
    if (i < 0) return false;
    const [fault] = this.#faults.splice(i, 1);
    for (const c of this.#cancels.get(id) ?? []) c();
    this.#cancels.delete(id);
    if (fault!.kind === "live-upgrade") for (const inst of this.instances) inst.pendingUpgrade = null;
    if (fault!.kind === "down")
      for (const x of fault!.instances ?? this.instances.map((y) => y.index))
        if (this.instances[x]?.down) void this.up(x).catch(() => {});
    return true;
  }

  clearFaults(): void {
    for (const f of [...this.#faults]) this.removeFault(f.id);
  }

  faults(): ActiveFault[] {
    return this.#faults.map((f) => ({ ...f, ...(f.triggered ? { triggered: [...f.triggered] } : {}) }));
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
    // facts: "Live upgrades of a running sync are not supported from 1.11."
    if (atLeast(this.version, BEHAVIOUR_SINCE.noLiveUpgrades))
      throw new RangeError(
        `live upgrades of a running sync are not supported from ${BEHAVIOUR_SINCE.noLiveUpgrades} (this service is ${this.version})`,
      );
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

  ddl(): { duringVerification: boolean } {
    this.syncAll();
    this.#ddl++;
    return { duringVerification: this.verifier.ddl() };
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
    let body = inst.progress(t);
    if (this.#faults.length > 0) body = this.#progressFaults(i, t, body);
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
    for (const f of this.#activeFaults("identity-change", i, t)) {
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
    const neg = this.#activeFaults("negative-lag", i, t)[0];
    if (neg && body.state === "RUNNING" && body.lagTimeSeconds !== null) {
      neg.hits++;
      body.lagTimeSeconds = -(neg.value ?? 5);
      if (body.lag) body.lag = { ...body.lag, overallLagSeconds: -(neg.value ?? 5) };
    }
    const huge = this.#activeFaults("huge-progress", i, t)[0];
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
    const before = this.#activeFaults("late-effect", i, t, command).length > 0 ? inst.progress(t) : undefined;
    switch (command) {
      case "start":
        // facts: "Documented refusals: … `start` while INITIALIZING (1.20)"
        if (inst.state === "INITIALIZING") return refuse("the service is initializing and not ready for start");
        // Rule 1: "start is allowed only in IDLE."
        if (inst.state !== "IDLE") return refuse("start is allowed only in IDLE");
        // facts: "The one documented name: `InsufficientDestinationDiskSpace` (1.22; `start` option
        // `skipDiskSpaceCheck: true` skips the check)."
        if (body!.skipDiskSpaceCheck !== true && this.#hit("insufficient-disk-space", i, t))
          return errorReply(
            507,
            "InsufficientDestinationDiskSpace",
            "the destination cluster does not have enough free disk space for the data to copy (simulated); free space, or start with skipDiskSpaceCheck: true",
          );
        inst.start(t, body!);
        if (this.#firstStartAt === undefined) {
          this.#firstStartAt = t;
          for (const f of this.#faults) if (f.from === null) this.#activate(f, t + (f.after ?? 0));
        }
        break;
      case "commit":
        // "Preconditions: ... state RUNNING and canCommit true."
        if (inst.state !== "RUNNING") return refuse("commit needs state RUNNING");
        // facts: "Documented refusals: … `commit` while `canCommit` is false (1.21)"; below 1.21
        // such a commit is accepted and waits for the copy (and index builds) to finish
        if (!inst.canCommitAt(t) && atLeast(v, BEHAVIOUR_SINCE.commitRefusedUnlessCanCommit))
          return refuse("canCommit is false (the collection copy or the index builds are not finished)");
        if (this.#hit("commit-refused", i, t))
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
    this.#trigger(i, command);
    if (before) {
      const f = this.#hit("late-effect", i, t, command)!;
      inst.stale = { until: t + (f.value ?? 0), body: before };
    }
    const dropped = before !== undefined || this.#rollDrop(i, t, command);
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

  #rollDrop(i: number, t: number, command: Command): boolean {
    const f = this.#activeFaults("drop-after-effect", i, t, command)[0];
    if (!f || !(this.#random[i]!() < (f.value ?? 1))) return false;
    f.hits++;
    return true;
  }

  /** identity-change faults with `on=<command>` start on the instance that accepted it. */
  #trigger(i: number, command: Command): void {
    for (const f of this.#faults) {
      if (f.kind !== "identity-change" || f.on !== command) continue;
      if (f.instances !== undefined && !f.instances.includes(i)) continue;
      if (!f.triggered!.includes(i)) f.triggered!.push(i);
    }
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

  // ---- the verifier API (its published source) -------------------------------------------

  /** The verifier process exits: its listener closes and its connections are cut. */
  #verifierExit(reason: string, afterInFlight: boolean): void {
    if (this.verifier.exited !== null) return;
    this.verifier.exited = reason;
    void this.setVerifierRunning(false, afterInFlight ? this.#verifierLock : undefined).catch(() => {});
  }

  /**
   * POST /sim/verifier/restart: a new verifier process. With `clean` (the default) it starts from
   * nothing, as with `--clean`; without, it finds the old one's metadata (facts: it answers idle,
   * generation 0, with the persisted counters until a check resumes them).
   */
  async restartVerifier(opts: { clean?: boolean } = {}): Promise<void> {
    this.syncAll();
    const old = this.verifier;
    const resumes = opts.clean === false ? old.persisted() : undefined;
    this.verifier = new Verifier(this.config.model, this.config.totalBytes, this.config.dataSet, resumes);
    this.verifier.t = this.clock.now();
    if (old.exited === null) {
      old.exited = "restarted";
      // graceful: this very request may have come in on the verifier's port
      await this.setVerifierRunning(false, Promise.resolve());
    }
    await this.setVerifierRunning(true);
  }

  /** Resolves once simulated time reaches t (the clock's timers also fire on `advance`). */
  #untilSim(t: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.clock.now() >= t) resolve();
      else this.clock.at(t, resolve);
    });
  }

  /** GET /api/v1/progress on the verifier. */
  async verifierProgress(): Promise<Reply> {
    let t = this.syncAll();
    // the check's setup holds the lock progress needs: the answer waits
    while (this.verifier.settingUp && this.verifier.exited === null && !this.#closed) {
      await this.#untilSim(this.verifier.setupUntil);
      t = this.syncAll();
    }
    if (this.verifier.exited !== null || this.#closed) return DROP;
    // "v0.1.6 to v0.2.0 answer GET /progress before the first check with an empty HTTP 500"
    if (this.config.verifierRelease !== LATEST_VERIFIER_RELEASE && this.verifier.status === "new")
      return { status: 500, text: "", contentType: "text/plain" };
    const f = this.#hit("verifier-progress-error", "verifier", t);
    // "A failure to read progress answers `{"error": …}` at the top level"
    if (f) return verifierError(200, f.message ?? "failed to read progress");
    const body: Record<string, unknown> = { progress: this.verifier.progress() };
    const huge = this.#hit("huge-progress", "verifier", t);
    if (huge) (body.progress as Record<string, unknown>).simulatorPadding = "x".repeat(huge.value ?? 0);
    return { status: 200, body };
  }

  /** GET /api/v1/summary, /docMismatches, /nsMismatches (query: the raw query string). */
  verifierReport(endpoint: "summary" | "docMismatches" | "nsMismatches", query: string): Reply {
    this.syncAll();
    if (this.verifier.exited !== null) return DROP;
    const params = new URLSearchParams(query);
    const min = params.get("minDurationSecs");
    if (endpoint !== "nsMismatches" && min !== null && min !== "" && !/^\d{1,10}$/.test(min))
      return verifierError(400, `invalid \`minDurationSecs\`: strconv.ParseUint: parsing "${min}": invalid syntax`);
    const ignore = endpoint === "nsMismatches" ? (params.get("indexSpecIgnore") ?? "") : "";
    const tolerances = ignore === "" ? [] : ignore.split(",");
    const bad = tolerances.filter((x) => x !== "expireAfterSeconds" && x !== "unique");
    if (bad.length > 0) return verifierError(400, `invalid \`indexSpecIgnore\`: [\`${bad.join("` `")}\`]`);
    const d = this.config.dataSet;
    const ns = (k: number): string => `app.coll${k}`;
    // the special collections, in order: unique, TTL, hidden
    const aspects: ("unique" | "expireAfterSeconds" | "hidden")[] = [
      ...Array<"unique">(d.unique).fill("unique"),
      ...Array<"expireAfterSeconds">(d.ttl).fill("expireAfterSeconds"),
      ...Array<"hidden">(d.hidden).fill("hidden"),
    ].slice(0, specialCollections(d));
    const mismatched = Math.min(this.verifier.mismatchedCollections(), aspects.length);
    const nsMismatches = aspects
      .slice(0, mismatched)
      .flatMap((a, k) =>
        tolerances.includes(a)
          ? []
          : [{ type: "content", namespace: ns(k), aspect: "index", component: `idx_${a}`, detail: `${a} differs` }],
      );
    const failed = Math.min(this.verifier.failedTasks(), 1000);
    const docMismatches = Array.from({ length: failed }, (_, k) => ({
      type: "missingOnDst",
      namespace: ns(d.collections - 1),
      _id: k,
      durationSecs: 0,
    }));
    if (endpoint === "summary") {
      const p = this.verifier.progress();
      return {
        status: 200,
        body: {
          estCheckSecsRemaining: p.phase === "idle" && this.verifier.status === "finished" ? 0 : null,
          checkStats: p.generationStats,
          nsMismatches,
          docMismatches: {
            total: docMismatches.length,
            byType: docMismatches.length ? { missingOnDst: docMismatches.length } : {},
            byNamespace: docMismatches.length ? { [ns(d.collections - 1)]: docMismatches.length } : {},
          },
          totalRechecksDone: p.totalRechecksDone,
          srcChangeEvents: p.srcChangeStats.eventCounts,
          dstChangeEvents: p.dstChangeStats.eventCounts,
        },
      };
    }
    const lines = (endpoint === "nsMismatches" ? nsMismatches : docMismatches).map((x) => JSON.stringify(x) + "\n");
    return { status: 200, text: lines.join(""), contentType: "application/x-ndjson" };
  }

  /**
   * POST /api/v1/check and /api/v1/writesOff. "One operational request at a time": a second one
   * while the first is being handled is answered APIError, and the verifier then shuts its web
   * server down and exits.
   */
  async verifierCommand(command: "check" | "writesOff", text: string): Promise<Reply> {
    if (this.verifier.exited !== null) return DROP;
    if (this.#verifierLock) {
      this.#verifierExit("request in progress", true);
      return { status: 200, body: { success: false, error: "APIError", errorDescription: "request in progress" } };
    }
    let release!: () => void;
    this.#verifierLock = new Promise<void>((r) => (release = r));
    try {
      return command === "check" ? this.#check(text) : await this.#writesOff(text);
    } finally {
      this.#verifierLock = undefined;
      release();
    }
  }

  #check(text: string): Reply {
    // `{}` or `{"filter": …}` (extended JSON); other fields are ignored, as the published binding does
    const parsed = parseBody(text);
    if (parsed === undefined) return verifierError(400, "EOF");
    if (parsed === BAD) return verifierError(400, "invalid JSON input");
    if (!isObject(parsed)) return verifierError(400, `cannot decode ${goType(parsed)} into a verifier.CheckRequest`);
    if (parsed.filter !== undefined && parsed.filter !== null && !isObject(parsed.filter))
      return verifierError(400, `error decoding key filter: cannot decode ${goType(parsed.filter)} into a bson.D`);
    const t = this.syncAll();
    // "`check` answers success at once and starts later; a `check` after one already ran is answered success and ignored"
    this.verifier.check(t);
    return ok();
  }

  async #writesOff(text: string): Promise<Reply> {
    const parsed = parseBody(text);
    if (parsed === undefined) return verifierError(400, "EOF");
    if (parsed === BAD) return verifierError(400, "invalid character in JSON input");
    if (parsed !== null && !isObject(parsed))
      return verifierError(400, `json: cannot unmarshal ${goType(parsed)} into Go value of type verifier.EmptyRequest`);
    let t = this.syncAll();
    // the check's setup holds the verifier's own lock: writesOff waits for it (holding the request lock)
    while (this.verifier.settingUp && this.verifier.exited === null && !this.#closed) {
      await this.#untilSim(this.verifier.setupUntil);
      t = this.syncAll();
    }
    if (this.verifier.exited !== null || this.#closed) return DROP;
    // "`writesOff` a second time answers HTTP 200 `{"error": "writesOff already set"}` with no `success` field"
    if (this.verifier.writesOff) return verifierError(200, "writesOff already set");
    // set before the cluster times are read: a refusal below still leaves it set
    this.verifier.writesOff = true;
    const slow = this.#hit("writes-off-slow", "verifier", t);
    // (a shutdown meanwhile still lets this answer out: the web server shuts down gracefully)
    if (slow) await new Promise((r) => setTimeout(r, (slow.value ?? 0) * 1000));
    if (this.#closed) return DROP;
    const refused = this.#hit("writes-off-refused", "verifier", this.clock.now());
    if (refused) return verifierError(200, `failed to fetch source's cluster time: ${refused.message ?? "error"}`);
    // no check has started its change readers: the published verifier dereferences a nil reader
    // (a panic its web framework answers with an empty 500), and can then never finish
    if (!this.verifier.readers) return { status: 500, text: "", contentType: "text/plain" };
    this.verifier.finalTs = true;
    return ok();
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
    const v = this.verifier;
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
        phase: x.state === "IDLE" || x.state === "INITIALIZING" ? null : x.phase,
        down: x.down,
        canCommit: x.canCommit,
        lagTimeSeconds: x.lag(t),
        shareBytes: x.share,
        copiedBytes: Math.floor(x.copied),
        eventsApplied: Math.floor(x.applied - x.counterBase),
        pendingEvents:
          x.state === "IDLE" || x.state === "INITIALIZING"
            ? 0
            : Math.max(0, Math.ceil(this.source.events(t) - x.applied - 1e-6)),
        writesLost: Math.max(0, Math.ceil(x.lost(t) - 1e-6)),
        writesRefused: Math.max(0, Math.ceil(x.afterCommit(t) - (x.lost(t) - x.lostFrozen) - 1e-6)),
        progressUnavailableForSeconds: Math.max(0, Math.ceil(x.unavailableUntil - t)),
        waitingFor: BLOCKING.filter((c) => this.fleet.joined(x.index, c)),
        failure: x.failure?.reason ?? null,
        accepted: { ...this.#accepted[x.index] },
      })),
      verifier: {
        url: this.verifierUrl,
        release: this.config.verifierRelease,
        resumed: v.resumes !== undefined,
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
