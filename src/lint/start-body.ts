/**
 * The `start` request body against the cluster pair it syncs: clusters, sharding,
 * reversibility, write blocking, buildIndexes, and `x-passthrough`.
 */
import { BEHAVIOUR, SERVER, START_FIELD_NAMES, atLeast, startField } from "../api/versions.js";
import type { Cluster, StartRequest } from "../runbook/types.js";
import type { LintContext, RuleInfo, YamlPath } from "./context.js";
import { closest, q } from "./context.js";
import { startRequests } from "./kinds.js";
import { listSelects, selector } from "../runbook/namespaces.js";

const SERVICE_CLUSTER_NAMES = ["cluster0", "cluster1"];

export const rules = [
  {
    id: "cluster-unknown",
    severity: "error",
    description:
      "`source` or `destination` is not one of the runbook's `clusters` (or, without `clusters`, not cluster0/cluster1).",
    spec: "source: Name of the source cluster (one of the configured cluster settings).",
    source: "sync-service-api.md",
    hint: "Use a name declared under `clusters:` (the service's settings are cluster0 and cluster1).",
  },
  {
    id: "cluster-same",
    severity: "error",
    description: "`source` and `destination` name the same cluster.",
    spec: "The service synchronizes data continuously from a source cluster to a destination cluster.",
    source: "sync-service-api.md",
    hint: "Sync from one cluster setting to the other: source cluster0, destination cluster1 (or the reverse).",
  },
  {
    id: "cluster-name",
    severity: "warning",
    description: "A `clusters` entry is named neither cluster0 nor cluster1, the service's two cluster settings.",
    spec: "The service is configured with two cluster settings named `cluster0` and `cluster1`, each with a connection string.",
    source: "sync-service-api.md",
    hint: "Name the clusters after the service's settings: cluster0 and cluster1.",
  },
  {
    id: "sharding-required",
    severity: "error",
    description: "A replica set → sharded cluster start has no `sharding`.",
    spec: "Start fails with an error when syncing from a replica set to a sharded cluster without `sharding`.",
    source: "sync-service-api.md",
    hint: "Add `sharding: { shardingEntries: [...] }` (an empty list shards nothing; listed collections are sharded on the destination).",
  },
  {
    id: "sharding-forbidden",
    severity: "error",
    description: "`sharding` is given for a pair other than replica set → sharded cluster.",
    spec: "Start fails with an error when `sharding` is set in any configuration other than a replica-set-to-sharded-cluster sync.",
    source: "sync-service-api.md",
    hint: "Remove `sharding`: it is accepted only from a replica set to a sharded cluster.",
  },
  {
    id: "sharding-outside-filter",
    severity: "error",
    description:
      "A shardingEntries collection is not synced: the include filter leaves it out, or the exclude filter removes it.",
    spec: "shardingEntries: Collections to shard on the destination. Collections not listed sync as unsharded. / includeNamespaces: Only the listed databases or collections are synced.",
    source: "sync-service-api.md",
    hint: "Add the collection to includeNamespaces (or take it out of excludeNamespaces), or drop the sharding entry.",
  },
  {
    id: "sharding-duplicate",
    severity: "error",
    description: "The same collection appears twice in shardingEntries.",
    spec: "shardingEntries: Collections to shard on the destination. shardCollection: Shard key to generate on the destination.",
    source: "sync-service-api.md",
    hint: "Keep one sharding entry, with one shard key, per collection.",
  },
  {
    id: "reversible-needs-write-blocking",
    severity: "error",
    description:
      "`reversible: true` without write blocking on both source and destination, on a service before 1.20 (from 1.20 the service configures write blocking itself).",
    spec: "`enableUserWriteBlocking`: … before 1.20 `reversible` needed it on source and destination; removed in 1.20.",
    source: "service-facts.md",
    hint: "Set `enableUserWriteBlocking: true` (or `sourceAndDestination`) next to `reversible: true`.",
  },
  {
    id: "reversible-build-indexes-never",
    severity: "error",
    description: "`reversible: true` with `buildIndexes: never`.",
    spec: "`never` together with `reversible: true` is rejected by start.",
    source: "service-facts.md",
    hint: "Drop `buildIndexes: never`, or drop `reversible`.",
  },
  {
    id: "reversible-rs-to-sharded",
    severity: "error",
    description: "`reversible: true` from a replica set to a sharded cluster.",
    spec: "`reversible` (default false) is not supported: from a replica set to a sharded cluster; between sharded clusters with different numbers of shards; with `buildIndexes: never`.",
    source: "service-facts.md",
    hint: "Remove `reversible`: a replica set → sharded sync cannot be reversed; plan the rollback another way.",
  },
  {
    id: "reversible-shard-count",
    severity: "error",
    description: "`reversible: true` between sharded clusters with different `shards` counts.",
    spec: "`reversible` (default false) is not supported: ... between sharded clusters with different numbers of shards.",
    source: "service-facts.md",
    hint: "Remove `reversible`, or sync between clusters with the same number of shards.",
  },
  {
    id: "write-blocking-server-version",
    severity: "error",
    description: "`enableUserWriteBlocking` with a source whose serverVersion is older than 6.0.",
    spec: "`enableUserWriteBlocking`: ... Not settable with a source older than 6.0.",
    source: "service-facts.md",
    hint: "Remove `enableUserWriteBlocking` (and `reversible`), or upgrade the source to 6.0 or newer first.",
  },
  {
    id: "start-combination",
    severity: "error",
    description:
      "A start body the documentation refuses or does not support: reversible with a namespace filter, a filter with dual write blocking, preExistingDestinationData without a filter or with reversible, reversible across topologies or server major versions, reversible or createSupportingIndexes with a source below 6.0, regex filters before 1.6, server versions 1.19 dropped.",
    spec: "Combinations the documentation refuses or does not support (lint must say so; the simulator must refuse what the service refuses).",
    source: "service-facts.md",
    hint: "Change the start body (or the clusters' versions) as the message says: start would be refused, or the sync could not be reversed.",
  },
  {
    id: "build-indexes-after-copy",
    severity: "info",
    description:
      "Indexes are built after the collection copy (`afterDataCopy`, `excludeHashedAfterCopy`, or from 1.17 the default for a 6.0+ source): `canCommit` waits for the index builds.",
    spec: "from 1.17 `afterDataCopy` is the default for sources on server 6.0+, and `canCommit` then waits for the index builds.",
    source: "service-facts.md",
    hint: "Budget the index builds into the wait for canCommit (progress shows `indexBuilding` from 1.19); set `buildIndexes: beforeDataCopy` to build them before the copy instead.",
  },
  {
    id: "build-indexes-never-verifier",
    severity: "warning",
    description:
      "`buildIndexes: never` with the embedded verifier on (1.9+, on by default): a synced collection with a TTL index fails the migration.",
    spec: "`verification: { enabled }` | 1.9 | embedded verifier, on by default; with `buildIndexes: never` and TTL collections it fails the migration.",
    source: "service-facts.md",
    hint: "If any synced collection has a TTL index, turn the embedded verifier off (`verification: { enabled: false }`) and verify with the migration verifier, or build indexes.",
  },
  {
    id: "build-indexes-never",
    severity: "info",
    description:
      "`buildIndexes: never`: only `_id` indexes and placeholder shard-key indexes are built, and the placeholders stay after commit.",
    spec: "With buildIndexes `never`, only required indexes are built: an index on `_id` of every copied collection, and a placeholder index for each sharded collection lacking a shard-key index on the destination. The placeholder index is kept after commit.",
    source: "sync-service-api.md",
    hint: "Plan to build the application's indexes on the destination before moving traffic, and to drop the placeholder indexes after commit.",
  },
  {
    id: "passthrough-collision",
    severity: "error",
    description: "An `x-passthrough` field has the name of a field the format knows.",
    spec: "The `start` body is sent as written (after interpolation): fields the format does not know yet for a newer service version are an error unless the runbook opts in (`x-passthrough`), never silently dropped.",
    source: "DESIGN.md",
    hint: "Write known fields in the start body itself, where they are checked; keep x-passthrough for fields the format does not know.",
  },
  {
    id: "passthrough-unchecked",
    severity: "info",
    description: "An `x-passthrough` field is sent to the service unchecked.",
    spec: "The `start` body is sent as written (after interpolation): fields the format does not know yet for a newer service version are an error unless the runbook opts in (`x-passthrough`), never silently dropped.",
    source: "DESIGN.md",
    hint: "Check the field's name and value against the deployed service's documentation: lint cannot.",
  },
] as const satisfies readonly RuleInfo[];

function topologyOf(ctx: LintContext, name: string): Cluster | undefined {
  return ctx.runbook.clusters?.[name];
}

function blocksBothSides(v: StartRequest["enableUserWriteBlocking"]): boolean {
  return v === true || v === "sourceAndDestination";
}

export function check(ctx: LintContext): void {
  const clusters = ctx.runbook.clusters;
  if (clusters) {
    for (const name of Object.keys(clusters)) {
      if (!SERVICE_CLUSTER_NAMES.includes(name)) {
        ctx.report(
          "cluster-name",
          ["clusters", name],
          `Cluster ${q(name)} is not one of the service's cluster settings (cluster0, cluster1).`,
          {
            key: true,
            hint: `Rename it to ${q(closest(name, SERVICE_CLUSTER_NAMES))} (the service's settings are cluster0 and cluster1).`,
          },
        );
      }
    }
  }
  for (const { request, at } of startRequests(ctx)) checkStart(ctx, request, at);
}

function checkStart(ctx: LintContext, s: StartRequest, at: YamlPath): void {
  const clusters = ctx.runbook.clusters;
  const names = clusters ? Object.keys(clusters) : SERVICE_CLUSTER_NAMES;
  let known = true;
  for (const field of ["source", "destination"] as const) {
    const name = s[field];
    if (!names.includes(name)) {
      known = false;
      const where = clusters
        ? "declared under `clusters`"
        : "one of the service's cluster settings (cluster0, cluster1)";
      ctx.report("cluster-unknown", [...at, field], `${field} ${q(name)} is not ${where}.`, {
        hint:
          names.length > 0
            ? `Did you mean ${q(closest(name, names))}? Declared: ${names.join(", ")}.`
            : "Declare the clusters under `clusters:`.",
      });
    }
  }
  if (s.source === s.destination) {
    ctx.report(
      "cluster-same",
      [...at, "destination"],
      `source and destination are both ${q(s.source)}: a sync needs two different clusters.`,
    );
  }

  const src = known ? topologyOf(ctx, s.source) : undefined;
  const dst = known ? topologyOf(ctx, s.destination) : undefined;
  const pairKnown = src !== undefined && dst !== undefined && s.source !== s.destination;
  const rsToSharded = pairKnown && src.topology === "replicaSet" && dst.topology === "sharded";
  const pair = pairKnown ? `${src.topology} → ${dst.topology}` : "";

  if (pairKnown && rsToSharded && !s.sharding) {
    ctx.report(
      "sharding-required",
      at,
      `Syncing from replica set ${q(s.source)} to sharded cluster ${q(s.destination)} requires \`sharding\`; start would fail.`,
      { key: true },
    );
  }
  if (pairKnown && !rsToSharded && s.sharding) {
    ctx.report(
      "sharding-forbidden",
      [...at, "sharding"],
      `\`sharding\` is accepted only from a replica set to a sharded cluster, not ${pair}; start would fail.`,
      {
        key: true,
      },
    );
  }
  if (s.sharding) checkShardingEntries(ctx, s, [...at, "sharding", "shardingEntries"]);
  checkCombinations(
    ctx,
    s,
    at,
    known ? topologyOf(ctx, s.source) : undefined,
    known ? topologyOf(ctx, s.destination) : undefined,
  );

  // reversibility
  const version = ctx.runbook.serviceVersion;
  if (s.reversible === true) {
    // before 1.20 only; from 1.20 the service configures write blocking itself (and the field is
    // gone: the version rules flag it); without a version, service-version-missing says both
    if (
      version !== undefined &&
      !atLeast(version, BEHAVIOUR.writeBlockingFromConfig.since) &&
      !blocksBothSides(s.enableUserWriteBlocking)
    ) {
      const v = s.enableUserWriteBlocking;
      ctx.report(
        "reversible-needs-write-blocking",
        v === undefined ? [...at, "reversible"] : [...at, "enableUserWriteBlocking"],
        v === undefined
          ? `Before service 1.20, \`reversible: true\` needs write blocking on source and destination, and \`enableUserWriteBlocking\` is not set (serviceVersion ${q(version)}).`
          : `Before service 1.20, \`reversible: true\` needs write blocking on source and destination; \`enableUserWriteBlocking: ${String(v)}\` does not block both (serviceVersion ${q(version)}).`,
      );
    }
    if (s.buildIndexes === "never") {
      ctx.report(
        "reversible-build-indexes-never",
        [...at, "buildIndexes"],
        "`buildIndexes: never` together with `reversible: true` is rejected by start.",
      );
    }
    if (rsToSharded) {
      ctx.report(
        "reversible-rs-to-sharded",
        [...at, "reversible"],
        `A sync from replica set ${q(s.source)} to sharded cluster ${q(s.destination)} cannot be reversible.`,
      );
    }
    if (
      pairKnown &&
      src.topology === "sharded" &&
      dst.topology === "sharded" &&
      src.shards !== undefined &&
      dst.shards !== undefined &&
      src.shards !== dst.shards
    ) {
      ctx.report(
        "reversible-shard-count",
        [...at, "reversible"],
        `${q(s.source)} has ${src.shards} shards and ${q(s.destination)} has ${dst.shards}: reversible needs the same number of shards on both.`,
      );
    }
  }

  // write blocking needs a 6.0 source
  const wb = s.enableUserWriteBlocking;
  const srcVersion = known ? topologyOf(ctx, s.source)?.serverVersion : undefined;
  if (
    wb !== undefined &&
    wb !== false &&
    wb !== "none" &&
    srcVersion !== undefined &&
    !atLeast(srcVersion, SERVER.sourceForWriteBlocking.server)
  ) {
    ctx.report(
      "write-blocking-server-version",
      [...at, "enableUserWriteBlocking"],
      `Source ${q(s.source)} runs server ${q(srcVersion)}: write blocking cannot be set with a source older than ${SERVER.sourceForWriteBlocking.server}.`,
    );
  }

  // buildIndexes
  if (s.buildIndexes === "never") {
    ctx.report(
      "build-indexes-never",
      [...at, "buildIndexes"],
      "`buildIndexes: never` builds only the `_id` index of each collection and a placeholder index for each sharded collection without a shard-key index; the placeholders stay after commit.",
    );
    const embedded =
      s.verification?.enabled === true ||
      (s.verification?.enabled !== false &&
        (version === undefined || atLeast(version, BEHAVIOUR.embeddedVerifier.since)));
    if (embedded)
      ctx.report(
        "build-indexes-never-verifier",
        [...at, "buildIndexes"],
        `\`buildIndexes: never\` with the embedded verifier on${s.verification?.enabled === true ? "" : " (the default from service 1.9)"}: if any synced collection has a TTL index, the service fails the migration.`,
      );
  }
  const after = BEHAVIOUR.afterDataCopyDefault;
  const valueSince = startField("buildIndexes")?.values?.find((v) => v.value === s.buildIndexes)?.since;
  if (
    (s.buildIndexes === "afterDataCopy" || s.buildIndexes === "excludeHashedAfterCopy") &&
    (version === undefined || atLeast(version, valueSince))
  ) {
    ctx.report(
      "build-indexes-after-copy",
      [...at, "buildIndexes"],
      `\`buildIndexes: ${s.buildIndexes}\` builds indexes after the collection copy: \`canCommit\` waits for the index builds.`,
    );
  } else if (s.buildIndexes === undefined && version !== undefined && atLeast(version, after.since)) {
    const srcServer = known ? topologyOf(ctx, s.source)?.serverVersion : undefined;
    if (srcServer === undefined || atLeast(srcServer, after.sourceServer))
      ctx.report(
        "build-indexes-after-copy",
        at,
        `From service ${after.since}, \`afterDataCopy\` is the default for ${srcServer === undefined ? "a source on server 6.0+" : `this source (server ${q(srcServer)})`}: indexes are built after the collection copy, and \`canCommit\` waits for the index builds.`,
        { key: true },
      );
  }

  // x-passthrough
  const pass = s["x-passthrough"] as Record<string, unknown> | undefined;
  if (pass) {
    for (const field of Object.keys(pass)) {
      if (START_FIELD_NAMES.includes(field)) {
        ctx.report(
          "passthrough-collision",
          [...at, "x-passthrough", field],
          `x-passthrough field ${q(field)} is a field the format knows; it would bypass its checks.`,
          {
            key: true,
            hint: `Move ${q(field)} out of x-passthrough into the start body, where lint checks it.`,
          },
        );
      } else {
        ctx.report(
          "passthrough-unchecked",
          [...at, "x-passthrough", field],
          `x-passthrough field ${q(field)} is sent to the service as written, unchecked.`,
          { key: true },
        );
      }
    }
  }
}

function checkShardingEntries(ctx: LintContext, s: StartRequest, at: YamlPath): void {
  const entries = s.sharding?.shardingEntries ?? [];
  const include = s.includeNamespaces?.map((e, j) => selector(e, j));
  const exclude = s.excludeNamespaces?.map((e, j) => selector(e, j));
  const seen = new Map<string, number>();
  entries.forEach((e, k) => {
    const ns = `${e.database}.${e.collection}`;
    const first = seen.get(ns);
    if (first !== undefined) {
      ctx.report(
        "sharding-duplicate",
        [...at, k],
        `${q(ns)} is already sharded by shardingEntries entry ${first + 1} (line ${ctx.lineOf([...at, first])}).`,
      );
    } else seen.set(ns, k);
    if (include && listSelects(include, e.database, e.collection).selected === false) {
      ctx.report(
        "sharding-outside-filter",
        [...at, k],
        `${q(ns)} is sharded here, but includeNamespaces does not select it: it is not synced at all.`,
      );
      return;
    }
    if (exclude) {
      const r = listSelects(exclude, e.database, e.collection);
      if (r.selected === true && r.by) {
        const line = ctx.lineOf([...at.slice(0, 3), "excludeNamespaces", r.by.index]);
        ctx.report(
          "sharding-outside-filter",
          [...at, k],
          `${q(ns)} is sharded here, but excludeNamespaces (line ${line}) leaves it out of the sync.`,
        );
      }
    }
  });
}

/**
 * The combinations the documentation refuses or does not support (service facts, "start body, by
 * version"), each an error at the field that makes it. Cluster facts (topology, serverVersion)
 * are judged only where the runbook declares them.
 */
function checkCombinations(
  ctx: LintContext,
  s: StartRequest,
  at: YamlPath,
  src: Cluster | undefined,
  dst: Cluster | undefined,
): void {
  const report = (field: string, message: string): void =>
    ctx.report("start-combination", [...at, field], message, { key: true });
  const filters = (["includeNamespaces", "excludeNamespaces"] as const).filter((f) => (s[f]?.length ?? 0) > 0);
  const filter = filters[0];
  const version = ctx.runbook.serviceVersion;
  if (s.reversible === true && filter)
    report("reversible", `\`reversible: true\` with a namespace filter (\`${filter}\`) is not supported.`);
  if (filter && blocksBothSides(s.enableUserWriteBlocking))
    report(
      "enableUserWriteBlocking",
      `A namespace filter (\`${filter}\`) with dual write blocking (\`enableUserWriteBlocking: ${String(s.enableUserWriteBlocking)}\`) is not supported; destination-only is.`,
    );
  if (s.preExistingDestinationData === true && !filter)
    report("preExistingDestinationData", "`preExistingDestinationData: true` requires a namespace filter.");
  if (s.preExistingDestinationData === true && s.reversible === true)
    report("preExistingDestinationData", "`preExistingDestinationData: true` does not allow `reversible`.");
  if (s.reversible === true && src && dst) {
    // replica set → sharded has its own rule (reversible-rs-to-sharded)
    if (src.topology !== dst.topology && !(src.topology === "replicaSet" && dst.topology === "sharded"))
      report(
        "reversible",
        `\`reversible: true\` between a ${src.topology} and a ${dst.topology}: no reverse across topologies.`,
      );
    const major = (v: string | undefined) => v?.split(".")[0];
    if (src.serverVersion && dst.serverVersion && major(src.serverVersion) !== major(dst.serverVersion))
      report(
        "reversible",
        `\`reversible: true\` between server ${src.serverVersion} and ${dst.serverVersion}: no reverse across server major versions.`,
      );
  }
  const srcBelow6 =
    src?.serverVersion !== undefined && !atLeast(src.serverVersion, SERVER.sourceForWriteBlocking.server);
  if (srcBelow6 && s.reversible === true)
    report(
      "reversible",
      `\`reversible: true\` needs a source on server ${SERVER.sourceForWriteBlocking.server} or newer (${q(s.source)} is ${src.serverVersion}).`,
    );
  if (srcBelow6 && s.sharding?.createSupportingIndexes === true)
    ctx.report(
      "start-combination",
      [...at, "sharding", "createSupportingIndexes"],
      `\`createSupportingIndexes\` needs a source on server ${SERVER.sourceForWriteBlocking.server} or newer (${q(s.source)} is ${src.serverVersion}).`,
      { key: true },
    );
  if (version !== undefined && !atLeast(version, BEHAVIOUR.filterRegex.since))
    for (const f of filters)
      for (const [i, e] of (s[f] ?? []).entries())
        for (const k of ["databaseRegex", "collectionsRegex"] as const)
          if (e[k] !== undefined)
            ctx.report(
              "start-combination",
              [...at, f, i, k],
              `\`${k}\` is a service ${BEHAVIOUR.filterRegex.since} feature; serviceVersion is ${q(version)}.`,
              { key: true },
            );
  const dropped = BEHAVIOUR.oldServersDropped;
  if (version !== undefined && atLeast(version, dropped.since)) {
    if (src?.serverVersion !== undefined && !atLeast(src.serverVersion, dropped.sourceServer))
      report(
        "source",
        `Service ${dropped.since} dropped sources on server 4.4: ${q(s.source)} is ${src.serverVersion}; start would be refused.`,
      );
    if (dst?.serverVersion !== undefined && dst.serverVersion.split(".")[0] === "6")
      report(
        "destination",
        `Service ${dropped.since} dropped destinations on server 6.0: ${q(s.destination)} is ${dst.serverVersion}; start would be refused.`,
      );
  }
}
