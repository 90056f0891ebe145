/**
 * Answer types of the sync service and the verifier, and the field descriptors the lenient
 * answer checker (check.ts) walks.
 *
 * Three things must agree, and nothing is written twice unchecked:
 * - `schemas/*.schema.json` (the documentation editors and readers see),
 * - the descriptors below (what the checker enforces at run time, without ajv: the runner
 *   checks 256 answers a second and must not compile a schema at start-up),
 * - the TypeScript interfaces (what the runner codes against).
 * The interfaces are checked against the descriptors at compile time (`_checks` at the end);
 * test/api/schema-agreement.test.ts checks the descriptors against the schemas, and that ajv
 * and the checker agree on sample answers.
 */
import { atLeast, mayBeAbsent, progressField } from "./versions.js";

/**
 * States, in the sync's order (service facts, "States"): INITIALIZING from 1.20, REVERSING
 * between a reverse and RUNNING the other way. Which version has which is src/api/versions.ts.
 */
export const SYNC_STATES = [
  "IDLE",
  "INITIALIZING",
  "RUNNING",
  "PAUSED",
  "COMMITTING",
  "COMMITTED",
  "REVERSING",
] as const;
export type SyncState = (typeof SYNC_STATES)[number];

/**
 * How a documented field may be absent:
 * - `required`: the answer is unusable without it (a transport-level "bad answer"),
 * - `expected`: documented; missing → a warning (reported once per instance and field),
 * - `optional`: documented for some versions only; missing is normal.
 * JSON Schema `required` = `required` + `expected`.
 */
export type Presence = "required" | "expected" | "optional";

export type FieldSpec =
  | {
      readonly type: "string";
      readonly presence: Presence;
      readonly nullable?: boolean;
      readonly enum?: readonly string[];
    }
  | {
      readonly type: "boolean" | "integer" | "number" | "array";
      readonly presence: Presence;
      readonly nullable?: boolean;
    }
  | { readonly type: "object"; readonly presence: Presence; readonly nullable?: boolean; readonly fields: FieldsSpec }
  | { readonly type: "any"; readonly presence: Presence };
export type FieldsSpec = { readonly [name: string]: FieldSpec };

const int = <P extends Presence, N extends boolean = false>(presence: P, nullable?: N) =>
  ({ type: "integer", presence, nullable: (nullable ?? false) as N }) as const;
const str = <P extends Presence, N extends boolean = false>(presence: P, nullable?: N) =>
  ({ type: "string", presence, nullable: (nullable ?? false) as N }) as const;

const num = <P extends Presence, N extends boolean = false>(presence: P, nullable?: N) =>
  ({ type: "number", presence, nullable: (nullable ?? false) as N }) as const;

/** The embedded verifier on one side (facts, 1.9: the six fields of `verification.source` / `.destination`). */
const VERIFICATION_SIDE = {
  phase: str("expected"),
  lagTimeSeconds: int("expected", true),
  totalCollectionCount: int("expected"),
  scannedCollectionCount: int("expected"),
  estimatedDocumentCount: int("optional"),
  hashedDocumentCount: int("optional"),
} as const satisfies FieldsSpec;

/** Fields of `progress` in a service progress answer (schemas/progress.schema.json#/$defs/progress). */
export const PROGRESS_SPEC = {
  state: { type: "string", presence: "required", nullable: false, enum: SYNC_STATES },
  canCommit: { type: "boolean", presence: "expected", nullable: false },
  canWrite: { type: "boolean", presence: "expected", nullable: true },
  info: str("expected", true),
  lagTimeSeconds: int("expected", true),
  // the ids and the applied events count (1.3, 1.8): no documentation example carries them, and the
  // examples are real answers (src/api/versions.ts, `examplesLack`): never expected
  totalEventsApplied: int("optional", true),
  collectionCopy: {
    type: "object",
    presence: "expected",
    nullable: true,
    fields: { estimatedTotalBytes: int("expected"), estimatedCopiedBytes: int("expected") },
  },
  directionMapping: {
    type: "object",
    presence: "expected",
    nullable: true,
    fields: { Source: str("expected"), Destination: str("expected") },
  },
  mongosyncID: str("optional", true),
  coordinatorID: str("optional", true),
  verification: {
    type: "object",
    presence: "optional",
    nullable: true,
    fields: {
      source: { type: "object", presence: "expected", nullable: false, fields: VERIFICATION_SIDE },
      destination: { type: "object", presence: "expected", nullable: false, fields: VERIFICATION_SIDE },
    },
  },
  // From here on, fields of later versions (src/api/versions.ts, PROGRESS_FIELDS): optional in
  // the version-less descriptor, expected by a client that knows the fleet's version
  // (`progressResponseSpec`) unless the service omits them where they do not apply. Null in
  // IDLE like every field but state and canCommit.
  estimatedSecondsToCEACatchup: num("optional", true),
  /** `source.pingLatencyMs` (1.17): absent under 1 ms or before the first ping; -1 when the last ping failed. */
  source: { type: "object", presence: "optional", nullable: true, fields: { pingLatencyMs: num("optional", true) } },
  destination: {
    type: "object",
    presence: "optional",
    nullable: true,
    fields: { pingLatencyMs: num("optional", true) },
  },
  indexBuilding: { type: "object", presence: "optional", nullable: true, fields: {} },
  /** A human string ("45 minutes", "less than 15 minutes", "not checked yet"): kept as sent. */
  estimatedOplogTimeRemaining: { type: "any", presence: "optional" },
  warnings: { type: "array", presence: "optional", nullable: true },
  lag: {
    type: "object",
    presence: "optional",
    nullable: true,
    fields: {
      overallLagSeconds: num("expected", true),
      crudLagSeconds: num("expected", true),
      ddlLagSeconds: num("expected", true),
    },
  },
  ceaStage: str("optional", true),
} as const satisfies FieldsSpec;

/** Top level of a progress answer (schemas/progress.schema.json). `success` is absent in older versions. */
export const PROGRESS_RESPONSE_SPEC = {
  success: { type: "boolean", presence: "optional", nullable: false },
  progress: { type: "object", presence: "required", nullable: false, fields: PROGRESS_SPEC },
} as const satisfies FieldsSpec;

/**
 * The progress answer's descriptor for a fleet of `version` (the runbook's `serviceVersion`, the
 * lowest any instance runs): the fields that version documents (src/api/versions.ts) are
 * expected, so an answer without them is reported once, as any missing documented field is; the
 * fields it does not have yet are optional (a 1.2 answer has no ids), and so are those a real
 * answer of the version may lack (`mayBeAbsent`: the documentation's own examples lack the ids).
 * Without a version, the version-less descriptor (the contract's fields that every example
 * carries expected, later fields optional).
 */
export function progressResponseSpec(version: string | undefined): FieldsSpec {
  if (version === undefined) return PROGRESS_RESPONSE_SPEC;
  const expect = (name: string, f: FieldSpec): FieldSpec => {
    const row = progressField(name);
    if (row === undefined || f.presence === "required") return f;
    // omitted where it does not apply, or lacking from an example answer: never expected, whatever the version
    return { ...f, presence: !mayBeAbsent(row) && atLeast(version, row.since) ? "expected" : "optional" };
  };
  const progress: Record<string, FieldSpec> = {};
  for (const [k, f] of Object.entries<FieldSpec>(PROGRESS_SPEC)) progress[k] = expect(k, f);
  return {
    success: expect("success", PROGRESS_RESPONSE_SPEC.success),
    progress: { ...PROGRESS_RESPONSE_SPEC.progress, fields: progress },
  };
}

/** schemas/operation-response.schema.json; `error`/`errorDescription` are required when success is false. */
export const OPERATION_RESPONSE_SPEC = {
  success: { type: "boolean", presence: "required", nullable: false },
  error: str("optional"),
  errorDescription: str("optional"),
} as const satisfies FieldsSpec;

/** schemas/verifier-progress.schema.json#/$defs/generationStats. */
const GENERATION_STATS_FIELDS = {
  docsCompared: int("expected"),
  totalDocs: int("expected"),
  srcBytesCompared: int("expected"),
  // omitted while 0 by the published verifier
  totalSrcBytes: int("optional"),
  totalNamespaces: int("optional"),
} as const satisfies FieldsSpec;

/** schemas/verifier-progress.schema.json#/$defs/progress. */
export const VERIFIER_PROGRESS_SPEC = {
  phase: { type: "string", presence: "required", nullable: false },
  error: { type: "any", presence: "expected" },
  verificationStatus: {
    type: "object",
    presence: "expected",
    nullable: false,
    fields: {
      totalTasks: int("expected"),
      addedTasks: int("expected"),
      processingTasks: int("expected"),
      failedTasks: int("expected"),
      completedTasks: int("expected"),
      metadataMismatchTasks: int("expected"),
      // the contract's seventh counter; the published verifier has six (service facts)
      recheckTasks: int("optional"),
    },
  },
  generation: int("optional"),
  // the current generation's only (verifier statistics.go); gen0Stats generation 0's, from generation 1 (v0.1.10+)
  generationStats: { type: "object", presence: "optional", nullable: false, fields: GENERATION_STATS_FIELDS },
  gen0Stats: { type: "object", presence: "optional", nullable: false, fields: GENERATION_STATS_FIELDS },
  srcChangeStats: { type: "object", presence: "optional", nullable: false, fields: {} },
  dstChangeStats: { type: "object", presence: "optional", nullable: false, fields: {} },
} as const satisfies FieldsSpec;

export const VERIFIER_RESPONSE_SPEC = {
  progress: { type: "object", presence: "required", nullable: false, fields: VERIFIER_PROGRESS_SPEC },
} as const satisfies FieldsSpec;

// ---------------------------------------------------------------------------------------------
// Interfaces. Every documented field except hard-required ones is optional: answers are checked
// leniently, a missing field is reported (once) and left out. Fields this client does not know
// are kept on the object (`Extra`). A documented field with the wrong type is left out of the
// typed object (and reported); the raw answer keeps it.

/** Fields a newer service version sends that this client does not know; kept as sent. */
export type Extra = { readonly [field: string]: unknown };

export interface CollectionCopy {
  /** Estimated total bytes to copy, globally across all instances. */
  estimatedTotalBytes?: number;
  /** Estimated bytes copied by this instance (≤ estimatedTotalBytes). */
  estimatedCopiedBytes?: number;
}

export interface DirectionMapping {
  /** `<cluster_name>: <host>:<port>` */
  Source?: string;
  /** `<cluster_name>: <host>:<port>` */
  Destination?: string;
}

export interface VerificationSide {
  phase?: string;
  lagTimeSeconds?: number | null;
  totalCollectionCount?: number;
  scannedCollectionCount?: number;
  estimatedDocumentCount?: number;
  hashedDocumentCount?: number;
}

export interface ProgressFields {
  /**
   * Always present. A state this client does not know (a newer version) is passed through as
   * sent, with a warning: compare against the states you expect, never exhaustively.
   */
  state: SyncState;
  canCommit?: boolean;
  /** Null in IDLE; absent in older versions. */
  canWrite?: boolean | null;
  info?: string | null;
  /** Null in IDLE and PAUSED. */
  lagTimeSeconds?: number | null;
  totalEventsApplied?: number | null;
  collectionCopy?: (CollectionCopy & Extra) | null;
  directionMapping?: (DirectionMapping & Extra) | null;
  /** This instance (1.3+); null in IDLE. */
  mongosyncID?: string | null;
  /** The coordinator (1.3+); null in IDLE. */
  coordinatorID?: string | null;
  verification?: ({ source?: VerificationSide & Extra; destination?: VerificationSide & Extra } & Extra) | null;
  /** Seconds until change event application catches up (1.14+); null outside it. */
  estimatedSecondsToCEACatchup?: number | null;
  /** Round trip to the source cluster (1.17+): see `pingLatencyMs` in progress.ts. */
  source?: (PingFields & Extra) | null;
  /** Round trip to the destination cluster (1.17+). */
  destination?: (PingFields & Extra) | null;
  /** Index builds after the copy (1.19+); its fields are not documented. */
  indexBuilding?: Extra | null;
  /** 1.19+; its form is not documented. */
  estimatedOplogTimeRemaining?: unknown;
  /** Warnings the service raises (1.19+), each as sent. */
  warnings?: unknown[] | null;
  /** 1.21+: read `overallLagSeconds` when present (`lagTimeSeconds` is deprecated): see `lagSeconds`. */
  lag?: (LagFields & Extra) | null;
  /** Stage of change event application (1.22+). */
  ceaStage?: string | null;
}

export interface PingFields {
  /** Milliseconds; absent under 1 ms or before the first ping, -1 when the last ping failed. */
  pingLatencyMs?: number | null;
}

export interface LagFields {
  overallLagSeconds?: number | null;
  crudLagSeconds?: number | null;
  ddlLagSeconds?: number | null;
}
/** `progress` of a service progress answer. */
export type Progress = ProgressFields & Extra;

/** A successful progress answer (the older shape has no `success`). */
export type ProgressResponse = { success?: boolean; progress: Progress } & Extra;

/** The answer of start, commit, pause, resume, reverse (and every error answer). */
export type OperationResponse = { success: boolean; error?: string; errorDescription?: string } & Extra;

export interface VerificationStatus {
  totalTasks?: number;
  addedTasks?: number;
  processingTasks?: number;
  /** Above 0: the clusters differ. */
  failedTasks?: number;
  completedTasks?: number;
  /** Index, shard-key and collection-option differences (counted only here; they are failures too). */
  metadataMismatchTasks?: number;
  /** The contract's seventh counter; the published verifier does not send it. */
  recheckTasks?: number;
}

/** schemas/verifier-progress.schema.json#/$defs/generationStats. */
export type GenerationStatsFields = {
  docsCompared?: number;
  totalDocs?: number;
  srcBytesCompared?: number;
  totalSrcBytes?: number;
  totalNamespaces?: number;
} & Extra;

export interface VerifierProgressFields {
  /** `idle`, `check`, `recheck`, … (`idle` is also the phase before any check). */
  phase: string;
  /** Null when fine; anything else: the verifier itself failed. */
  error?: unknown;
  /** The current generation's counters (they start over at every generation). */
  verificationStatus?: VerificationStatus & Extra;
  /** 0 for the first pass; each recheck pass is the next generation. */
  generation?: number;
  /** The current generation's amounts only (not the verification's total): src/text.ts `verifierDocsText`. */
  generationStats?: GenerationStatsFields;
  /** Generation 0's final amounts: absent during generation 0, and before verifier v0.1.10. */
  gen0Stats?: GenerationStatsFields;
  srcChangeStats?: Extra;
  dstChangeStats?: Extra;
}
/** `progress` of a verifier progress answer. */
export type VerifierProgress = VerifierProgressFields & Extra;
export type VerifierProgressResponse = { progress: VerifierProgress } & Extra;

// ---------------------------------------------------------------------------------------------
// Compile-time agreement of the interfaces with the descriptors: same keys, same optionality,
// same value types (mutual assignability, recursively through nested objects).

type Scalar<S> = S extends { type: "any" }
  ? unknown
  : S extends { type: "array" }
    ? unknown[]
    : S extends { enum: readonly (infer E)[] }
      ? E
      : S extends { type: "string" }
        ? string
        : S extends { type: "boolean" }
          ? boolean
          : S extends { type: "integer" | "number" }
            ? number
            : S extends { type: "object"; fields: infer F }
              ? Shape<F> & Extra
              : never;
type Value<S> = Scalar<S> | (S extends { nullable: true } ? null : never);
type RequiredKeys<F> = { [K in keyof F]: F[K] extends { presence: "required" } ? K : never }[keyof F];
/** The type a descriptor describes. */
export type Shape<F> = { [K in RequiredKeys<F>]: Value<F[K]> } & {
  [K in Exclude<keyof F, RequiredKeys<F>>]?: Value<F[K]>;
};

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SameKeys<A, B> = Same<keyof A, keyof B>;
type Assert<T extends true> = T;

export type _checks = [
  Assert<SameKeys<ProgressFields, typeof PROGRESS_SPEC>>,
  Assert<Same<Progress, Shape<typeof PROGRESS_SPEC> & Extra>>,
  Assert<Same<ProgressResponse, Shape<typeof PROGRESS_RESPONSE_SPEC> & Extra>>,
  Assert<Same<OperationResponse, Shape<typeof OPERATION_RESPONSE_SPEC> & Extra>>,
  Assert<SameKeys<VerifierProgressFields, typeof VERIFIER_PROGRESS_SPEC>>,
  Assert<Same<VerifierProgress, Shape<typeof VERIFIER_PROGRESS_SPEC> & Extra>>,
  Assert<Same<VerifierProgressResponse, Shape<typeof VERIFIER_RESPONSE_SPEC> & Extra>>,
];
