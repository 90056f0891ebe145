/**
 * Connections to the clusters, with the official driver, loaded at run time (the CLI bundle keeps
 * `mongodb` outside: see docs/ARCHITECTURE.md and src/runtime-import.ts), so `syncbook lint`
 * never pays for it.
 *
 * Read-only by construction: the only way to reach a server is `run`, which refuses any command
 * not in READ_COMMANDS (and any aggregation stage that writes) before it is sent.
 * Secrets: a connection string never appears in an error of this module; every message passes
 * through the caller's redactor as well.
 */
import type * as Mongo from "mongodb";
import type { Document, MongoClient, MongoClientOptions } from "mongodb";
import { errorMessage } from "../errors.js";
import { formatDuration } from "../runbook/duration.js";
import { runtimeImport } from "../runtime-import.js";
import { raceAbort } from "../timers.js";

/** Every command preflight may send. None writes. */
export const READ_COMMANDS: ReadonlySet<string> = new Set([
  "hello",
  "buildInfo",
  "getParameter",
  "connectionStatus",
  "listDatabases",
  "listCollections",
  "listIndexes",
  "aggregate",
  "find",
  "getMore",
  "killCursors",
  "dbStats",
  "listShards",
  "balancerStatus",
]);

/** Aggregation stages preflight uses; anything else (notably $out, $merge) is refused. */
const READ_STAGES: ReadonlySet<string> = new Set(["$collStats", "$match", "$project", "$limit"]);

export type Runner = (db: string, cmd: Document) => Promise<Document>;

export interface ClusterConnection {
  name: string;
  run: Runner;
  close(): Promise<void>;
}

/** A failure to reach or log in to a cluster, said for an operator (the caller redacts it again). */
export class ConnectError extends Error {
  override readonly name = "ConnectError";
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** Refuse, before sending, anything that is not a read. */
export function assertReadOnly(cmd: Document): void {
  const name = Object.keys(cmd)[0] ?? "";
  if (!READ_COMMANDS.has(name)) throw new Error(`preflight refused to send \`${name}\`: not a read command`);
  if (name === "aggregate") {
    const pipeline: unknown = cmd.pipeline;
    const stages = Array.isArray(pipeline) ? (pipeline as Document[]) : [];
    for (const s of stages) {
      const stage = Object.keys(s)[0] ?? "";
      if (!READ_STAGES.has(stage)) throw new Error(`preflight refused to send an aggregation with \`${stage}\``);
    }
  }
}

type MongoModule = typeof Mongo;

/** The driver, loaded once per call site at run time (a CommonJS package: read the named export or `default`). */
async function loadDriver(): Promise<MongoModule["MongoClient"]> {
  const m = await runtimeImport<MongoModule & { default?: MongoModule }>("mongodb");
  return m.MongoClient ?? m.default?.MongoClient;
}

/** What an operator should check, by the driver's error. */
function explain(err: unknown, timeoutMs: number): { reason: string; hint: string } {
  const e = err as { name?: string; code?: number; codeName?: string; message?: string };
  const message = errorMessage(err);
  if (e.name === "MongoParseError" || e.name === "MongoInvalidArgumentError" || e.name === "MongoAPIError")
    return {
      reason: `the connection string is not valid (${message})`,
      hint: "Check the connection string in the environment variable the runbook names: `mongodb://` or `mongodb+srv://`, user and password percent-encoded.",
    };
  if (e.code === 18 || e.codeName === "AuthenticationFailed" || /auth/i.test(e.name ?? ""))
    return {
      reason: `authentication failed (${message})`,
      hint: "Check the user, the password and the authentication database (`authSource`) of the connection string.",
    };
  if (e.name === "ConnectionRefused")
    return {
      reason: message,
      hint: "Nothing listens at that host and port: check the port in the connection string and that the cluster is up.",
    };
  if (e.name === "MongoServerSelectionError" || e.name === "MongoNetworkError" || e.name === "MongoNetworkTimeoutError")
    return {
      reason: `no server answered within ${formatDuration(timeoutMs)} (${message})`,
      hint: "Check the hosts and ports, TLS options (`tls=true` for most managed clusters), and that this machine can reach them; a slow link needs --connect-timeout.",
    };
  return { reason: message, hint: "Check the connection string and that the cluster is up." };
}

/** Why a connection was refused by every host: nothing listens there, so waiting the timeout out says no more. */
class RefusedError extends Error {
  override readonly name = "ConnectionRefused";
}

const isRefused = (e: unknown): boolean => {
  const x = e as { message?: unknown; code?: unknown; cause?: unknown } | null | undefined;
  if (!x) return false;
  return x.code === "ECONNREFUSED" || /\bECONNREFUSED\b/.test(String(x.message)) || isRefused(x.cause);
};

/**
 * Rejects as soon as every host the driver knows has refused the connection (ECONNREFUSED), so a
 * cluster that is down (or a wrong port) fails in a moment, not after the whole connect timeout.
 * A host that does not answer at all (a firewall dropping packets) still waits the timeout.
 */
function everyHostRefused(client: MongoClient): { promise: Promise<never>; stop: () => void } {
  let listener: ((e: Mongo.TopologyDescriptionChangedEvent) => void) | undefined;
  const promise = new Promise<never>((_resolve, reject) => {
    listener = (e) => {
      const servers = [...e.newDescription.servers.values()];
      if (servers.length > 0 && servers.every((d) => d.type === "Unknown" && isRefused(d.error))) {
        const hosts = servers.map((d) => d.address).join(", ");
        reject(
          new RefusedError(`connection refused by ${servers.length === 1 ? "its host" : "every host"} (${hosts})`),
        );
      }
    };
    client.on("topologyDescriptionChanged", listener);
  });
  promise.catch(() => undefined);
  return { promise, stop: () => listener && client.off("topologyDescriptionChanged", listener) };
}

/** Connect to one cluster. Throws a ConnectError (never quoting the connection string). */
export async function connectCluster(
  name: string,
  uri: string,
  opts: { timeoutMs: number; signal?: AbortSignal; appName?: string },
): Promise<ClusterConnection> {
  const MongoClientCtor = await loadDriver();
  const options: MongoClientOptions = {
    appName: opts.appName ?? "syncbook-preflight",
    serverSelectionTimeoutMS: opts.timeoutMs,
    connectTimeoutMS: opts.timeoutMs,
    socketTimeoutMS: Math.max(60_000, opts.timeoutMs * 6),
    retryWrites: false,
    readPreference: "primary",
    maxPoolSize: 4,
  };
  let client: MongoClient;
  try {
    client = new MongoClientCtor(uri, options);
  } catch (err) {
    const { reason, hint } = explain(err, opts.timeoutMs);
    throw new ConnectError(`cannot connect to cluster \`${name}\`: ${reason}`, hint);
  }
  const close = async (): Promise<void> => {
    try {
      await client.close(true);
    } catch {
      // closing a client that never connected can fail; nothing is left open either way
    }
  };
  const onAbort = (): void => void close();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const refused = everyHostRefused(client);
  try {
    await raceAbort(Promise.race([client.connect(), refused.promise]), opts.signal);
  } catch (err) {
    opts.signal?.removeEventListener("abort", onAbort);
    await close();
    if (opts.signal?.aborted) throw err;
    const { reason, hint } = explain(err, opts.timeoutMs);
    throw new ConnectError(`cannot connect to cluster \`${name}\`: ${reason}`, hint);
  }
  refused.stop();
  const run: Runner = async (db, cmd) => {
    assertReadOnly(cmd);
    return raceAbort(client.db(db).command(cmd, { readPreference: "primary" }), opts.signal);
  };
  return {
    name,
    run,
    close: async () => {
      opts.signal?.removeEventListener("abort", onAbort);
      await close();
    },
  };
}

/**
 * The connection string of one shard's replica set, from the cluster's: the same user, options
 * and authentication database, the shard's hosts (`rs0/h1:27018,h2:27018` as listShards gives
 * them) and its replica set name. `mongodb+srv` becomes `mongodb` with TLS on, as SRV implies.
 */
export function shardUri(clusterUri: string, shardHost: string): string | undefined {
  const m = /^(mongodb(?:\+srv)?):\/\/(?:([^@/]*)@)?([^/?]*)(\/[^?]*)?(?:\?(.*))?$/.exec(clusterUri);
  if (!m) return undefined;
  const [, scheme, userinfo, , path, query] = m;
  const slash = shardHost.indexOf("/");
  const setName = slash >= 0 ? shardHost.slice(0, slash) : undefined;
  const hosts = slash >= 0 ? shardHost.slice(slash + 1) : shardHost;
  const params = new URLSearchParams(query ?? "");
  for (const k of ["replicaSet", "srvServiceName", "srvMaxHosts", "directConnection", "loadBalanced"]) params.delete(k);
  if (scheme === "mongodb+srv") {
    if (!params.has("tls") && !params.has("ssl")) params.set("tls", "true");
    if (!params.has("authSource")) params.set("authSource", "admin");
  }
  if (setName) params.set("replicaSet", setName);
  else params.set("directConnection", "true");
  const q = params.toString();
  return `mongodb://${userinfo !== undefined ? `${userinfo}@` : ""}${hosts}${path ?? "/"}${q ? `?${q}` : ""}`;
}
