/**
 * The simulator's public surface: `startSimulator(options)` starts N sync service instances
 * and a verifier on loopback, all in this process, and returns their URLs, an in-process
 * `control` (the same operations as the /sim/ HTTP control API) and `close()`.
 *
 *   const sim = await startSimulator({ instances: 2 });   // ports 0: free ports
 *   sim.instances[0].url  // http://127.0.0.1:41234
 *   sim.control.setWrites({ enabled: false });
 *   await sim.close();
 */
import { DEFAULT_MODEL, type ModelParams } from "./model.js";
import { TargetServer } from "./http.js";
import { loadStartValidator, type ClusterSetting } from "./validate-start.js";
import { SimWorld, type RequestCounts, type SimState } from "./world.js";
import type { ActiveFault, FaultSpec } from "./faults.js";
import { parseBytes } from "./units.js";
import {
  DEFAULT_DATA_SET,
  LATEST_VERIFIER_RELEASE,
  VERIFIER_DDL_HANDLINGS,
  VERIFIER_NAMESPACES,
  VERIFIER_RELEASES,
  type DataSet,
  type SourceDdlType,
  type VerifierDdlHandling,
  type VerifierNamespaces,
  type VerifierRelease,
} from "./verifier.js";
import { DEFAULT_SERVICE_VERSION, VERSION_RE } from "./versions.js";

export { parseFault, formatFault, FAULT_KINDS } from "./faults.js";
export type { FaultSpec, FaultKind, ActiveFault } from "./faults.js";
export type { SimState, RequestCounts, InstanceSnapshot } from "./world.js";
export type { ErrorName } from "./replies.js";
export type { ClusterSetting, StartRequest, Topology } from "./validate-start.js";
export type { SyncState } from "./instance.js";
export type { ProgressBody } from "./progress-body.js";
export type { ModelParams } from "./model.js";
export type {
  VerifierProgressBody,
  VerificationStatus,
  VerifierPhase,
  DataSet,
  VerifierRelease,
  VerifierNamespaces,
  VerifierDdlHandling,
  SourceDdlType,
} from "./verifier.js";
export {
  DEFAULT_DATA_SET,
  VERIFIER_RELEASES,
  VERIFIER_NAMESPACES,
  VERIFIER_DDL_HANDLINGS,
  SOURCE_DDL_TYPES,
  WARN_MOST_DDL,
} from "./verifier.js";
export type { FleetError } from "./coordinator.js";
export { parseBytes, parseSeconds } from "./units.js";

export interface SimulatorOptions {
  /** Number of sync service instances (default 1; one per source shard). */
  instances?: number;
  /** Interface to bind (default 127.0.0.1: "By default the API binds to the local host only"). */
  host?: string;
  /** Port of instance 0; instance i listens on port + i. 0 (default) picks free ports. */
  port?: number;
  /** Port of the verifier (default 0: a free port). */
  verifierPort?: number;
  /** The service's cluster settings (default cluster0: replica set, cluster1: sharded). */
  clusters?: Record<string, ClusterSetting>;
  /** Data to copy, split across instances: bytes or `5GiB` (default 5 GiB). */
  data?: number | string;
  /** Simulated seconds per wall second (default 50: a 5 GiB sync, verification and commit in a few seconds). */
  timeScale?: number;
  /** Faults in force from the start: `http500=0.2@1` or objects (see faults.ts). */
  faults?: (string | FaultSpec)[];
  /** Seed of the fault PRNG (default 1). */
  seed?: number;
  /**
   * Version of the simulated service (default `DEFAULT_SERVICE_VERSION`): the progress fields, start fields and
   * values, states and refusals of that version (spec/service-facts.md; see src/sim/versions.ts).
   */
  serviceVersion?: string;
  /**
   * The simulated data set: collections, and how many of them have unique, TTL or hidden indexes
   * (their index metadata differs on the destination until commit, so a verifier told writesOff
   * before commit counts them in metadataMismatchTasks). Default 12 collections, 2 unique, 1 TTL,
   * 1 hidden.
   */
  dataSet?: Partial<DataSet>;
  /** Instance ids for mongosyncID (default `instance-0`, `instance-1`, …; the coordinator is the first). */
  ids?: string[];
  /** The simulated source application: writes on (default) and fleet-wide writes per second (default 1000). */
  writes?: { enabled?: boolean; rate?: number };
  /** Rates and durations of the model (see ModelParams). */
  model?: Partial<ModelParams>;
  /** Wall ms within which a command must reach every instance (default 2000). */
  graceMs?: number;
  /** Largest request body accepted (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * The migration verifier release emulated (default v0.2.1); `v0.2.0` stands for v0.1.6 to
   * v0.2.0, whose progress answers an empty HTTP 500 until the first check.
   */
  verifierRelease?: VerifierRelease;
  /**
   * The namespaces the verifier process is started with (default `all`: `--verifyAll`). `none`:
   * neither `--verifyAll` nor `--srcNamespace`, so a fresh verification's generation 0 has no task
   * (migration-verifier v0.2.1 check.go `CreateInitialTasksIfNeeded`): gen0Stats all 0, with
   * `totalNamespaces` 0. A restart keeps it unless `restartVerifier({ namespaces })` says otherwise.
   */
  verifierNamespaces?: VerifierNamespaces;
  /**
   * Whether the simulated documents match a check's filter, when the check has one with a
   * condition (default `all`). `none`: its document tasks compare 0 documents (docsCompared 0 of
   * totalDocs); the collections' metadata is still verified.
   */
  checkFilterMatches?: "all" | "none";
  /**
   * The verifier process's `--ddlHandling` (default `failAll`, the verifier's own default). Under
   * `failAll` a DDL event on the source during a verification (`control.ddl`) makes the verifier
   * process exit; under `warnMost` create, modify, createIndexes, dropIndexes, shardCollection,
   * reshardCollection and refineCollectionShardKey are counted in `srcChangeStats.eventCounts` and
   * skipped (not verified), while drop, rename and dropDatabase still make it exit
   * (migration-verifier v0.2.1 change_stream.go lines 218-232). A restart keeps it unless
   * `restartVerifier({ ddlHandling })` says otherwise.
   */
  verifierDdlHandling?: VerifierDdlHandling;
}

export interface SimulatorInstance {
  index: number;
  id: string;
  url: string;
  port: number;
}

/** The same operations as the /sim/ control API, in-process. */
export interface SimControl {
  state(): SimState;
  counts(): RequestCounts;
  resetCounts(): void;
  setWrites(w: { enabled?: boolean; rate?: number }): { enabled: boolean; ratePerSecond: number };
  /**
   * DDL on the source: `count` events of `type` (default one `createIndexes`). `duringVerification`:
   * the verifier's change reader read them (a check's setup until the writes-off timestamp); what
   * it did then depends on `verifierDdlHandling`.
   */
  ddl(opts?: { type?: SourceDdlType; count?: number }): { duringVerification: boolean };
  /** Simulated seconds since the simulator started. */
  now(): number;
  setTimeScale(x: number): void;
  /** Jumps simulated time forward. */
  advance(seconds: number): void;
  addFault(spec: string | FaultSpec): ActiveFault;
  removeFault(id: number): boolean;
  clearFaults(): void;
  faults(): ActiveFault[];
  down(index: number): Promise<void>;
  up(index: number): Promise<void>;
  liveUpgrade(index: number): void;
  /**
   * A new verifier process (after it exited, or to start over) on the old one's metadata: with
   * `--clean` (the default) its first check drops it, `clean: false` resumes it; `newMetadata`: none.
   */
  restartVerifier(opts?: {
    clean?: boolean;
    newMetadata?: boolean;
    namespaces?: VerifierNamespaces;
    ddlHandling?: VerifierDdlHandling;
  }): Promise<void>;
}

export interface Simulator {
  instances: SimulatorInstance[];
  verifierUrl: string;
  /** The service version it answers as. */
  serviceVersion: string;
  control: SimControl;
  close(): Promise<void>;
}

const DEFAULT_CLUSTERS: Record<string, ClusterSetting> = {
  cluster0: { topology: "replicaSet" },
  cluster1: { topology: "sharded" },
};

function checkInt(name: string, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${v}`);
  return v;
}

/** Starts the simulator. Rejects (nothing left listening) if a port is taken or an option is invalid. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const n = checkInt("instances", options.instances ?? 1, 1, 4096);
  const host = options.host ?? "127.0.0.1";
  const port = checkInt("port", options.port ?? 0, 0, 65535);
  if (port !== 0 && port + n - 1 > 65535) throw new RangeError(`ports ${port}..${port + n - 1} do not fit below 65536`);
  const verifierPort = checkInt("verifierPort", options.verifierPort ?? 0, 0, 65535);
  const totalBytes = parseBytes(options.data ?? "5GiB");
  if (totalBytes < n) throw new RangeError(`data (${totalBytes} bytes) must be at least one byte per instance`);
  const model: ModelParams = { ...DEFAULT_MODEL, ...options.model };
  for (const [k, v] of Object.entries(model)) {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw new RangeError(`model.${k} must be a number ≥ 0`);
  }
  for (const k of [
    "copyBytesPerSecond",
    "applyEventsPerSecond",
    "drainApplyFactor",
    "verifyBytesPerSecond",
    "verifyBytesPerTask",
    "recheckDocsPerTask",
    "recheckTasksPerSecond",
    "averageDocumentBytes",
  ] as const) {
    if (!(model[k] > 0)) throw new RangeError(`model.${k} must be > 0`);
  }
  const clusters = options.clusters ?? DEFAULT_CLUSTERS;
  if (Object.keys(clusters).length < 2) throw new RangeError("give at least two cluster settings");
  for (const [name, c] of Object.entries(clusters)) {
    if (c.topology !== "replicaSet" && c.topology !== "sharded")
      throw new RangeError(`cluster ${name}: topology must be replicaSet or sharded`);
  }
  const ids = options.ids ?? Array.from({ length: n }, (_, i) => `instance-${i}`);
  if (ids.length !== n || new Set(ids).size !== n) throw new RangeError(`ids must be ${n} distinct strings`);
  const serviceVersion = options.serviceVersion ?? DEFAULT_SERVICE_VERSION;
  if (!VERSION_RE.test(serviceVersion))
    throw new RangeError(`serviceVersion must look like 1.8.0, got "${serviceVersion}"`);
  const dataSet: DataSet = { ...DEFAULT_DATA_SET, ...options.dataSet };
  for (const [k, v] of Object.entries(dataSet))
    if (!Number.isInteger(v) || v < 0 || v > 100_000)
      throw new RangeError(`dataSet.${k} must be an integer from 0 to 100000`);
  if (dataSet.collections < 1) throw new RangeError("dataSet.collections must be at least 1");
  const verifierRelease = options.verifierRelease ?? LATEST_VERIFIER_RELEASE;
  if (!VERIFIER_RELEASES.includes(verifierRelease))
    throw new RangeError(
      `verifierRelease must be one of ${VERIFIER_RELEASES.join(", ")}, got "${String(verifierRelease)}"`,
    );
  const verifierNamespaces = options.verifierNamespaces ?? "all";
  if (!VERIFIER_NAMESPACES.includes(verifierNamespaces))
    throw new RangeError(
      `verifierNamespaces must be one of ${VERIFIER_NAMESPACES.join(", ")}, got "${String(verifierNamespaces)}"`,
    );
  const checkFilterMatches = options.checkFilterMatches ?? "all";
  if (checkFilterMatches !== "all" && checkFilterMatches !== "none")
    throw new RangeError(`checkFilterMatches must be all or none, got "${String(checkFilterMatches)}"`);
  const verifierDdlHandling = options.verifierDdlHandling ?? "failAll";
  if (!VERIFIER_DDL_HANDLINGS.includes(verifierDdlHandling))
    throw new RangeError(
      `verifierDdlHandling must be one of ${VERIFIER_DDL_HANDLINGS.join(", ")}, got "${String(verifierDdlHandling)}"`,
    );
  const writeRate = options.writes?.rate ?? 1000;
  if (!Number.isFinite(writeRate) || writeRate < 0) throw new RangeError("writes.rate must be ≥ 0");

  const world = new SimWorld({
    instances: n,
    ids,
    clusters,
    totalBytes,
    timeScale: options.timeScale ?? 50,
    seed: options.seed ?? 1,
    serviceVersion,
    writes: { enabled: options.writes?.enabled ?? true, rate: writeRate },
    model,
    graceMs: options.graceMs ?? 2000,
    dataSet,
    validateStart: loadStartValidator(),
    verifierRelease,
    verifierNamespaces,
    checkFilterMatches,
    verifierDdlHandling,
  });
  const maxBody = options.maxBodyBytes ?? 2 ** 20;
  const servers = Array.from({ length: n }, (_, i) => new TargetServer(world, i, host, maxBody));
  const verifier = new TargetServer(world, "verifier", host, maxBody);
  const all = [...servers, verifier];
  try {
    for (const [i, s] of servers.entries()) await s.listen(port === 0 ? 0 : port + i);
    await verifier.listen(verifierPort);
  } catch (err) {
    world.close();
    await Promise.all(all.map((s) => s.close()));
    throw err;
  }
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const url = (p: number): string => `http://${urlHost}:${p}`;
  world.urls = servers.map((s) => url(s.port));
  world.verifierHost.url = url(verifier.port);
  world.setListening = (i, up) => servers[i]!.setUp(up);
  world.verifierHost.setRunning = (running, afterInFlight) =>
    running ? verifier.setUp(true) : verifier.exit(afterInFlight);
  // faults last: a `down` fault closes its instance's listener, which must be wired first
  try {
    for (const f of options.faults ?? []) world.addFault(f);
  } catch (err) {
    world.close();
    await Promise.all(all.map((s) => s.close()));
    throw err;
  }

  const control: SimControl = {
    state: () => world.state(),
    counts: () => world.counts(),
    resetCounts: () => world.resetCounts(),
    setWrites: (w) => world.setWrites(w),
    ddl: (o = {}) => world.ddl(o),
    now: () => world.clock.now(),
    setTimeScale: (x) => world.setTimeScale(x),
    advance: (s) => world.advance(s),
    addFault: (f) => world.addFault(f),
    removeFault: (id) => world.removeFault(id),
    clearFaults: () => world.clearFaults(),
    faults: () => world.faults(),
    down: (i) => world.down(i),
    up: (i) => world.up(i),
    liveUpgrade: (i) => world.liveUpgrade(i),
    restartVerifier: (o) => world.verifierHost.restart(o),
  };
  let closing: Promise<void> | undefined;
  return {
    instances: servers.map((s, i) => ({ index: i, id: ids[i]!, url: url(s.port), port: s.port })),
    verifierUrl: world.verifierHost.url,
    serviceVersion,
    control,
    close: () => {
      closing ??= (async () => {
        world.close();
        await Promise.all(all.map((s) => s.close()));
      })();
      return closing;
    },
  };
}
