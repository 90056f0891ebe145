/**
 * What preflight reads of a cluster, as plain data: the check functions see only this, so they
 * are tested without a server, and the driver-reading layer (read.ts) is tested apart against
 * the wire-level test server.
 *
 * Every read that can fail is a `Read<T>`: a failure (missing privilege, a command the server
 * lacks) is kept with its reason, so a check that needs it says it could not run instead of
 * silently passing.
 */
export type Read<T> = { ok: true; value: T } | { ok: false; why: string };

export const readOk = <T>(value: T): Read<T> => ({ ok: true, value });
export const readFailed = <T>(why: string): Read<T> => ({ ok: false, why });

/** `hello`: what kind of deployment answered. */
export interface HelloFacts {
  kind: "replicaSet" | "sharded" | "standalone";
  /** Replica set name (replica sets only). */
  setName?: string;
  hosts: string[];
  arbiters: string[];
  maxWireVersion?: number;
}

export interface AuthFacts {
  users: { user: string; db: string }[];
  roles: { role: string; db: string }[];
  /** Cluster-wide and database actions the users hold (from `showPrivileges`). */
  privileges: { resource: Record<string, unknown>; actions: string[] }[];
}

export interface IndexFacts {
  name: string;
  /** The key pattern in order: `[["customerId", 1], ["_id", "hashed"]]`. */
  key: [string, number | string][];
  unique: boolean;
  sparse: boolean;
  partial: boolean;
  hidden: boolean;
  /** Collation locale of the index (`simple` when none is set). */
  collation: string;
}

export interface CollectionFacts {
  name: string;
  /** `collection`, `view`, `timeseries` (as listCollections says). */
  type: string;
  capped: boolean;
  /** Clustered collection with `expireAfterSeconds` (a TTL on the clustered index). */
  clusteredTtl: boolean;
  /** Queryable Encryption (`encryptedFields` in the options). */
  encrypted: boolean;
  /** Default collation locale of the collection (`simple` when none). */
  collation: string;
  /** Read for synced source collections only. */
  indexes?: Read<IndexFacts[]>;
  /** Documents and logical (uncompressed) bytes, summed over shards; per shard when sharded. */
  stats?: Read<{ documents: number; bytes: number; perShard: Record<string, number> }>;
}

export interface DatabaseFacts {
  name: string;
  collections: Read<CollectionFacts[]>;
}

export interface ShardFacts {
  id: string;
  /** `rs0/host1:27018,host2:27018` as listShards gives it. */
  host: string;
}

/** The oplog of one replica set: its first and last entry, in seconds since the epoch. */
export interface OplogFacts {
  /** Replica set name, or the shard id. */
  of: string;
  first: number;
  last: number;
}

/** Free disk where one mongod keeps its data (dbStats `fsTotalSize` − `fsUsedSize`). */
export interface DiskFacts {
  of: string;
  totalBytes: number;
  usedBytes: number;
}

export interface ShardedCollectionFacts {
  ns: string;
  key: [string, number | string][];
  noBalance: boolean;
}

export interface ZoneFacts {
  ns: string;
  tag: string;
}

/** Everything read from one cluster of the runbook. */
export interface ClusterFacts {
  /** The cluster's name in the runbook (`cluster0`). */
  name: string;
  hello: HelloFacts;
  version: Read<string>;
  fcv: Read<string>;
  auth: Read<AuthFacts>;
  /** User databases (not admin, local, config), with their collections where listed. */
  databases: Read<DatabaseFacts[]>;
  /** Databases of the service's own state (`__mdb_internal_mongosync…`), seen on this cluster. */
  internalDatabases: string[];
  /** Sharded clusters only. */
  shards?: Read<ShardFacts[]>;
  balancer?: Read<{ mode: string }>;
  zones?: Read<ZoneFacts[]>;
  shardedCollections?: Read<ShardedCollectionFacts[]>;
  /** Source only: one entry per replica set (the cluster, or each shard). */
  oplog?: Read<OplogFacts[]>;
  /** Destination only: one entry per mongod that dbStats reports. */
  disk?: Read<DiskFacts[]>;
}

/** One synced namespace, as `--list-namespaces` prints it. */
export interface NamespaceEntry {
  database: string;
  collection: string;
  type: string;
  /** Documents, when read (null when it could not be). */
  documents: number | null;
  /** Logical (uncompressed) bytes, when read. */
  bytes: number | null;
  /** The shard key this runbook gives it on the destination, or the source's own, or null. */
  shardKey: Record<string, number | string>[] | null;
}
