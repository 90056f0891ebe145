/**
 * Validation of the start request body: its shape with schemas/start-request.schema.json
 * (ajv, compiled once per process when the first simulator starts — the simulator is a
 * long-running server, so the ~50 ms of compiling once does not matter the way it does for
 * `lint`), then the rules between fields, in code, each with the spec sentence it enforces.
 */
import type { ErrorObject, ValidateFunction } from "ajv";
import schema from "../../schemas/start-request.schema.json" with { type: "json" };
import { compareVersions } from "./units.js";

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
  collectionRegex?: RegexFilter;
}
export interface ShardingEntry {
  database: string;
  collection: string;
  shardCollection: { key: Record<string, number | "hashed">[] };
}
/** The start body as the service accepts it. */
export interface StartRequest {
  source: string;
  destination: string;
  buildIndexes?: "beforeDataCopy" | "never" | "afterDataCopy" | "excludeHashedAfterCopy";
  reversible?: boolean;
  enableUserWriteBlocking?: boolean | "sourceAndDestination" | "destinationOnly" | "none";
  includeNamespaces?: FilterEntry[];
  excludeNamespaces?: FilterEntry[];
  sharding?: { createSupportingIndexes?: boolean; shardingEntries: ShardingEntry[] };
  verification?: { enabled?: boolean };
}

export interface StartContext {
  clusters: Record<string, ClusterSetting>;
  serviceVersion: string;
}

export type StartCheck = { ok: true; body: StartRequest } | { ok: false; description: string };
export type StartValidator = (body: unknown, ctx: StartContext) => StartCheck;

// A memoized compiled schema: the same for every simulator in the process, never mutated.
let compiled: Promise<ValidateFunction> | undefined;

async function compile(): Promise<ValidateFunction> {
  // the named export under Node's CommonJS interop; only `default` once bundled (dist/cli)
  const ajvModule = await import("ajv/dist/2020.js");
  const Ajv2020 = ajvModule.Ajv2020 ?? ajvModule.default;
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  return ajv.compile(schema);
}

/** Loads (once) and returns the start validator. */
export async function loadStartValidator(): Promise<StartValidator> {
  compiled ??= compile();
  const validate = await compiled;
  return (body, ctx) => {
    if (typeof body !== "object" || body === null || Array.isArray(body))
      return { ok: false, description: "the start body must be a JSON object" };
    if (!validate(body)) return { ok: false, description: describeSchemaErrors(validate.errors ?? []) };
    return checkRules(body as StartRequest, ctx);
  };
}

/** ajv errors → one readable sentence (the most specific few, no anyOf noise). */
export function describeSchemaErrors(errors: ErrorObject[]): string {
  const specific = errors.filter((e) => e.keyword !== "anyOf" && e.keyword !== "if");
  const chosen = (specific.length > 0 ? specific : errors).slice(0, 3);
  const parts = chosen.map((e) => {
    const where = e.instancePath === "" ? "the body" : e.instancePath;
    if (e.keyword === "additionalProperties")
      return `unknown field "${String((e.params as { additionalProperty: string }).additionalProperty)}" in ${where}`;
    if (e.keyword === "required")
      return `${where} is missing the required field "${String((e.params as { missingProperty: string }).missingProperty)}"`;
    if (e.keyword === "enum")
      return `${where} must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(", ")}`;
    return `${where} ${e.message ?? "is invalid"}`;
  });
  return `invalid start request: ${[...new Set(parts)].join("; ")}`;
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

function checkFilters(
  field: "includeNamespaces" | "excludeNamespaces",
  entries: FilterEntry[] | undefined,
  regexOk: boolean,
): string | undefined {
  for (const [i, e] of (entries ?? []).entries()) {
    const where = `${field}[${i}]`;
    if (e.database !== undefined && e.databaseRegex !== undefined)
      return `${where}: give either database or databaseRegex, not both`;
    if (e.collectionsRegex !== undefined && e.collectionRegex !== undefined)
      return `${where}: collectionsRegex and collectionRegex are the same selector under two names; give one`;
    if (!regexOk && (e.databaseRegex !== undefined || e.collectionRegex !== undefined))
      return `${where}: databaseRegex and collectionRegex need service version 1.6 or newer`;
    const bad =
      checkRegex(`${where}.collectionsRegex`, e.collectionsRegex) ??
      checkRegex(`${where}.databaseRegex`, e.databaseRegex) ??
      checkRegex(`${where}.collectionRegex`, e.collectionRegex);
    if (bad) return bad;
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

  // Versioning: sharding and includeNamespaces 1.1; buildIndexes 1.3.0; exclude filter 1.6;
  // embedded verifier 1.9. A field the deployed version does not know is an unknown field.
  const gates: [keyof StartRequest, string][] = [
    ["includeNamespaces", "1.1"],
    ["sharding", "1.1"],
    ["buildIndexes", "1.3.0"],
    ["excludeNamespaces", "1.6"],
    ["verification", "1.9"],
  ];
  for (const [field, since] of gates) {
    if (body[field] !== undefined && compareVersions(v, since) < 0)
      return no(`unknown field "${field}": it needs service version ${since} or newer (this one is ${v})`);
  }

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

  const regexOk = compareVersions(v, "1.6") >= 0;
  const badFilter =
    checkFilters("includeNamespaces", body.includeNamespaces, regexOk) ??
    checkFilters("excludeNamespaces", body.excludeNamespaces, regexOk);
  if (badFilter) return no(badFilter);

  // facts: enableUserWriteBlocking is "Not settable with a source older than 6.0."
  if (writeBlockingOn(body.enableUserWriteBlocking) && compareVersions(src.version ?? "7.0", "6.0") < 0)
    return no(`enableUserWriteBlocking needs a source of version 6.0 or newer (${body.source} is ${src.version})`);

  if (body.reversible === true) {
    // facts: "`never` together with `reversible: true` is rejected by start."
    if (body.buildIndexes === "never") return no(`reversible is not supported with buildIndexes "never"`);
    // facts: reversible "is not supported: from a replica set to a sharded cluster".
    if (rsToSharded) return no("reversible is not supported from a replica set to a sharded cluster");
    // facts: "... between sharded clusters with different numbers of shards".
    if (src.topology === "sharded" && dst.topology === "sharded" && (src.shards ?? 2) !== (dst.shards ?? 2))
      return no(
        `reversible is not supported between sharded clusters with different numbers of shards (${src.shards ?? 2} and ${dst.shards ?? 2})`,
      );
    // spec: reversible is "Used together with enableUserWriteBlocking"; facts: reverse needs
    // "write blocking on source and destination".
    if (!writeBlockingBoth(body.enableUserWriteBlocking))
      return no(`reversible requires enableUserWriteBlocking true (or "sourceAndDestination")`);
  }
  return { ok: true, body };
}

/** True when start asked for write blocking on both sides (what reverse needs). */
export const blocksWritesOnBothSides = (body: StartRequest): boolean => writeBlockingBoth(body.enableUserWriteBlocking);
