/**
 * The simulated world: the source application, N sync service instances, the verifier, the
 * fleet coordinator, the faults in force and the request counters, tied to one clock. The HTTP
 * layer (http.ts) turns requests into calls here; the control API (control.ts) and the
 * in-process `control` object call the same methods.
 */
import { SimClock } from "./clock.js";
import { FleetCoordinator, type Command, type FleetError } from "./coordinator.js";
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
import { Verifier, type VerifierInputs, type VerifierProgressBody } from "./verifier.js";
import { compareVersions } from "./units.js";

/** An HTTP answer: status and JSON body. */
export interface Reply {
  status: number;
  body: unknown;
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
  | "BadRequest";

/** facts: "Field names: `success` (boolean), `error` (string, the error's name) and `errorDescription`". */
export const errorReply = (status: number, error: ErrorName, errorDescription: string): Reply => ({
  status,
  body: { success: false, error, errorDescription },
});
const ok = (extra: Record<string, unknown> = {}): Reply => ({ status: 200, body: { success: true, ...extra } });

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
  validateStart: StartValidator;
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
  progressUnavailableForSeconds: number;
}

/** GET /sim/state. */
export interface SimState {
  time: { simSeconds: number; timeScale: number };
  writes: { enabled: boolean; ratePerSecond: number; total: number; lost: number };
  instances: InstanceSnapshot[];
  verifier: {
    url: string;
    phase: string;
    running: boolean;
    writesOff: boolean;
    checks: number;
    ddlDuringVerification: number;
    error: string | null;
  };
  fleetErrors: FleetError[];
  openRounds: { command: Command; accepted: number[]; ageMs: number }[];
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

export class SimWorld {
  readonly clock: SimClock;
  readonly source: SourceTimeline;
  readonly instances: SyncInstance[];
  readonly verifier: Verifier;
  readonly fleet: FleetCoordinator;
  urls: string[] = [];
  verifierUrl = "";
  /** Set by the HTTP layer: closes or reopens an instance's listener. */
  setListening: (index: number, up: boolean) => Promise<void> = async () => {};

  #writes: { enabled: boolean; rate: number };
  #faults: ActiveFault[] = [];
  #cancels = new Map<number, (() => void)[]>();
  #nextFaultId = 1;
  #firstStartAt: number | undefined;
  #random: Random[];
  #verifierRandom: Random;
  #counts: Map<string, number>[];
  #verifierCounts = new Map<string, number>();
  #ddl = 0;
  #closed = false;

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
      totalBytes: config.totalBytes,
      lagFloor: (i: number, t: number) => this.#faultValue("lag-floor", i, t) ?? 0,
      onRestart: (i: number, t: number) => {
        // Errors 6: "Progress calls can fail for at least two minutes after a sync is resumed or restarted."
        const d = this.#faultValue("progress-down-after-resume", i, t);
        if (d !== undefined) this.instances[i]!.unavailableUntil = t + d;
      },
      clusterHost: (name: string) =>
        config.clusters[name]?.host ?? `127.0.0.1:${27017 + Math.max(0, hosts.indexOf(name))}`,
    };
    const showIds = compareVersions(config.serviceVersion, "1.3") >= 0;
    this.instances = Array.from({ length: n }, (_, i) => {
      // The last instance takes the remainder, so the shares add up to the total exactly.
      const s = i === n - 1 ? config.totalBytes - share * (n - 1) : share;
      return new SyncInstance(i, config.ids[i]!, config.ids[0]!, s, env, showIds);
    });
    this.verifier = new Verifier(config.model, config.totalBytes);
    this.fleet = new FleetCoordinator(n, config.graceMs);
    this.#random = Array.from({ length: n }, (_, i) => streamFor(config.seed, i));
    this.#verifierRandom = streamFor(config.seed, -1);
    this.#counts = Array.from({ length: n }, () => new Map<string, number>());
  }

  #perInstanceRate(): number {
    return this.#writes.enabled ? this.#writes.rate / this.config.instances : 0;
  }

  // ---- evaluation --------------------------------------------------------------------

  #verifierInputs(): VerifierInputs {
    let readyFrom: number | undefined = -Infinity;
    for (const inst of this.instances) {
      if (!inst.ready || inst.readySince === undefined) {
        readyFrom = undefined;
        break;
      }
      readyFrom = Math.max(readyFrom, inst.readySince);
    }
    const n = this.instances.length;
    return {
      readyFrom,
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
    this.verifier.advance(t, this.#verifierInputs());
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
    const roll = (kind: FaultKind): boolean =>
      this.#activeFaults(kind, target, t, endpoint).some((f) => rnd() < (f.value ?? 1));
    d.reset = roll("reset");
    const lat = this.#activeFaults("latency", target, t, endpoint);
    d.latencyMs = lat.length ? Math.max(...lat.map((f) => f.value ?? 0)) * 1000 : 0;
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
    const t = this.syncAll();
    const fault: ActiveFault = {
      ...spec,
      id: this.#nextFaultId++,
      text: typeof input === "string" ? input : formatFault(spec),
      from: null,
      until: Infinity,
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
    return this.#faults.map((f) => ({ ...f }));
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
    return { status: 200, body: { success: true, progress: inst.progress(t) } };
  }

  /** POST /api/v1/{start,commit,pause,resume,reverse} on instance i. */
  command(i: number, command: Command, text: string): Reply {
    const parsed = parseBody(text);
    if (parsed === BAD) return errorReply(400, "BadJSON", `the ${command} request body is not valid JSON`);
    const inst = this.instances[i]!;
    let body: StartRequest | undefined;
    if (command === "start") {
      if (parsed === undefined)
        return errorReply(400, "BadJSON", "start needs a JSON body with at least source and destination");
      const check = this.config.validateStart(parsed, {
        clusters: this.config.clusters,
        serviceVersion: this.config.serviceVersion,
      });
      if (!check.ok) return errorReply(400, "InvalidRequest", check.description);
      body = check.body;
    } else if (!isEmptyObject(parsed)) {
      // commit: "an empty JSON object `{}` must be sent; no parameters." (facts: the same for pause, resume, reverse)
      return errorReply(
        400,
        "InvalidRequest",
        `${command} takes an empty JSON object {} as its body${parsed === undefined ? " (the body was empty)" : ""}`,
      );
    }
    const t = this.syncAll();
    const refuse = (why: string): Reply =>
      errorReply(400, "InvalidStateTransition", `cannot ${command} in state ${inst.state}: ${why}`);
    switch (command) {
      case "start":
        // Rule 1: "start is allowed only in IDLE."
        if (inst.state !== "IDLE") return refuse("start is allowed only in IDLE");
        inst.start(t, body!);
        if (this.#firstStartAt === undefined) {
          this.#firstStartAt = t;
          for (const f of this.#faults) if (f.from === null) this.#activate(f, t + (f.after ?? 0));
        }
        break;
      case "commit":
        // "Preconditions: ... state RUNNING and canCommit true."
        if (inst.state !== "RUNNING") return refuse("commit needs state RUNNING");
        if (!inst.canCommit) return refuse("canCommit is false (the collection copy is not finished)");
        if (this.#activeFaults("commit-refused", i, t).length > 0)
          return errorReply(500, "CommitRefused", `instance ${i} refused the commit (simulated fault)`);
        inst.commit(t);
        break;
      case "pause":
        // facts: "`POST /api/v1/pause`: only in RUNNING"
        if (inst.state !== "RUNNING") return refuse("pause is allowed only in RUNNING");
        inst.pause();
        break;
      case "resume":
        // facts: "`POST /api/v1/resume`: only in PAUSED"
        if (inst.state !== "PAUSED") return refuse("resume is allowed only in PAUSED");
        inst.resume(t);
        break;
      case "reverse":
        // facts: "only in COMMITTED, and only if `start` set `reversible: true` and write blocking on source and destination"
        if (inst.state !== "COMMITTED") return refuse("reverse is allowed only in COMMITTED");
        if (inst.body?.reversible !== true) return refuse("the sync was not started with reversible: true");
        inst.reverse(t);
        break;
    }
    this.fleet.accepted(i, command, command === "start" ? parsed : undefined);
    return ok();
  }

  // ---- the verifier API ----------------------------------------------------------------

  verifierProgress(): Reply {
    this.syncAll();
    return { status: 200, body: { progress: this.verifier.progress() satisfies VerifierProgressBody } };
  }

  verifierCommand(command: "check" | "writesOff", text: string): Reply {
    const parsed = parseBody(text);
    if (parsed === BAD) return errorReply(400, "BadJSON", `the ${command} request body is not valid JSON`);
    if (!isEmptyObject(parsed))
      return errorReply(400, "InvalidRequest", `${command} takes an empty JSON object {} as its body`);
    const t = this.syncAll();
    if (command === "writesOff") {
      this.verifier.setWritesOff();
      return ok();
    }
    if (!this.verifier.check(t, this.#verifierInputs()))
      return errorReply(400, "InvalidStateTransition", `a check is already in progress (phase ${this.verifier.phase})`);
    return ok();
  }

  // ---- state ---------------------------------------------------------------------------

  state(): SimState {
    const t = this.syncAll();
    const n = this.instances.length;
    const lost = this.instances.reduce((s, x) => s + x.lost(t), 0);
    return {
      time: { simSeconds: t, timeScale: this.clock.timeScale },
      writes: {
        enabled: this.#writes.enabled,
        ratePerSecond: this.#writes.rate,
        total: Math.floor(this.source.events(t) * n),
        lost: Math.max(0, Math.ceil(lost - 1e-6)),
      },
      instances: this.instances.map((x) => ({
        index: x.index,
        id: x.id,
        url: this.urls[x.index] ?? "",
        state: x.state,
        phase: x.state === "IDLE" ? null : x.phase,
        down: x.down,
        canCommit: x.canCommit,
        lagTimeSeconds: x.lag(t),
        shareBytes: x.share,
        copiedBytes: Math.floor(x.copied),
        eventsApplied: Math.floor(x.applied - x.counterBase),
        pendingEvents: x.state === "IDLE" ? 0 : Math.max(0, Math.ceil(this.source.events(t) - x.applied - 1e-6)),
        writesLost: Math.max(0, Math.ceil(x.lost(t) - 1e-6)),
        progressUnavailableForSeconds: Math.max(0, Math.ceil(x.unavailableUntil - t)),
      })),
      verifier: {
        url: this.verifierUrl,
        phase: this.verifier.phase,
        running: this.verifier.running,
        writesOff: this.verifier.writesOff,
        checks: this.verifier.checks,
        ddlDuringVerification: this.verifier.ddlDuring,
        error: this.verifier.error,
      },
      fleetErrors: [...this.fleet.errors],
      openRounds: this.fleet.openRounds(),
      faults: this.faults(),
      ddl: this.#ddl,
    };
  }

  close(): void {
    this.#closed = true;
    this.clock.dispose();
  }
}
