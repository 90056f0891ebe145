/**
 * Validation of the start request body, as the simulated service version sees it: the shape
 * (each field, its type, the values that version knows) and then the rules between fields, each
 * with the spec or facts sentence it enforces. Written here rather than taken from
 * schemas/start-request.schema.json: the simulator keeps its own model of the service (a field
 * newer than the simulated version must be refused, which one shared schema cannot say), and the
 * simulator then needs no schema compiler at start-up.
 *
 * A field the simulated version does not know is refused exactly like a misspelt one
 * (`unknown field "x" in the body`): an older service cannot know that a field is from the future.
 */
import { compareVersions } from "./units.js";
import { BUILD_INDEXES_SINCE, START_FIELDS, WRITE_BLOCKING_SINCE, atLeast } from "./versions.js";

export type Topology = "replicaSet" | "sharded";

/** One of the service's cluster settings (`cluster0`, `cluster1`). */
export interface ClusterSetting {
  topology: Topology;
  /** `host:port` shown in directionMapping (default 127.0.0.1:27017 + position). */
  host?: string;
  /** Number of shards of a sharded cluster (default 2); reversible needs equal counts. */
  shards?: number;
  /** Server version (default "7.0"); write blocking needs 6.0 or newer on the source. */
  version?: string;
}

export interface RegexFilter {
  pattern: string;
  options?: string;
}
export interface FilterEntry {
  database?: string;
  collections?: string[];
  collectionsRegex?: RegexFilter;
  databaseRegex?: RegexFilter;
}
export interface ShardingEntry {
  database: string;
  collection: string;
  shardCollection: { key: Record<string, number | "hashed">[] };
}
export type BuildIndexes = "beforeDataCopy" | "never" | "excludeHashed" | "afterDataCopy" | "excludeHashedAfterCopy";
/** The start body as the service accepts it. */
export interface StartRequest {
  source: string;
  destination: string;
  buildIndexes?: BuildIndexes;
  reversible?: boolean;
  enableUserWriteBlocking?: boolean | "sourceAndDestination" | "destinationOnly" | "none";
  includeNamespaces?: FilterEntry[];
  excludeNamespaces?: FilterEntry[];
  sharding?: { createSupportingIndexes?: boolean; shardingEntries: ShardingEntry[] };
  verification?: { enabled?: boolean };
  preExistingDestinationData?: boolean;
  copyInNaturalOrder?: { database: string; collections: string[] }[];
  detectRandomId?: boolean;
  skipDiskSpaceCheck?: boolean;
}

export interface StartContext {
  clusters: Record<string, ClusterSetting>;
  serviceVersion: string;
}

export type StartCheck = { ok: true; body: StartRequest } | { ok: false; description: string };
export type StartValidator = (body: unknown, ctx: StartContext) => StartCheck;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Thrown inside the shape walk; caught once, into a refusal. */
class Invalid extends Error {}
const invalid = (where: string, what: string): never => {
  throw new Invalid(`${where} ${what}`);
};

function known(where: string, o: Json, keys: readonly string[]): void {
  for (const k of Object.keys(o))
    if (!keys.includes(k)) invalid(`unknown field ${JSON.stringify(k)} in`, where === "" ? "the body" : where);
}
function str(where: string, v: unknown, nonEmpty = true): string {
  if (typeof v !== "string") return invalid(where, "must be string");
  if (nonEmpty && v === "") return invalid(where, "must NOT have fewer than 1 characters");
  return v;
}
function bool(where: string, v: unknown): boolean {
  if (typeof v !== "boolean") return invalid(where, "must be boolean");
  return v;
}
function arr(where: string, v: unknown, minItems = 0): unknown[] {
  if (!Array.isArray(v)) return invalid(where, "must be array");
  if (v.length < minItems) return invalid(where, `must NOT have fewer than ${minItems} items`);
  return v;
}
function obj(where: string, v: unknown): Json {
  if (!isObject(v)) return invalid(where, "must be object");
  return v;
}
function required(where: string, o: Json, key: string): void {
  if (!Object.hasOwn(o, key)) invalid(where === "" ? "the body" : where, `is missing the required field "${key}"`);
}

function regex(where: string, v: unknown): void {
  const r = obj(where, v);
  known(where, r, ["pattern", "options"]);
  required(where, r, "pattern");
  str(`${where}/pattern`, r.pattern);
  if (r.options !== undefined && !/^[imsx]*$/.test(str(`${where}/options`, r.options, false)))
    invalid(`${where}/options`, "must be any of the option letters i, m, s, x");
}

function filterEntries(where: string, v: unknown): void {
  for (const [i, e] of arr(where, v, 1).entries()) {
    const w = `${where}/${i}`;
    const entry = obj(w, e);
    // facts: "Filter entry (include and exclude): `database` or `databaseRegex`, plus optionally
    // `collections` (names) or `collectionsRegex`." There is no `collectionRegex`.
    known(w, entry, ["database", "databaseRegex", "collections", "collectionsRegex"]);
    if (entry.database === undefined && entry.databaseRegex === undefined)
      invalid(w, `is missing the required field "database" (or "databaseRegex")`);
    if (entry.database !== undefined && entry.databaseRegex !== undefined)
      invalid(w, "gives both database and databaseRegex; give one");
    if (entry.collections !== undefined && entry.collectionsRegex !== undefined)
      invalid(w, "gives both collections and collectionsRegex; give one");
    if (entry.database !== undefined) str(`${w}/database`, entry.database);
    if (entry.databaseRegex !== undefined) regex(`${w}/databaseRegex`, entry.databaseRegex);
    if (entry.collections !== undefined)
      for (const [j, c] of arr(`${w}/collections`, entry.collections).entries()) str(`${w}/collections/${j}`, c);
    if (entry.collectionsRegex !== undefined) regex(`${w}/collectionsRegex`, entry.collectionsRegex);
  }
}

function sharding(where: string, v: unknown): void {
  const s = obj(where, v);
  known(where, s, ["createSupportingIndexes", "shardingEntries"]);
  required(where, s, "shardingEntries");
  if (s.createSupportingIndexes !== undefined) bool(`${where}/createSupportingIndexes`, s.createSupportingIndexes);
  for (const [i, e] of arr(`${where}/shardingEntries`, s.shardingEntries).entries()) {
    const w = `${where}/shardingEntries/${i}`;
    const entry = obj(w, e);
    known(w, entry, ["database", "collection", "shardCollection"]);
    for (const k of ["database", "collection", "shardCollection"]) required(w, entry, k);
    str(`${w}/database`, entry.database);
    str(`${w}/collection`, entry.collection);
    const sc = obj(`${w}/shardCollection`, entry.shardCollection);
    known(`${w}/shardCollection`, sc, ["key"]);
    required(`${w}/shardCollection`, sc, "key");
    for (const [j, k] of arr(`${w}/shardCollection/key`, sc.key, 1).entries()) {
      const kw = `${w}/shardCollection/key/${j}`;
      const field = obj(kw, k);
      const n = Object.keys(field).length;
      if (n !== 1)
        invalid(kw, n === 0 ? "must NOT have fewer than 1 properties" : "must NOT have more than 1 properties");
    }
  }
}

/** The shape, as this version knows it. Throws Invalid. */
function checkShape(body: Json, v: string): void {
  // A field this version does not know (newer, or removed) is an unknown field like any other.
  const fields = Object.keys(START_FIELDS).filter((k) => {
    const f = START_FIELDS[k]!;
    return atLeast(v, f.since) && (f.until === undefined || !atLeast(v, f.until));
  });
  known("", body, fields);
  required("", body, "source");
  required("", body, "destination");
  str("/source", body.source);
  str("/destination", body.destination);
  if (body.buildIndexes !== undefined) {
    const values = Object.keys(BUILD_INDEXES_SINCE).filter((x) => atLeast(v, BUILD_INDEXES_SINCE[x]!));
    if (typeof body.buildIndexes !== "string" || !values.includes(body.buildIndexes))
      invalid("/buildIndexes", `must be one of ${values.map((x) => JSON.stringify(x)).join(", ")}`);
  }
  if (body.reversible !== undefined) bool("/reversible", body.reversible);
  if (body.enableUserWriteBlocking !== undefined) {
    const values = Object.keys(WRITE_BLOCKING_SINCE).filter((x) => atLeast(v, WRITE_BLOCKING_SINCE[x]!));
    const w = body.enableUserWriteBlocking;
    if (typeof w !== "boolean" && !(typeof w === "string" && values.includes(w)))
      invalid(
        "/enableUserWriteBlocking",
        values.length
          ? `must be boolean or one of ${values.map((x) => JSON.stringify(x)).join(", ")}`
          : "must be boolean",
      );
  }
  if (body.includeNamespaces !== undefined) filterEntries("/includeNamespaces", body.includeNamespaces);
  if (body.excludeNamespaces !== undefined) filterEntries("/excludeNamespaces", body.excludeNamespaces);
  if (body.sharding !== undefined) sharding("/sharding", body.sharding);
  if (body.verification !== undefined) {
    const ver = obj("/verification", body.verification);
    known("/verification", ver, ["enabled"]);
    if (ver.enabled !== undefined) bool("/verification/enabled", ver.enabled);
  }
  for (const k of ["preExistingDestinationData", "detectRandomId", "skipDiskSpaceCheck"])
    if (body[k] !== undefined) bool(`/${k}`, body[k]);
  // facts: "`copyInNaturalOrder` | 1.16 | **array of documents**, each a database and its collections"
  if (body.copyInNaturalOrder !== undefined) {
    if (!Array.isArray(body.copyInNaturalOrder))
      invalid("/copyInNaturalOrder", "must be an array of { database, collections }");
    for (const [i, e] of (body.copyInNaturalOrder as unknown[]).entries()) {
      const w = `/copyInNaturalOrder/${i}`;
      const entry = obj(w, e);
      known(w, entry, ["database", "collections"]);
      required(w, entry, "database");
      required(w, entry, "collections");
      str(`${w}/database`, entry.database);
      if (!Array.isArray(entry.collections) || entry.collections.some((c) => typeof c !== "string"))
        invalid(`${w}/collections`, "must be an array of strings");
    }
  }
}

/** Returns the start validator (synchronous; kept a function so callers need not change). */
export function loadStartValidator(): StartValidator {
  return (body, ctx) => {
    if (!isObject(body)) return { ok: false, description: "the start body must be a JSON object" };
    try {
      checkShape(body, ctx.serviceVersion);
    } catch (err) {
      if (err instanceof Invalid) return { ok: false, description: `invalid start request: ${err.message}` };
      throw err;
    }
    return checkRules(body as unknown as StartRequest, ctx);
  };
}

const writeBlockingOn = (v: StartRequest["enableUserWriteBlocking"]): boolean =>
  v === true || v === "sourceAndDestination" || v === "destinationOnly";
const writeBlockingBoth = (v: StartRequest["enableUserWriteBlocking"]): boolean =>
  v === true || v === "sourceAndDestination";

function checkRegex(where: string, r: RegexFilter | undefined): string | undefined {
  if (!r) return undefined;
  // The service's regexes are PCRE; JavaScript's RegExp is close enough to reject garbage.
  // The `x` option (extended) is left to the service: JavaScript has no such flag.
  try {
    new RegExp(r.pattern, (r.options ?? "").replace(/x/g, ""));
  } catch (err) {
    return `${where}.pattern is not a valid regular expression: ${(err as Error).message}`;
  }
  return undefined;
}

/** The rules between fields, after the shape is known good. */
export function checkRules(body: StartRequest, ctx: StartContext): StartCheck {
  const no = (description: string): StartCheck => ({ ok: false, description });
  const v = ctx.serviceVersion;
  const names = Object.keys(ctx.clusters);
  // "Name of the source cluster (one of the configured cluster settings)."
  const src = Object.hasOwn(ctx.clusters, body.source) ? ctx.clusters[body.source] : undefined;
  const dst = Object.hasOwn(ctx.clusters, body.destination) ? ctx.clusters[body.destination] : undefined;
  if (!src)
    return no(`unknown source cluster "${body.source}": the configured cluster settings are ${names.join(", ")}`);
  if (!dst)
    return no(
      `unknown destination cluster "${body.destination}": the configured cluster settings are ${names.join(", ")}`,
    );
  if (body.source === body.destination) return no(`source and destination are both "${body.source}"`);

  const rsToSharded = src.topology === "replicaSet" && dst.topology === "sharded";
  // Errors 3: "Start fails with an error when syncing from a replica set to a sharded cluster without `sharding`."
  if (rsToSharded && body.sharding === undefined)
    return no(
      `syncing from a replica set (${body.source}) to a sharded cluster (${body.destination}) requires "sharding"`,
    );
  // Errors 4: "Start fails with an error when `sharding` is set in any configuration other than a replica-set-to-sharded-cluster sync."
  if (!rsToSharded && body.sharding !== undefined)
    return no(
      `"sharding" is only allowed from a replica set to a sharded cluster (this is ${src.topology} → ${dst.topology})`,
    );

  const seen = new Set<string>();
  for (const [i, e] of (body.sharding?.shardingEntries ?? []).entries()) {
    const ns = `${e.database}.${e.collection}`;
    if (seen.has(ns)) return no(`sharding.shardingEntries[${i}]: ${ns} is listed twice`);
    seen.add(ns);
    for (const [j, k] of e.shardCollection.key.entries()) {
      const [field, dir] = Object.entries(k)[0]!;
      if (dir !== 1 && dir !== "hashed")
        return no(
          `sharding.shardingEntries[${i}].shardCollection.key[${j}]: "${field}" must map to 1 or "hashed", got ${JSON.stringify(dir)}`,
        );
    }
    if (e.shardCollection.key.filter((k) => Object.values(k)[0] === "hashed").length > 1)
      return no(`sharding.shardingEntries[${i}]: a shard key can have at most one hashed field`);
  }

  for (const field of ["includeNamespaces", "excludeNamespaces"] as const) {
    for (const [i, e] of (body[field] ?? []).entries()) {
      const bad =
        checkRegex(`${field}[${i}].collectionsRegex`, e.collectionsRegex) ??
        checkRegex(`${field}[${i}].databaseRegex`, e.databaseRegex);
      if (bad) return no(bad);
    }
  }

  // facts: enableUserWriteBlocking "needs a source of server 6.0+"
  if (writeBlockingOn(body.enableUserWriteBlocking) && compareVersions(src.version ?? "7.0", "6.0") < 0)
    return no(`enableUserWriteBlocking needs a source of version 6.0 or newer (${body.source} is ${src.version})`);

  if (body.reversible === true) {
    // facts: "Documented refusals: `start` with `buildIndexes: "never"` and `reversible: true`"
    if (body.buildIndexes === "never") return no(`reversible is not supported with buildIndexes "never"`);
    // facts: reversible "refused: replica set → sharded"
    if (rsToSharded) return no("reversible is not supported from a replica set to a sharded cluster");
    // facts: "sharded clusters with different shard counts"
    if (src.topology === "sharded" && dst.topology === "sharded" && (src.shards ?? 2) !== (dst.shards ?? 2))
      return no(
        `reversible is not supported between sharded clusters with different numbers of shards (${src.shards ?? 2} and ${dst.shards ?? 2})`,
      );
    // facts: "before 1.20 `reversible` needed it on source and destination"
    if (!atLeast(v, "1.20") && !writeBlockingBoth(body.enableUserWriteBlocking))
      return no(`reversible requires enableUserWriteBlocking true (or "sourceAndDestination")`);
  }
  const refused = refusedCombination(body, src, dst, v);
  if (refused) return no(refused);
  return { ok: true, body };
}

/**
 * The start-body combinations the documentation refuses or does not support (facts, "start body,
 * by version": the list under "Combinations the documentation refuses or does not support"),
 * refused as the service refuses: a description, no `success`. Not published: which error name
 * the service gives them (the simulator says InvalidRequest like every refused start).
 */
function refusedCombination(
  body: StartRequest,
  src: ClusterSetting,
  dst: ClusterSetting,
  v: string,
): string | undefined {
  const filtered = (body.includeNamespaces?.length ?? 0) > 0 || (body.excludeNamespaces?.length ?? 0) > 0;
  const major = (version: string | undefined): string => (version ?? "7.0").split(".")[0]!;
  const srcBelow6 = compareVersions(src.version ?? "7.0", "6.0") < 0;
  // "`databaseRegex`, `collectionsRegex` in a filter entry | 1.6": unknown fields before
  const entries = [...(body.includeNamespaces ?? []), ...(body.excludeNamespaces ?? [])];
  if (!atLeast(v, "1.6") && entries.some((e) => e.databaseRegex !== undefined || e.collectionsRegex !== undefined))
    return `invalid start request: a filter entry has an unknown field (databaseRegex and collectionsRegex are 1.6 features; this service is ${v})`;
  // "`reversible` with a namespace filter (include or exclude): not supported."
  if (body.reversible === true && filtered) return "reversible is not supported with a namespace filter";
  // "A namespace filter with dual write blocking (`"sourceAndDestination"`): not supported"
  if (filtered && writeBlockingBoth(body.enableUserWriteBlocking))
    return "a namespace filter is not supported with dual write blocking (sourceAndDestination)";
  // "`preExistingDestinationData: true` requires a namespace filter, and does not allow reverse."
  if (body.preExistingDestinationData === true && !filtered)
    return "preExistingDestinationData requires a namespace filter";
  if (body.preExistingDestinationData === true && body.reversible === true)
    return "preExistingDestinationData does not allow reversible";
  // "`reversible` between clusters of different topologies or different server major versions: no reverse."
  if (body.reversible === true && src.topology !== dst.topology)
    return `reversible is not supported between clusters of different topologies (${src.topology} and ${dst.topology})`;
  if (body.reversible === true && major(src.version) !== major(dst.version))
    return `reversible is not supported between clusters of different server major versions (${src.version ?? "7.0"} and ${dst.version ?? "7.0"})`;
  // "A source on server below 6.0: no `reversible`, no `"sourceAndDestination"`, no `createSupportingIndexes`."
  if (srcBelow6 && body.reversible === true) return `reversible needs a source of version 6.0 or newer`;
  if (srcBelow6 && body.sharding?.createSupportingIndexes === true)
    return `createSupportingIndexes needs a source of version 6.0 or newer`;
  // "1.19 dropped sources on 4.4 and destinations on 6.0 [notes 1.19]; start refuses unsupported versions"
  if (atLeast(v, "1.19") && compareVersions(src.version ?? "7.0", "5.0") < 0)
    return `this service (${v}) does not support a source on server ${src.version} (dropped in 1.19)`;
  if (atLeast(v, "1.19") && major(dst.version) === "6" && compareVersions(dst.version ?? "7.0", "7.0") < 0)
    return `this service (${v}) does not support a destination on server ${dst.version} (dropped in 1.19)`;
  return undefined;
}

/** True when start asked for write blocking on the source too (writes after commit are then refused, not lost). */
export const blocksSourceWrites = (body: StartRequest | undefined): boolean =>
  body !== undefined && writeBlockingBoth(body.enableUserWriteBlocking);
