/**
 * The preflight checks: id, severity, what each finds, the documented rule it enforces and where
 * that rule is written. Ids are stable (CI budgets and reviews quote them); one severity per id,
 * as in lint. `preflight-not-checked` is how any check says it could not run.
 */
import type { RuleInfo } from "../diagnostics.js";

/** A check is an entry of the one rule catalogue's shape (`RuleInfo`): `spec` is the documentation's rule, in its words or close to them. */
export type PreflightCheckInfo = RuleInfo;

const DOCS = "https://www.mongodb.com/docs/cluster-to-cluster-sync/current/reference";

export const PREFLIGHT_CHECKS = Object.freeze([
  {
    id: "preflight-connect",
    severity: "error",
    description: "A cluster could not be reached or the user could not log in.",
    spec: "The service is configured with two cluster settings, each with a connection string; the user in those connection strings must hold the required permissions on both clusters.",
    source: "sync-service-api.md",
    ref: "spec/sync-service-api.md (What the service does)",
    hint: "Check the host, port, TLS options and credentials of the connection string (from the environment variable the runbook names), and that this machine can reach the cluster.",
  },
  {
    id: "preflight-not-checked",
    severity: "warning",
    description:
      "A check could not run: something it needs could not be read (a privilege, a command, a cluster without `uri`).",
    spec: "mongosync does not check for compliance with the documented limitations, and doesn't validate that the clusters or the environment are properly configured.",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/`,
    hint: "Grant the connecting user the roles the service itself needs (see preflight-privileges), or check this by hand before the window.",
  },
  {
    id: "preflight-cluster",
    severity: "info",
    description: "What preflight read of a cluster: topology, version, size, oplog window.",
    spec: "Checks run against the real clusters, before the window, so the runbook's premises are the clusters' facts.",
    source: "DESIGN.md",
    hint: "Nothing to do: this records what was checked.",
  },
  {
    id: "preflight-topology",
    severity: "error",
    description:
      "The cluster is not the topology `clusters:` declares (replica set, sharded through mongos), or is a standalone server.",
    spec: "Each cluster can be a replica set or a sharded cluster; mongosync doesn't support sync from a sharded cluster to a replica set.",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/#sharded-clusters`,
    hint: "Correct `topology` under `clusters:` (lint judges sharding and reversibility on it), or point `uri` at the right cluster: a mongos for a sharded cluster.",
  },
  {
    id: "preflight-shard-count",
    severity: "error",
    description: "The number of shards differs from `clusters.<name>.shards`.",
    spec: "A sharded source runs one instance per source shard; reversible needs equal shard counts; shards cannot be added or removed while syncing.",
    source: "service-facts.md",
    ref: "spec/service-facts.md (Multiple instances); limitations (Sharded Clusters)",
    hint: "Correct `shards` under `clusters:` and the number of `instances` (one per source shard).",
  },
  {
    id: "preflight-server-version",
    severity: "error",
    description:
      "A server version the service version does not support: a rapid release, below the minimum patch, or a source/destination pair it cannot sync.",
    spec: "Supported source versions, minimum patch versions and source → destination pairs, by mongosync version; rapid and minor releases (6.1, 8.1, 8.2) aren't supported; write blocking needs a 6.0+ source.",
    source: "service-facts.md",
    docs: `${DOCS}/supported-server-version/`,
    hint: "Upgrade the cluster to a supported patch release, or use a service version that supports this pair.",
  },
  {
    id: "preflight-declared-version",
    severity: "error",
    description: "The runbook's `serverVersion` is not the version the cluster runs.",
    spec: "serverVersion: server version of the cluster; lint gates features (write blocking, reversibility) on it.",
    source: "runbook.schema.json",
    ref: "schemas/runbook.schema.json (clusters.<name>.serverVersion)",
    hint: "Set `serverVersion` under `clusters:` to the version the cluster runs, so lint judges the runbook on the truth.",
  },
  {
    id: "preflight-fcv",
    severity: "error",
    description: "The feature compatibility version is below the documented minimum for the server version.",
    spec: "Minimum feature compatibility version: 4.4 → 4.4, 5.0 → 5.0, 6.0 → 6.0, 7.0 → 6.0, 8.0 → 8.0.",
    source: "service-facts.md",
    docs: `${DOCS}/supported-server-version/`,
    hint: "Raise it with `setFeatureCompatibilityVersion` (admin command) once the deployment is known good on this version.",
  },
  {
    id: "preflight-namespace-missing",
    severity: "error",
    description:
      "A database or collection named in includeNamespaces, excludeNamespaces or sharding does not exist on the source.",
    spec: "includeNamespaces: only the listed databases or collections are synced; shardingEntries: collections to shard on the destination. A name that matches nothing is a typo: the sync would copy something else than intended.",
    source: "sync-service-api.md",
    ref: "spec/sync-service-api.md (Start request body, sharding object)",
    hint: "Correct the name (check its case), or create the collection before start: one created later by a database-level filter is picked up, a named one is not reconsidered.",
  },
  {
    id: "preflight-filter-matches-nothing",
    severity: "error",
    description: "A filter entry's regular expression matches no namespace on the source.",
    spec: "collectionsRegex / databaseRegex select by pattern; a filter that matches nothing is a typo.",
    source: "sync-service-api.md",
    ref: "spec/sync-service-api.md (Filter entry); service-facts.md (Filter entry)",
    hint: "Fix the pattern (its case, anchors and option letters) so that it selects the namespaces you mean; `--list-namespaces` shows the set that would be synced.",
  },
  {
    id: "preflight-nothing-synced",
    severity: "error",
    description: "The filters select no collection at all on the source.",
    spec: "includeNamespaces: only the listed databases or collections are synced.",
    source: "sync-service-api.md",
    ref: "spec/sync-service-api.md (Start request body)",
    hint: "Check includeNamespaces and excludeNamespaces against `--list-namespaces`.",
  },
  {
    id: "preflight-destination-not-empty",
    severity: "error",
    description:
      "A synced namespace already exists on the destination (and the runbook does not allow pre-existing destination data).",
    spec: "The destination cluster must be empty. From 1.15, `preExistingDestinationData: true` in start allows data that is already there.",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/`,
    ref: `${DOCS}/limitations/ and spec/service-facts.md (start body, by version)`,
    hint: "Drop these namespaces on the destination (after checking they are not needed), or set `preExistingDestinationData: true` in start (service 1.15 or newer).",
  },
  {
    id: "preflight-destination-data",
    severity: "warning",
    description: "The destination holds user data outside the synced namespaces.",
    spec: "The destination cluster must be empty; other clients must not write to the destination cluster while mongosync is running.",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/`,
    hint: "Make sure nothing writes to the destination during the sync; with service 1.15 or newer, `preExistingDestinationData: true` states that the data is expected.",
  },
  {
    id: "preflight-leftover-sync-state",
    severity: "warning",
    description: "The destination holds the service's own state from an earlier sync (`__mdb_internal_mongosync…`).",
    spec: "The service keeps its state in `__mdb_internal_mongosync` (and `__mdb_internal_mongosync_verifier_{src,dst}`) on the destination.",
    source: "service-facts.md",
    ref: "spec/service-facts.md (Other 1.20 changes)",
    hint: "A fresh sync needs a clean destination: drop the leftover internal databases once you are sure no sync uses them.",
  },
  {
    id: "preflight-shard-key-index",
    severity: "error",
    description: "A shardingEntries key has no supporting index on the source, and createSupportingIndexes is not set.",
    spec: "With createSupportingIndexes false (default), every shard key in shardingEntries must already have an index on the source; if the collection uses a non-simple collation, one of the indexes used for the shard key must have simple collation.",
    source: "sync-service-api.md",
    ref: "spec/sync-service-api.md (POST /api/v1/start, behavior rule 2)",
    hint: "Create the index on the source before start (an index whose key begins with the shard key), or set `sharding.createSupportingIndexes: true`.",
  },
  {
    id: "preflight-unique-index-shard-key",
    severity: "error",
    description: "A unique index of a collection to shard does not have the shard key as a prefix.",
    spec: "A source unique index that is incompatible with the requested shard key (for example one that lacks the shard key as a prefix) can make the sync fail.",
    source: "sync-service-api.md",
    ref: "spec/sync-service-api.md (POST /api/v1/start, behavior rule 2)",
    hint: "Choose a shard key that prefixes every unique index of the collection, or change the unique index before start.",
  },
  {
    id: "preflight-unique-conflict",
    severity: "error",
    description: "A collection has a unique and a non-unique index on the same keys.",
    spec: "You cannot sync a collection that has a unique index and a non-unique index defined on the same field(s).",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/`,
    hint: "Drop one of the two indexes on the source before start.",
  },
  {
    id: "preflight-collection-unsupported",
    severity: "error",
    description:
      "A synced collection is of a kind the documentation excludes (time series, clustered with expireAfterSeconds, Queryable Encryption, capped before 1.3, a sharded one with a non-default collation, a capped one to shard).",
    spec: "Time-series collections aren't supported; clustered collections with expireAfterSeconds set aren't supported; Queryable Encryption isn't supported; capped collections are supported from 1.3.0; mongosync only supports syncing sharded collections that have default collation settings.",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/`,
    ref: `${DOCS}/limitations/ (Unsupported Collection Types, Sharded Clusters, Capped Collections)`,
    hint: "Leave the collection out with excludeNamespaces and move it another way (mongodump/mongorestore), or change it before start.",
  },
  {
    id: "preflight-index-limit",
    severity: "error",
    description: "A collection to be sharded has more than 63 indexes.",
    spec: "The maximum number of indexes per sharded collection is 63, which is one less than the default limit of 64.",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/#sharded-clusters`,
    hint: "Drop an unused index on the source before start (`$indexStats` shows which are used).",
  },
  {
    id: "preflight-oplog-window",
    severity: "error",
    description: "The source oplog window is shorter than the estimated copy time (times the headroom).",
    spec: "When operations that mongosync has not applied roll off the oplog on the source cluster, the sync fails and mongosync exits. If you anticipate syncing a large data set, you might exceed the oplog window.",
    source: "service-facts.md",
    docs: `${DOCS}/oplog-sizing/`,
    hint: "Grow the oplog (`replSetResizeOplog` with `minRetentionHours` above the expected copy time) on the source (each shard), or measure the real copy rate in a rehearsal and set `preflight.copyRate`.",
  },
  {
    id: "preflight-destination-disk",
    severity: "error",
    description:
      "The destination has less free disk than the data to copy needs (the data, and as much again for the insert oplog entries).",
    spec: "The destination cluster must have enough disk storage to accommodate the logical data size being migrated and the destination oplog entries from the initial sync: to migrate 10 GB, at least 10 GB for the data and another 10 GB for the insert oplog entries.",
    source: "service-facts.md",
    docs: `${DOCS}/oplog-sizing/`,
    ref: `${DOCS}/oplog-sizing/ (Considerations)`,
    hint: "Add disk to the destination (every shard), or narrow the namespaces synced in this runbook.",
  },
  {
    id: "preflight-balancer",
    severity: "error",
    description:
      "A balancer is running where it must be stopped: always on a sharded destination, on a sharded source unless every synced collection has balancing disabled.",
    spec: "You must always disable the balancer on a sharded destination cluster. On a sharded source, disable the balancer (balancerStop, then wait 15 minutes), or with namespace filtering disable it for all collections within the filter.",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/#sharded-clusters`,
    ref: `${DOCS}/limitations/#sharded-clusters; includes/fact-mongosync-balancer.rst`,
    hint: "Run `sh.stopBalancer()` (balancerStop) and wait 15 minutes for chunk migrations in progress to finish before start.",
  },
  {
    id: "preflight-destination-zones",
    severity: "error",
    description: "A synced namespace has shard zone tags on the destination.",
    spec: "Destination namespaces with pre-configured shard zone tags are not supported (1.20); there is no replication for zone configuration.",
    source: "service-facts.md",
    ref: "spec/service-facts.md (Other 1.20 changes); limitations (Sharded Clusters)",
    hint: "Remove the zone ranges of these namespaces on the destination before start (`sh.removeRangeFromZone`), and set them up again after commit.",
  },
  {
    id: "preflight-source-zones",
    severity: "info",
    description: "The source has shard zones: they are not copied to the destination.",
    spec: "There is no replication for zone configuration. mongosync replicates data, it doesn't inherit zones.",
    source: "service-facts.md",
    docs: `${DOCS}/limitations/#sharded-clusters`,
    hint: "Set up the zones on the destination after commit if the application relies on them.",
  },
  {
    id: "preflight-privileges",
    severity: "error",
    description:
      "The connecting user lacks a role the service needs on this cluster (by sync type: default, dual write blocking, reversing, multiple reversals; and `clusterManager` on a source older than 6.0).",
    spec: "Self-managed (the published table): default: source backup, clusterMonitor, readAnyDatabase; destination clusterManager, clusterMonitor, readWriteAnyDatabase, restore. Dual write-blocking: source backup, clusterManager, clusterMonitor, readWriteAnyDatabase, restore; destination clusterManager, clusterMonitor, readWriteAnyDatabase, restore. Reversing: the same source; destination backup, clusterManager, clusterMonitor, dbAdminAnyDatabase, readWriteAnyDatabase, restore. Multiple reversals: those six on both. A 5.0 source needs `clusterManager` as well, or the minimum privileges listed for 5.0.",
    source: "service-facts.md",
    docs: `${DOCS}/permissions/`,
    hint: "Grant the missing roles with `grantRolesToUser` to the user of the service's connection string (preflight should connect as that user).",
  },
] as const satisfies readonly RuleInfo[]);

const BY_ID: ReadonlyMap<string, RuleInfo> = new Map(PREFLIGHT_CHECKS.map((c) => [c.id, c]));

export function checkInfo(id: string): PreflightCheckInfo {
  const info = BY_ID.get(id);
  if (!info) throw new Error(`preflight check ${id} is not in the catalogue`);
  return info;
}
