/**
 * The facts of one cluster, read with read-only commands into plain data (types.ts). Every read
 * that fails is kept as a failure with its reason (a check that needs it then says it could not
 * run); only `hello` failing fails the cluster, since nothing else means anything without it.
 *
 * Commands, and what they give (reply shapes as the server documentation shows them):
 * hello (kind, set name, hosts, arbiters), buildInfo (version), getParameter
 * featureCompatibilityVersion, connectionStatus with showPrivileges (users, roles),
 * listDatabases (nameOnly), listCollections (type, options), listIndexes, aggregate $collStats
 * storageStats (count, size, per shard), find on local.oplog.rs (first and last `ts`), listShards,
 * balancerStatus, find on config.tags and config.collections, dbStats (fsUsedSize, fsTotalSize;
 * per shard in `raw` through mongos).
 */
import type { Document } from "mongodb";
import { errorMessage } from "../errors.js";
import type { Runner } from "./connect.js";
import { isInternalDatabase, SYSTEM_DATABASES } from "./selection.js";
import {
  readFailed,
  readOk,
  type AuthFacts,
  type ClusterFacts,
  type CollectionFacts,
  type DatabaseFacts,
  type DiskFacts,
  type HelloFacts,
  type IndexFacts,
  type OplogFacts,
  type Read,
  type ShardFacts,
  type ShardedCollectionFacts,
  type ZoneFacts,
} from "./types.js";

/** How many reads run at once on one cluster (the driver's pool is small on purpose). */
const CONCURRENCY = 4;
/** A cursor longer than this is not read further (preflight lists, it does not scan). */
const MAX_DOCS = 100_000;

export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** A failed command, said briefly: `not authorized (Unauthorized, code 13): …`. */
export function why(err: unknown): string {
  const e = err as { code?: number; codeName?: string };
  const what = e.code === 13 || e.codeName === "Unauthorized" ? "not authorized" : "failed";
  const tag = e.codeName ? ` (${e.codeName}${e.code !== undefined ? `, code ${e.code}` : ""})` : "";
  return `${what}${tag}: ${errorMessage(err)}`;
}

async function attempt<T>(what: string, fn: () => Promise<T>): Promise<Read<T>> {
  try {
    return readOk(await fn());
  } catch (err) {
    return readFailed(`${what} ${why(err)}`);
  }
}

const num = (v: unknown): number => {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (v && typeof v === "object" && "toNumber" in v && typeof v.toNumber === "function")
    return (v as { toNumber(): number }).toNumber();
  return Number(v ?? 0);
};

/** All documents of a cursor command (firstBatch, then getMore until the id is 0). */
export async function readCursor(run: Runner, db: string, cmd: Document): Promise<Document[]> {
  const first = await run(db, cmd);
  const cursor = first.cursor as { id: unknown; ns?: string; firstBatch?: Document[] } | undefined;
  const docs = [...(cursor?.firstBatch ?? [])];
  let id = cursor?.id;
  const coll = (cursor?.ns ?? "").split(".").slice(1).join(".");
  while (id !== undefined && num(id) !== 0 && docs.length < MAX_DOCS) {
    const more = await run(db, { getMore: id, collection: coll });
    const c = more.cursor as { id: unknown; nextBatch?: Document[] } | undefined;
    docs.push(...(c?.nextBatch ?? []));
    id = c?.id;
  }
  if (id !== undefined && num(id) !== 0) await run(db, { killCursors: coll, cursors: [id] }).catch(() => undefined);
  return docs;
}

export function helloFacts(doc: Document): HelloFacts {
  const kind = doc.msg === "isdbgrid" ? "sharded" : typeof doc.setName === "string" ? "replicaSet" : "standalone";
  const out: HelloFacts = {
    kind,
    hosts: Array.isArray(doc.hosts) ? (doc.hosts as string[]) : [],
    arbiters: Array.isArray(doc.arbiters) ? (doc.arbiters as string[]) : [],
  };
  if (typeof doc.setName === "string") out.setName = doc.setName;
  if (typeof doc.maxWireVersion === "number") out.maxWireVersion = doc.maxWireVersion;
  return out;
}

function authFacts(doc: Document): AuthFacts {
  const info = (doc.authInfo ?? {}) as Document;
  return {
    users: ((info.authenticatedUsers ?? []) as { user: string; db: string }[]).map((u) => ({ user: u.user, db: u.db })),
    roles: ((info.authenticatedUserRoles ?? []) as { role: string; db: string }[]).map((r) => ({
      role: r.role,
      db: r.db,
    })),
    privileges: ((info.authenticatedUserPrivileges ?? []) as { resource: Document; actions: string[] }[]).map((p) => ({
      resource: p.resource,
      actions: p.actions,
    })),
  };
}

const keyOf = (key: unknown): [string, number | string][] =>
  Object.entries((key ?? {}) as Record<string, unknown>).map(([f, v]) => [f, typeof v === "string" ? v : num(v)]);

const locale = (collation: unknown): string =>
  typeof (collation as { locale?: unknown } | undefined)?.locale === "string"
    ? (collation as { locale: string }).locale
    : "simple";

export function collectionFacts(doc: Document): CollectionFacts {
  const options = (doc.options ?? {}) as Document;
  return {
    name: String(doc.name),
    type: typeof doc.type === "string" ? doc.type : "collection",
    capped: options.capped === true,
    clusteredTtl: options.clusteredIndex !== undefined && options.expireAfterSeconds !== undefined,
    encrypted: options.encryptedFields !== undefined,
    collation: locale(options.collation),
  };
}

export function indexFacts(doc: Document): IndexFacts {
  return {
    name: String(doc.name),
    key: keyOf(doc.key),
    unique: doc.unique === true,
    sparse: doc.sparse === true,
    partial: doc.partialFilterExpression !== undefined,
    hidden: doc.hidden === true,
    collation: locale(doc.collation),
  };
}

/** Seconds of a BSON Timestamp (`t`), or of a Date. */
function seconds(ts: unknown): number | undefined {
  if (ts instanceof Date) return ts.getTime() / 1000;
  const t = ts as { t?: unknown; high?: unknown; getHighBits?: () => number } | undefined;
  if (typeof t?.t === "number") return t.t;
  if (typeof t?.getHighBits === "function") return t.getHighBits();
  return undefined;
}

/** First and last entry of a replica set's oplog. */
export async function readOplog(run: Runner, of: string): Promise<OplogFacts> {
  const one = async (dir: 1 | -1): Promise<number> => {
    const docs = await readCursor(run, "local", {
      find: "oplog.rs",
      filter: {},
      sort: { $natural: dir },
      limit: 1,
      projection: { ts: 1 },
      singleBatch: true,
    });
    const s = seconds(docs[0]?.ts);
    if (s === undefined) throw new Error("the oplog is empty");
    return s;
  };
  const [first, last] = await Promise.all([one(1), one(-1)]);
  return { of, first, last };
}

function diskFacts(doc: Document, fallback: string): DiskFacts[] {
  const one = (of: string, d: Document): DiskFacts | undefined =>
    d.fsTotalSize === undefined || d.fsUsedSize === undefined
      ? undefined
      : { of, totalBytes: num(d.fsTotalSize), usedBytes: num(d.fsUsedSize) };
  const raw = doc.raw as Record<string, Document> | undefined;
  const list = raw ? Object.entries(raw).map(([k, d]) => one(k.split("/")[0] ?? k, d)) : [one(fallback, doc)];
  if (list.some((d) => d === undefined)) throw new Error("dbStats reports no fsTotalSize / fsUsedSize");
  return list as DiskFacts[];
}

export interface ReadPlan {
  name: string;
  /** Read what the source checks need: oplog, indexes and sizes of the synced collections. */
  source: boolean;
  /** Read what the destination checks need: free disk. */
  destination: boolean;
  /** The collections to detail (indexes, sizes), once the namespaces are known (source only). */
  detail?: (databases: DatabaseFacts[]) => { database: string; collection: CollectionFacts }[];
  /** The oplog of one shard (a sharded source): the caller connects to the shard. */
  shardOplog?: (shard: ShardFacts) => Promise<OplogFacts>;
}

export async function readCluster(run: Runner, plan: ReadPlan): Promise<ClusterFacts> {
  const hello = helloFacts(await run("admin", { hello: 1 }));
  const sharded = hello.kind === "sharded";
  const [version, fcv, auth, names] = await Promise.all([
    attempt("buildInfo", async () => String((await run("admin", { buildInfo: 1 })).version)),
    attempt("getParameter", async () => {
      const d = await run("admin", { getParameter: 1, featureCompatibilityVersion: 1 });
      const f = d.featureCompatibilityVersion as { version?: string } | string | undefined;
      const v = typeof f === "string" ? f : f?.version;
      if (typeof v !== "string") throw new Error("no featureCompatibilityVersion in the answer");
      return v;
    }),
    attempt("connectionStatus", async () =>
      authFacts(await run("admin", { connectionStatus: 1, showPrivileges: true })),
    ),
    attempt("listDatabases", async () =>
      ((await run("admin", { listDatabases: 1, nameOnly: true })).databases as { name: string }[]).map((d) => d.name),
    ),
  ]);
  const facts: ClusterFacts = {
    name: plan.name,
    hello,
    version,
    fcv,
    auth,
    databases: names.ok ? readOk([]) : readFailed(names.why),
    internalDatabases: names.ok ? names.value.filter(isInternalDatabase) : [],
  };
  if (names.ok) {
    const user = names.value.filter((n) => !SYSTEM_DATABASES.has(n) && !isInternalDatabase(n));
    const dbs = await mapLimit(user, CONCURRENCY, async (name): Promise<DatabaseFacts> => ({
      name,
      collections: await attempt("listCollections", async () =>
        (await readCursor(run, name, { listCollections: 1, nameOnly: false })).map(collectionFacts),
      ),
    }));
    facts.databases = readOk(dbs);
  }

  if (sharded) {
    const [shards, balancer, zones, shardedCollections] = await Promise.all([
      attempt("listShards", async () =>
        ((await run("admin", { listShards: 1 })).shards as { _id: string; host: string }[]).map((s): ShardFacts => ({
          id: s._id,
          host: s.host,
        })),
      ),
      attempt("balancerStatus", async () => ({ mode: String((await run("admin", { balancerStatus: 1 })).mode) })),
      attempt("find config.tags", async () =>
        (await readCursor(run, "config", { find: "tags", filter: {}, projection: { ns: 1, tag: 1 } })).map(
          (z): ZoneFacts => ({ ns: String(z.ns), tag: String(z.tag) }),
        ),
      ),
      attempt("find config.collections", async () =>
        (
          await readCursor(run, "config", {
            find: "collections",
            filter: { dropped: { $ne: true } },
            projection: { _id: 1, key: 1, noBalance: 1 },
          })
        ).map((c): ShardedCollectionFacts => ({
          ns: String(c._id),
          key: keyOf(c.key),
          noBalance: c.noBalance === true,
        })),
      ),
    ]);
    Object.assign(facts, { shards, balancer, zones, shardedCollections });
  }

  if (plan.source && facts.databases.ok && plan.detail) {
    const list = plan.detail(facts.databases.value);
    await mapLimit(list, CONCURRENCY, async ({ database, collection }) => {
      if (collection.type === "view") return;
      collection.indexes = await attempt("listIndexes", async () =>
        (await readCursor(run, database, { listIndexes: collection.name })).map(indexFacts),
      );
      collection.stats = await attempt("$collStats", async () => {
        const docs = await readCursor(run, database, {
          aggregate: collection.name,
          pipeline: [{ $collStats: { storageStats: {} } }],
          cursor: {},
        });
        let documents = 0;
        let bytes = 0;
        const perShard: Record<string, number> = {};
        for (const d of docs) {
          const s = (d.storageStats ?? {}) as Document;
          documents += num(s.count);
          bytes += num(s.size);
          if (typeof d.shard === "string") perShard[d.shard] = (perShard[d.shard] ?? 0) + num(s.size);
        }
        return { documents, bytes, perShard };
      });
    });
  }

  if (plan.source) {
    if (hello.kind === "replicaSet")
      facts.oplog = await attempt("reading local.oplog.rs", async () => [
        await readOplog(run, hello.setName ?? plan.name),
      ]);
    else if (sharded) {
      if (!facts.shards?.ok)
        facts.oplog = readFailed(
          `the shards are unknown (${facts.shards?.ok === false ? facts.shards.why : "not read"})`,
        );
      else if (!plan.shardOplog)
        facts.oplog = readFailed("the oplog lives on each shard and `preflight.shardOplogs` is false");
      else {
        const shardOplog = plan.shardOplog;
        const each = await Promise.all(
          facts.shards.value.map(async (s) => {
            try {
              return readOk(await shardOplog(s));
            } catch (err) {
              return readFailed<OplogFacts>(`shard \`${s.id}\`: ${errorMessage(err)}`);
            }
          }),
        );
        const failed = each.filter((r) => !r.ok);
        facts.oplog = failed.length
          ? readFailed(failed.map((r) => (r.ok ? "" : r.why)).join("; "))
          : readOk(each.map((r) => (r.ok ? r.value : ({} as OplogFacts))));
      }
    }
  }

  if (plan.destination)
    facts.disk = await attempt("dbStats", async () =>
      diskFacts(await run("admin", { dbStats: 1, scale: 1 }), hello.setName ?? plan.name),
    );
  return facts;
}
