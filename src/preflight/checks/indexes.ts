/**
 * Indexes and collection kinds of the synced source collections: shard key support, unique
 * indexes against the shard key, unique/non-unique twins, the 63-index limit of sharded
 * collections, and the collection kinds the documentation excludes.
 */
import { UNCITED, atLeast } from "../../api/versions.js";
import { clusterPath, ns, startPath, type CheckInput, type Findings } from "../findings.js";
import type { CollectionFacts, IndexFacts } from "../types.js";

type Key = [string, number | string][];

const keyText = (k: Key): string =>
  `{ ${k.map(([f, v]) => `${f}: ${typeof v === "string" ? `"${v}"` : v}`).join(", ")} }`;

function sameDirection(a: number | string, b: number | string): boolean {
  return typeof a === "number" && typeof b === "number" ? true : a === b;
}

/** The index key begins with the shard key (field by field; hashed matches hashed). */
export function prefixedBy(index: Key, shardKey: Key): boolean {
  if (index.length < shardKey.length) return false;
  return shardKey.every(([f, v], i) => index[i]?.[0] === f && sameDirection(index[i][1], v));
}

/** An index that can back the shard key: prefixed by it, neither sparse nor partial; simple collation when the collection's is not. */
export function supportsShardKey(ix: IndexFacts, shardKey: Key, coll: CollectionFacts): boolean {
  if (!prefixedBy(ix.key, shardKey) || ix.sparse || ix.partial) return false;
  return coll.collation === "simple" || ix.collation === "simple";
}

const sameKey = (a: Key, b: Key): boolean =>
  a.length === b.length && a.every(([f, v], i) => b[i]?.[0] === f && b[i][1] === v);

export function check(input: CheckInput, out: Findings): void {
  const sel = input.selection;
  const src = input.source;
  if (!sel || !src || !input.start) return;
  const body = input.start.body;
  const svc = input.runbook.serviceVersion;
  const entries = body.sharding?.shardingEntries ?? [];
  const createSupporting = body.sharding?.createSupportingIndexes === true;
  const sourceSharded = new Map(
    (src.shardedCollections?.ok ? src.shardedCollections.value : []).map((s) => [s.ns, s.key] as const),
  );
  const unreadIndexes: string[] = [];

  for (const n of sel.synced) {
    const c = n.collection;
    const name = ns(n.database, c.name);
    const entryIndex = entries.findIndex((e) => e.database === n.database && e.collection === c.name);
    const at = entryIndex >= 0 ? startPath(input, "sharding", "shardingEntries", entryIndex) : clusterPath(src.name);
    const shardKey: Key | undefined =
      entryIndex >= 0
        ? entries[entryIndex]!.shardCollection.key.flatMap((o) => Object.entries(o) as Key)
        : sourceSharded.get(name);
    const kindAt = entryIndex >= 0 ? at : startPath(input);
    const kind = (what: string): void =>
      out.add("preflight-collection-unsupported", kindAt, `\`${name}\` is ${what}.`, { key: entryIndex < 0 });

    if (c.type === "timeseries") kind("a time series collection, which the service does not sync");
    if (c.clusteredTtl) kind("a clustered collection with expireAfterSeconds, which the service does not sync");
    if (c.encrypted) kind("encrypted with Queryable Encryption, which the service does not support");
    if (c.capped && svc !== undefined && !atLeast(svc, UNCITED.cappedCollections.since))
      kind(
        `a capped collection; the service syncs capped collections from ${UNCITED.cappedCollections.since}.0, and this runbook says ${svc}`,
      );
    if (c.capped && entryIndex >= 0) kind("a capped collection, which cannot be sharded");
    if (shardKey && c.collation !== "simple")
      kind(
        `sharded with a non-default collation (\`${c.collation}\`); the service only syncs sharded collections that have the default collation`,
      );

    if (c.type !== "collection") continue;
    if (!c.indexes) continue;
    if (!c.indexes.ok) {
      unreadIndexes.push(`${name} (${c.indexes.why})`);
      continue;
    }
    const indexes = c.indexes.value;

    for (let i = 0; i < indexes.length; i++)
      for (let j = i + 1; j < indexes.length; j++) {
        const a = indexes[i]!;
        const b = indexes[j]!;
        if (a.unique !== b.unique && sameKey(a.key, b.key))
          out.add(
            "preflight-unique-conflict",
            kindAt,
            `\`${name}\` has a unique and a non-unique index on ${keyText(a.key)}: \`${a.name}\` and \`${b.name}\`.`,
            { key: entryIndex < 0 },
          );
      }

    if (shardKey && indexes.length > 63)
      out.add(
        "preflight-index-limit",
        kindAt,
        `\`${name}\` has ${indexes.length} indexes; a sharded collection can have at most 63 during the sync.`,
        { key: entryIndex < 0 },
      );

    if (entryIndex < 0 || !shardKey) continue;
    const keyAt = startPath(input, "sharding", "shardingEntries", entryIndex, "shardCollection", "key");
    if (!createSupporting && !indexes.some((ix) => supportsShardKey(ix, shardKey, c))) {
      const collation =
        c.collation !== "simple" ? ` with simple collation (the collection's is \`${c.collation}\`)` : "";
      out.add(
        "preflight-shard-key-index",
        keyAt,
        `\`${name}\` has no index on the source that supports the shard key ${keyText(shardKey)}${collation}, and createSupportingIndexes is not set.`,
      );
    }
    for (const ix of indexes)
      if (ix.unique && ix.name !== "_id_" && !prefixedBy(ix.key, shardKey))
        out.add(
          "preflight-unique-index-shard-key",
          keyAt,
          `\`${name}\` has the unique index \`${ix.name}\` ${keyText(ix.key)}, which does not begin with the shard key ${keyText(shardKey)}.`,
        );
  }
  if (unreadIndexes.length > 0)
    out.notChecked(
      clusterPath(src.name),
      "the indexes of " +
        unreadIndexes.slice(0, 5).join(", ") +
        (unreadIndexes.length > 5 ? ` and ${unreadIndexes.length - 5} more` : ""),
      "listIndexes failed",
    );
}
