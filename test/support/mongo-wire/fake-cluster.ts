/**
 * A cluster made of fixture data, answered over the wire (server.ts): a replica set member, a
 * mongos, or a standalone, with users (SCRAM-SHA-256), databases, collections, indexes, sizes,
 * an oplog, shards, a balancer, zones and disk. Replies are shaped as the server documentation's
 * examples show them (hello, buildInfo, getParameter, connectionStatus with showPrivileges,
 * listDatabases, listCollections, listIndexes, $collStats, find on local.oplog.rs and config.*,
 * dbStats, listShards, balancerStatus). `fail` makes a command answer an error (e.g. code 13,
 * Unauthorized) to test checks that cannot run.
 */
import { Binary, Timestamp, type Document } from "mongodb";
import { scramFinish, scramStart, type ScramState, type ScramUser } from "./scram.js";
import { startWireServer, type ConnectionState, type WireServer } from "./server.js";

export interface FakeIndex {
  name: string;
  key: Document;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Document;
  collation?: Document;
}

export interface FakeCollection {
  type?: "collection" | "view" | "timeseries";
  options?: Document;
  /** Besides `_id_`. */
  indexes?: FakeIndex[];
  count?: number;
  size?: number;
}

export interface FakeUser extends ScramUser {
  roles: { role: string; db: string }[];
}

export interface FakeNode {
  kind: "replicaSet" | "mongos" | "standalone";
  setName?: string;
  /** Default 7.0.20. */
  version?: string;
  /** Default: the version's major.minor. */
  fcv?: string;
  /** Absent: authorization disabled. */
  users?: FakeUser[];
  databases?: Record<string, Record<string, FakeCollection>>;
  /** Seconds since the epoch of the first and last oplog entries (replica sets). */
  oplog?: { first: number; last: number };
  /** mongos: `{ id, host: "rs/127.0.0.1:port" }`. */
  shards?: { id: string; host: string }[];
  balancer?: string;
  tags?: { ns: string; tag: string }[];
  shardedCollections?: { ns: string; key: Document; noBalance?: boolean }[];
  /** Bytes of the filesystem holding the data (per shard through mongos). */
  disk?: { total: number; used: number };
  /** Answer these commands with an error. */
  fail?: Record<string, { code: number; codeName: string; errmsg?: string }>;
}

export interface FakeCluster extends WireServer {
  node: FakeNode;
  /** A connection string to this server, with credentials if given. */
  uri(auth?: { user: string; password: string }, params?: Record<string, string>): string;
}

const WIRE: Record<string, number> = { "4.4": 9, "5.0": 13, "6.0": 17, "7.0": 21, "8.0": 25 };
const NO_AUTH = new Set(["hello", "isMaster", "ismaster", "saslStart", "saslContinue", "ping", "endSessions"]);

const cursor = (ns: string, firstBatch: Document[]): Document => ({ cursor: { id: 0, ns, firstBatch }, ok: 1 });
const error = (code: number, codeName: string, errmsg: string): Document => ({ ok: 0, code, codeName, errmsg });

function allIndexes(c: FakeCollection): Document[] {
  if (c.type === "view") return [];
  return [{ v: 2, key: { _id: 1 }, name: "_id_" }, ...(c.indexes ?? []).map((i) => ({ v: 2, ...i }))];
}

export async function startFakeCluster(node: FakeNode): Promise<FakeCluster> {
  let address = "";
  const version = node.version ?? "7.0.20";
  const mm = version.split(".").slice(0, 2).join(".");
  const dbs = node.databases ?? {};

  const hello = (cmd: Document): Document => {
    const base: Document = {
      helloOk: true,
      isWritablePrimary: true,
      ismaster: true,
      maxBsonObjectSize: 16 * 1024 * 1024,
      maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000,
      localTime: new Date(),
      logicalSessionTimeoutMinutes: 30,
      connectionId: 1,
      minWireVersion: 0,
      maxWireVersion: WIRE[mm] ?? 21,
      readOnly: false,
      ok: 1,
    };
    if (node.kind === "replicaSet")
      Object.assign(base, {
        setName: node.setName ?? "rs0",
        setVersion: 1,
        hosts: [address],
        primary: address,
        me: address,
        secondary: false,
      });
    if (node.kind === "mongos") base.msg = "isdbgrid";
    if (node.users && typeof cmd.saslSupportedMechs === "string") base.saslSupportedMechs = ["SCRAM-SHA-256"];
    return base;
  };

  const handler = (cmd: Document, conn: ConnectionState): Document => {
    const name = Object.keys(cmd)[0] ?? "";
    const db = String(cmd.$db ?? "admin");
    const fail = node.fail?.[name];
    if (fail) return error(fail.code, fail.codeName, fail.errmsg ?? `${name} failed`);
    if (node.users && !conn.user && !NO_AUTH.has(name))
      return error(13, "Unauthorized", `Command ${name} requires authentication`);
    switch (name) {
      case "hello":
      case "isMaster":
      case "ismaster":
        return hello(cmd);
      case "saslStart": {
        if (cmd.mechanism !== "SCRAM-SHA-256") return error(2, "BadValue", "mechanism unavailable");
        const r = scramStart(node.users ?? [], Buffer.from((cmd.payload as Binary).buffer).toString("utf8"));
        if ("error" in r) return error(18, "AuthenticationFailed", r.error);
        conn.sasl = r.state;
        return { conversationId: 1, done: false, payload: new Binary(Buffer.from(r.reply)), ok: 1 };
      }
      case "saslContinue": {
        const state = conn.sasl as ScramState | undefined;
        if (!state) return error(17, "ProtocolError", "no SASL session state found");
        const r = scramFinish(state, Buffer.from((cmd.payload as Binary).buffer).toString("utf8"));
        if ("error" in r) return error(18, "AuthenticationFailed", r.error);
        conn.user = state.user.user;
        conn.sasl = undefined;
        return { conversationId: 1, done: true, payload: new Binary(Buffer.from(r.reply)), ok: 1 };
      }
      case "ping":
      case "endSessions":
        return { ok: 1 };
      case "buildInfo":
      case "buildinfo":
        return { version, versionArray: [...version.split(".").map(Number), 0], ok: 1 };
      case "getParameter":
        return { featureCompatibilityVersion: { version: node.fcv ?? mm }, ok: 1 };
      case "connectionStatus": {
        const user = node.users?.find((u) => u.user === conn.user);
        return {
          authInfo: {
            authenticatedUsers: user ? [{ user: user.user, db: "admin" }] : [],
            authenticatedUserRoles: user ? user.roles : [],
            authenticatedUserPrivileges: [],
          },
          ok: 1,
        };
      }
      case "listDatabases":
        return {
          databases: ["admin", "config", "local", ...Object.keys(dbs)].map((n) => ({
            name: n,
            sizeOnDisk: 4096,
            empty: false,
          })),
          totalSize: 4096,
          ok: 1,
        };
      case "listCollections": {
        const colls = dbs[db] ?? {};
        return cursor(
          `${db}.$cmd.listCollections`,
          Object.entries(colls).map(([n, c]) => ({
            name: n,
            type: c.type ?? "collection",
            options: c.options ?? {},
            info: { readOnly: c.type === "view" },
          })),
        );
      }
      case "listIndexes": {
        const c = dbs[db]?.[String(cmd.listIndexes)];
        if (!c) return error(26, "NamespaceNotFound", `ns does not exist: ${db}.${String(cmd.listIndexes)}`);
        return cursor(`${db}.${String(cmd.listIndexes)}`, allIndexes(c));
      }
      case "aggregate": {
        const coll = String(cmd.aggregate);
        const c = dbs[db]?.[coll];
        const stage = (cmd.pipeline as Document[])[0] ?? {};
        if (!("$collStats" in stage)) return error(40324, "Location40324", "unsupported stage in this test server");
        if (!c) return cursor(`${db}.${coll}`, []);
        const stats = (size: number, count: number, shard?: string): Document => ({
          ns: `${db}.${coll}`,
          ...(shard ? { shard } : {}),
          host: address,
          localTime: new Date(),
          storageStats: { size, count, storageSize: Math.round(size / 3), nindexes: allIndexes(c).length },
        });
        const size = c.size ?? 0;
        const count = c.count ?? 0;
        const shards = node.kind === "mongos" ? (node.shards ?? []) : [];
        return cursor(
          `${db}.${coll}`,
          shards.length
            ? shards.map((s, i) =>
                stats(
                  Math.floor(size / shards.length) + (i === 0 ? size % shards.length : 0),
                  Math.floor(count / shards.length) + (i === 0 ? count % shards.length : 0),
                  s.id,
                ),
              )
            : [stats(size, count)],
        );
      }
      case "find": {
        const coll = String(cmd.find);
        if (db === "local" && coll === "oplog.rs") {
          if (!node.oplog) return cursor("local.oplog.rs", []);
          const dir = (cmd.sort as Document | undefined)?.$natural === -1 ? -1 : 1;
          const t = dir === 1 ? node.oplog.first : node.oplog.last;
          return cursor("local.oplog.rs", [{ ts: new Timestamp({ t, i: 1 }) }]);
        }
        if (db === "config" && coll === "tags")
          return cursor(
            "config.tags",
            (node.tags ?? []).map((t) => ({ _id: { ns: t.ns, min: {} }, ns: t.ns, tag: t.tag, min: {}, max: {} })),
          );
        if (db === "config" && coll === "collections")
          return cursor(
            "config.collections",
            (node.shardedCollections ?? []).map((c) => ({
              _id: c.ns,
              key: c.key,
              unique: false,
              ...(c.noBalance ? { noBalance: true } : {}),
            })),
          );
        return cursor(`${db}.${coll}`, []);
      }
      case "getMore":
        return { cursor: { id: 0, ns: `${db}.${String(cmd.collection)}`, nextBatch: [] }, ok: 1 };
      case "killCursors":
        return { cursorsKilled: [], cursorsNotFound: [], ok: 1 };
      case "dbStats": {
        const fs = node.disk ?? { total: 1e12, used: 1e11 };
        const one = { db, collections: 0, dataSize: 0, fsUsedSize: fs.used, fsTotalSize: fs.total, ok: 1 };
        if (node.kind !== "mongos") return one;
        const shards = node.shards ?? [];
        return {
          raw: Object.fromEntries(
            shards.map((s) => [
              s.host,
              { ...one, fsUsedSize: fs.used / shards.length, fsTotalSize: fs.total / shards.length },
            ]),
          ),
          ok: 1,
        };
      }
      case "listShards":
        if (node.kind !== "mongos") return error(59, "CommandNotFound", "no such cmd: listShards");
        return { shards: (node.shards ?? []).map((s) => ({ _id: s.id, host: s.host, state: 1 })), ok: 1 };
      case "balancerStatus":
        if (node.kind !== "mongos") return error(59, "CommandNotFound", "no such cmd: balancerStatus");
        return { mode: node.balancer ?? "off", inBalancerRound: false, numBalancerRounds: 0, ok: 1 };
      default:
        return error(59, "CommandNotFound", `no such command: '${name}'`);
    }
  };

  const server = await startWireServer(handler);
  address = server.address;
  return {
    ...server,
    node,
    uri(auth, params = {}) {
      const q = new URLSearchParams(params);
      if (node.kind === "replicaSet" && !q.has("replicaSet")) q.set("replicaSet", node.setName ?? "rs0");
      const userinfo = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.password)}@` : "";
      return `mongodb://${userinfo}${server.address}/?${q.toString()}`;
    },
  };
}

/** A sharded cluster: shard replica sets (each its own server), then a mongos that lists them. */
export async function startShardedCluster(
  mongos: Omit<FakeNode, "kind" | "shards">,
  shards: { id: string; node: Omit<FakeNode, "kind" | "setName"> }[],
): Promise<{ mongos: FakeCluster; shards: FakeCluster[]; close(): Promise<void> }> {
  const started = await Promise.all(
    shards.map((s) =>
      startFakeCluster({ ...s.node, kind: "replicaSet", setName: s.id, users: s.node.users ?? mongos.users }),
    ),
  );
  const router = await startFakeCluster({
    ...mongos,
    kind: "mongos",
    shards: started.map((s, i) => ({ id: shards[i]!.id, host: `${shards[i]!.id}/${s.address}` })),
  });
  return {
    mongos: router,
    shards: started,
    close: async () => {
      await Promise.all([router.close(), ...started.map((s) => s.close())]);
    },
  };
}
