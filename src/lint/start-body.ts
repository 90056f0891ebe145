/**
 * The `start` request body against the cluster pair it syncs: clusters, sharding,
 * reversibility, write blocking, buildIndexes, and `x-passthrough`.
 */
import type { Cluster, StartRequest } from "../runbook/types.js";
import type { LintContext, RuleInfo, YamlPath } from "./context.js";
import { closest, compareVersions, q } from "./context.js";
import { listSelects, selector } from "./namespaces.js";

export const BUILD_INDEXES_VALUES = ["beforeDataCopy", "never", "afterDataCopy", "excludeHashedAfterCopy"] as const;
/** Start-body fields the format knows (an `x-passthrough` field must not reuse one). */
export const START_FIELDS = [
  "source",
  "destination",
  "buildIndexes",
  "reversible",
  "enableUserWriteBlocking",
  "includeNamespaces",
  "excludeNamespaces",
  "sharding",
  "verification",
] as const;
const SERVICE_CLUSTER_NAMES = ["cluster0", "cluster1"];

export const rules: RuleInfo[] = [
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
    description: "`reversible: true` without write blocking on both source and destination.",
    spec: "`POST /api/v1/reverse`: only in COMMITTED, and only if `start` set `reversible: true` and write blocking on source and destination.",
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
    id: "build-indexes-value",
    severity: "error",
    description: "`buildIndexes` is not one of beforeDataCopy, never, afterDataCopy, excludeHashedAfterCopy.",
    spec: "`buildIndexes`: `beforeDataCopy` (the default) and `never` (1.3.0); newer versions add `afterDataCopy` and `excludeHashedAfterCopy`.",
    source: "service-facts.md",
    hint: "Use `beforeDataCopy` (the default), `never`, `afterDataCopy` or `excludeHashedAfterCopy`.",
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
];

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
  ctx.runbook.steps.forEach((step, i) => {
    if (!("start" in step) || !step.start) return;
    checkStart(ctx, step.start, ["steps", i, "start"]);
  });
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

  // reversibility
  if (s.reversible === true) {
    if (!blocksBothSides(s.enableUserWriteBlocking)) {
      const v = s.enableUserWriteBlocking;
      ctx.report(
        "reversible-needs-write-blocking",
        v === undefined ? [...at, "reversible"] : [...at, "enableUserWriteBlocking"],
        v === undefined
          ? "`reversible: true` needs write blocking on source and destination, and `enableUserWriteBlocking` is not set."
          : `\`reversible: true\` needs write blocking on source and destination; \`enableUserWriteBlocking: ${String(v)}\` does not block both.`,
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
    compareVersions(srcVersion, "6.0") < 0
  ) {
    ctx.report(
      "write-blocking-server-version",
      [...at, "enableUserWriteBlocking"],
      `Source ${q(s.source)} runs server ${q(srcVersion)}: write blocking cannot be set with a source older than 6.0.`,
    );
  }

  // buildIndexes
  if (s.buildIndexes !== undefined) {
    const v = s.buildIndexes;
    if (!(BUILD_INDEXES_VALUES as readonly string[]).includes(v)) {
      ctx.report(
        "build-indexes-value",
        [...at, "buildIndexes"],
        `buildIndexes ${q(v)} is not a value the service knows.`,
        {
          hint: `Did you mean ${q(closest(v, [...BUILD_INDEXES_VALUES]))}? Values: ${BUILD_INDEXES_VALUES.join(", ")}.`,
        },
      );
    } else if (v === "never") {
      ctx.report(
        "build-indexes-never",
        [...at, "buildIndexes"],
        "`buildIndexes: never` builds only the `_id` index of each collection and a placeholder index for each sharded collection without a shard-key index; the placeholders stay after commit.",
      );
    }
  }

  // x-passthrough
  const pass = s["x-passthrough"] as Record<string, unknown> | undefined;
  if (pass) {
    for (const field of Object.keys(pass)) {
      if ((START_FIELDS as readonly string[]).includes(field)) {
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
        const line = ctx.lineOf(["steps", at[1] as number, "start", "excludeNamespaces", r.by.index]);
        ctx.report(
          "sharding-outside-filter",
          [...at, k],
          `${q(ns)} is sharded here, but excludeNamespaces (line ${line}) leaves it out of the sync.`,
        );
      }
    }
  });
}
