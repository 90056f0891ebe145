/**
 * `syncbook sim`: a simulated fleet of sync service instances and a verifier on loopback.
 * Prints one line per URL (`instance <i> <url>`, `verifier <url>`, then `control <url>`), runs
 * until SIGINT or SIGTERM, closes its servers and exits 0 (stopping the simulator is its normal
 * end, not an interruption).
 */
import { UserError, ExitCode } from "../errors.js";
import type { ClusterSetting, DataSet, SimulatorOptions, VerifierRelease } from "../sim/index.js";
import { lintCommand } from "../next-run.js";

export interface SimCliOptions {
  instances?: string;
  port?: string;
  verifierPort?: string;
  host?: string;
  source?: string;
  destination?: string;
  data?: string;
  timeScale?: string;
  fault?: string[];
  seed?: string;
  serviceVersion?: string;
  grace?: string;
  dataSet?: string;
  verifierRelease?: string;
  /** `all` (the verifier started with --verifyAll) or `none` (neither --verifyAll nor --srcNamespace). */
  verifierNamespaces?: string;
  /** `all` or `none`: whether the simulated documents match a check's filter. */
  checkFilterMatches?: string;
  /** `failAll` (the verifier's default: source DDL makes it exit) or `warnMost` (most are counted and skipped). */
  verifierDdlHandling?: string;
  /** Take the fleet's shape (instances, clusters, shard counts, service version) from this runbook. */
  runbook?: string;
}

export interface SimCliIo {
  out?: (line: string) => void;
  /** Stops the simulator (besides SIGINT/SIGTERM); tests use it. */
  signal?: AbortSignal;
}

const usage = (message: string, hint?: string): UserError => new UserError(message, { hint, exitCode: ExitCode.usage });

function int(name: string, v: string | undefined, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < min || n > max)
    throw usage(`${name} must be an integer from ${min} to ${max}, got "${v}"`);
  return n;
}

/** `cluster0:replicaSet` → ["cluster0", { topology: "replicaSet" }]. */
export function parseClusterArg(flag: string, v: string): [string, ClusterSetting] {
  const m = /^([A-Za-z0-9_.-]+):(replicaSet|rs|replset|sharded)$/i.exec(v.trim());
  if (!m)
    throw usage(`${flag} must be <cluster name>:<replicaSet|sharded>, got "${v}"`, `e.g. ${flag} cluster0:replicaSet`);
  return [m[1]!, { topology: m[2]!.toLowerCase() === "sharded" ? "sharded" : "replicaSet" }];
}

/** `collections=12,unique=2,ttl=1,hidden=1` (any of them) → a partial data set. */
export function parseDataSet(v: string): Partial<DataSet> {
  const out: Partial<DataSet> = {};
  const keys = ["collections", "unique", "ttl", "hidden"] as const;
  for (const part of v.split(",")) {
    const m = /^\s*([a-z]+)\s*=\s*(\d{1,6})\s*$/.exec(part);
    const key = m ? keys.find((k) => k === m[1]) : undefined;
    if (!m || !key)
      throw usage(
        `--data-set must be a list of ${keys.map((k) => `${k}=N`).join(",")}, got "${v}"`,
        "e.g. --data-set collections=20,unique=3,ttl=0,hidden=0",
      );
    out[key] = Number(m[2]);
  }
  return out;
}

/** `--time-scale`: simulated seconds per wall second; `frozen` allows 0 (a clock moved by /sim/clock only). */
export function parseTimeScale(v: string, opts: { frozen: boolean }): number {
  const x = Number(v);
  const min = opts.frozen ? 0 : Number.MIN_VALUE;
  if (v.trim() === "" || !Number.isFinite(x) || x < min || x > 1_000_000)
    throw usage(
      `--time-scale must be a number ${opts.frozen ? "from 0" : "above 0"} to 1000000, got "${v}"`,
      opts.frozen
        ? "Simulated seconds per wall second: 1 is real time, 50 the default; 0 freezes the clock (move it with POST /sim/clock)."
        : "Simulated seconds per wall second: 1 is real time, 50 the default. A rehearsal needs a clock that moves.",
    );
  return x;
}

/** `--data`: bytes of data to copy (`5GiB`, `500MB`, a number of bytes). */
export async function parseDataArg(v: string): Promise<number> {
  const { parseBytes } = await import("../sim/index.js");
  try {
    return parseBytes(v);
  } catch (err) {
    throw usage(`--data: ${(err as Error).message}`, "A size such as 5GiB, 500MB or 1048576 (bytes).");
  }
}

/** `--fault`: each spec parsed now, so a typo is a usage error before anything starts. */
export async function parseFaultArgs(list: readonly string[]): Promise<string[]> {
  const { parseFault } = await import("../sim/index.js");
  for (const f of list) {
    try {
      parseFault(f);
    } catch (err) {
      throw usage(
        `--fault: ${(err as Error).message}`,
        "faults: kind[=value][,after=DUR][,for=DUR][,on=COMMAND][@scope[/endpoint]], e.g. http500=0.2@1/progress",
      );
    }
  }
  return [...list];
}

/** `--seed`: the fault PRNG's seed. */
export function parseSeed(v: string | undefined): number | undefined {
  return v === undefined ? undefined : int("--seed", v, 1, 0, 2 ** 32 - 1);
}

/**
 * `--runbook`: the fleet as the runbook draws it, read as a rehearsal reads it (src/rehearse's
 * `simulatedShape`, the one reading): its instance count, clusters (topology, shards, server
 * version) and service version, in place of `--instances`, `--source`, `--destination` and
 * `--service-version`.
 */
async function runbookShape(file: string): Promise<{
  file: string;
  instances: number;
  clusters?: Record<string, ClusterSetting>;
  serviceVersion?: string;
  shape: string[];
}> {
  const { loadRunbook } = await import("../runbook/index.js");
  // the shape needs no secret: ${env.*} stays as written, as lint reads it
  const loaded = await loadRunbook(file, { env: "lint" }).catch((err: unknown) => {
    throw usage(`--runbook ${file}: ${(err as Error).message}`, "Pass the path of a runbook (YAML).");
  });
  const rb = loaded.runbook;
  if (!rb)
    throw usage(`--runbook ${file} does not load, so its fleet's shape is not known`, `Run ${lintCommand(file)}.`);
  const { simulatedShape } = await import("../rehearse/index.js");
  const { clusters, shape } = simulatedShape(rb);
  return {
    file,
    instances: rb.instances.length,
    ...(clusters ? { clusters } : {}),
    ...(rb.serviceVersion !== undefined ? { serviceVersion: rb.serviceVersion } : {}),
    shape,
  };
}

export async function main(opts: SimCliOptions, io: SimCliIo = {}): Promise<number> {
  const out = io.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const { startSimulator, VERIFIER_RELEASES } = await import("../sim/index.js");
  const fromRunbook = opts.runbook !== undefined ? await runbookShape(opts.runbook) : undefined;
  const instances = fromRunbook?.instances ?? int("--instances", opts.instances, 1, 1, 4096);
  const port = int("--port", opts.port, 27182, 0, 65535);
  const verifierPort = int("--verifier-port", opts.verifierPort, 27020, 0, 65535);
  const [srcName, src] = parseClusterArg("--source", opts.source ?? "cluster0:replicaSet");
  const [dstName, dst] = parseClusterArg("--destination", opts.destination ?? "cluster1:sharded");
  if (srcName === dstName) throw usage(`--source and --destination name the same cluster "${srcName}"`);
  // each cluster its own loopback "host", as the flags' two get
  const clusters: Record<string, ClusterSetting> = fromRunbook?.clusters
    ? Object.fromEntries(
        Object.entries(fromRunbook.clusters).map(([name, c], i) => [name, { ...c, host: `127.0.0.1:${27017 + i}` }]),
      )
    : { [srcName]: { ...src, host: "127.0.0.1:27017" }, [dstName]: { ...dst, host: "127.0.0.1:27018" } };
  const options: SimulatorOptions = {
    instances,
    port,
    verifierPort,
    host: opts.host ?? "127.0.0.1",
    clusters,
    seed: parseSeed(opts.seed) ?? 1,
    graceMs: int("--grace", opts.grace, 2000, 0, 3_600_000),
  };
  if (opts.dataSet !== undefined) options.dataSet = parseDataSet(opts.dataSet);
  if (fromRunbook?.serviceVersion !== undefined) options.serviceVersion = fromRunbook.serviceVersion;
  else if (opts.serviceVersion !== undefined) {
    if (!/^\d+\.\d+(\.\d+)?$/.test(opts.serviceVersion))
      throw usage(`--service-version must look like 1.8.0, got "${opts.serviceVersion}"`);
    options.serviceVersion = opts.serviceVersion;
  }
  if (opts.verifierRelease !== undefined) {
    if (!(VERIFIER_RELEASES as readonly string[]).includes(opts.verifierRelease))
      throw usage(
        `--verifier-release must be one of ${VERIFIER_RELEASES.join(", ")}, got "${opts.verifierRelease}"`,
        "v0.2.0 stands for the releases v0.1.6 to v0.2.0 (progress answers an empty HTTP 500 until the first check).",
      );
    options.verifierRelease = opts.verifierRelease as VerifierRelease;
  }
  if (opts.verifierNamespaces !== undefined) {
    if (opts.verifierNamespaces !== "all" && opts.verifierNamespaces !== "none")
      throw usage(
        `--verifier-namespaces must be all or none, got "${opts.verifierNamespaces}"`,
        "none: the verifier started without --verifyAll or --srcNamespace (its generation 0 has no task).",
      );
    options.verifierNamespaces = opts.verifierNamespaces;
  }
  if (opts.checkFilterMatches !== undefined) {
    if (opts.checkFilterMatches !== "all" && opts.checkFilterMatches !== "none")
      throw usage(`--check-filter-matches must be all or none, got "${opts.checkFilterMatches}"`);
    options.checkFilterMatches = opts.checkFilterMatches;
  }
  if (opts.verifierDdlHandling !== undefined) {
    if (opts.verifierDdlHandling !== "failAll" && opts.verifierDdlHandling !== "warnMost")
      throw usage(
        `--verifier-ddl-handling must be failAll or warnMost, got "${opts.verifierDdlHandling}"`,
        "the verifier's --ddlHandling: failAll (source DDL during a verification makes it exit) or warnMost (most DDL is counted and skipped).",
      );
    options.verifierDdlHandling = opts.verifierDdlHandling;
  }
  if (opts.data !== undefined) options.data = await parseDataArg(opts.data);
  if (opts.timeScale !== undefined) options.timeScale = parseTimeScale(opts.timeScale, { frozen: true });
  options.faults = await parseFaultArgs(opts.fault ?? []);

  let sim;
  try {
    sim = await startSimulator(options);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "EADDRINUSE" || e.code === "EACCES") {
      throw new UserError(`cannot listen on ${options.host}: ${e.message}`, {
        hint: "use --port 0 --verifier-port 0 to pick free ports",
        exitCode: ExitCode.failed,
      });
    }
    if (err instanceof RangeError) throw usage(err.message);
    throw err;
  }
  // what it simulates first: a runbook that does not match shows up here, not later as odd warnings
  const cluster = (name: string, c: ClusterSetting): string =>
    `${name} (${c.topology === "sharded" ? `sharded, ${c.shards ?? 2} shards` : "replica set"}, server ${c.version ?? "7.0"})`;
  out(
    `simulator: service ${sim.serviceVersion}, ${instances} instance${instances === 1 ? "" : "s"}, ${
      fromRunbook
        ? `${Object.entries(clusters)
            .map(([n, c]) => cluster(n, c))
            .join(", ")} (the shape of ${fromRunbook.file})`
        : `${cluster(srcName, src)} → ${cluster(dstName, dst)}`
    }`,
  );
  // where the runbook does not say, what the simulator took: said, never silently a default
  for (const note of fromRunbook?.shape ?? []) out(`shape: ${note}`);
  for (const inst of sim.instances) out(`instance ${inst.index} ${inst.url}`);
  out(`verifier ${sim.verifierUrl}`);
  out(
    `control ${sim.instances[0]!.url}/sim  (GET /sim/state, POST /sim/writes {"enabled":false}, POST /sim/faults {"spec":"http500=0.2"}; on every port)`,
  );
  for (const f of sim.control.faults()) out(`fault ${f.id} ${f.text}`);

  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      io.signal?.removeEventListener("abort", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    if (io.signal?.aborted) stop();
    else io.signal?.addEventListener("abort", stop);
  });
  await sim.close();
  return ExitCode.ok;
}
