/**
 * The sync service by version: the runner's one table of what each version of the service has
 * (start fields and their values, progress fields, states, refusals, behaviour changes). Lint,
 * the format's descriptions (a test holds schemas/runbook.schema.json to it), the client's
 * answer checks and `--dry-run` read it; nothing else writes a version number down.
 *
 * Every row cites its line of spec/service-facts.md (or of the contract, sync-service-api.md):
 * `cite.text` is a verbatim part of that line, and test/api/versions.test.ts checks both the
 * quote and that the row says what the quote says. The simulator keeps its own table
 * (src/sim/versions.ts) on purpose: a test double that shared this one could not catch it being
 * wrong. Versions are the service's ("1.9" = from 1.9 on); `until` is the first version without.
 */
import type { SyncState } from "./types.js";

/** Where a row comes from: a line of one of the two documents, and a verbatim part of it. */
export interface Cite {
  file: "service-facts.md" | "sync-service-api.md";
  line: number;
  text: string;
}

const facts = (line: number, text: string): Cite => ({ file: "service-facts.md", line, text });
const contract = (line: number, text: string): Cite => ({ file: "sync-service-api.md", line, text });

/** Compare dotted versions: negative when a < b. Missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * `version` is `since` or newer (`since` undefined: every version): the one spelling of "at
 * least", for service and server versions alike.
 */
export function atLeast(version: string, since: string | undefined): boolean {
  return since === undefined || compareVersions(version, since) >= 0;
}

/** A runbook (or anything with its `serviceVersion`) declares a service version, and it is at least `since` (undeclared: false, nothing can tell). */
export function serviceAtLeast(declares: { readonly serviceVersion?: string | undefined }, since: string): boolean {
  return declares.serviceVersion !== undefined && atLeast(declares.serviceVersion, since);
}

/** The oldest version the tables speak of: a row from it on is in every version a runbook meets. */
export const OLDEST_VERSION = "1.0";

/** A value of a start field that came with a version of its own. */
export interface ValueRow {
  value: string | boolean;
  since?: string;
  /** What it means, for messages and descriptions. */
  means?: string;
}

export interface StartFieldRow {
  field: string;
  /** First version that has it (undefined: every version, the table's "—"). */
  since?: string;
  /** First version that no longer has it. */
  until?: string;
  /** Values with versions of their own (a field without them takes any value of its type). */
  values?: readonly ValueRow[];
  cite: Cite;
}

/** Top-level fields of the start body (facts: "All of these are top-level fields of the start body"). */
export const START_FIELDS: readonly StartFieldRow[] = [
  { field: "source", cite: contract(23, "| source | string | yes |") },
  { field: "destination", cite: contract(24, "| destination | string | yes |") },
  { field: "includeNamespaces", since: "1.1", cite: facts(108, "| `includeNamespaces` | 1.1 |") },
  { field: "sharding", since: "1.1", cite: facts(109, "| `sharding` | 1.1 |") },
  { field: "excludeNamespaces", since: "1.6", cite: facts(110, "| `excludeNamespaces` | 1.6 |") },
  {
    field: "buildIndexes",
    since: "1.3",
    values: [
      { value: "beforeDataCopy", since: "1.3", means: "the default before 1.17, or with a source older than 6.0" },
      { value: "never", since: "1.3", means: "only `_id` and placeholder shard-key indexes" },
      { value: "excludeHashed", since: "1.14", means: "no hashed indexes" },
      { value: "afterDataCopy", since: "1.16", means: "indexes built after the collection copy" },
      { value: "excludeHashedAfterCopy", since: "1.16", means: "after the copy, without hashed indexes" },
    ],
    cite: facts(
      112,
      "| `buildIndexes` | 1.3 | `beforeDataCopy` (default), `never` (1.3); `excludeHashed` (1.14); `afterDataCopy`, `excludeHashedAfterCopy` (1.16)",
    ),
  },
  { field: "reversible", cite: facts(113, "| `reversible` | — |") },
  {
    field: "enableUserWriteBlocking",
    since: "0.9",
    until: "1.20",
    values: [
      { value: true, since: "0.9", means: "block user writes on source and destination" },
      { value: false, since: "0.9", means: "no write blocking" },
      { value: "destinationOnly", since: "1.11", means: "block user writes on the destination only" },
      { value: "sourceAndDestination", since: "1.12", means: "the same as true" },
      { value: "none", since: "1.12", means: "the same as false" },
    ],
    cite: facts(
      114,
      '| `enableUserWriteBlocking` | 0.9 | boolean; strings `"destinationOnly"` (1.11 default), `"sourceAndDestination"` (= true) and `"none"` (= false) (1.12)',
    ),
  },
  { field: "verification", since: "1.9", cite: facts(115, "| `verification: { enabled }` | 1.9 |") },
  { field: "preExistingDestinationData", since: "1.15", cite: facts(116, "| `preExistingDestinationData` | 1.15 |") },
  { field: "copyInNaturalOrder", since: "1.16", cite: facts(117, "| `copyInNaturalOrder` | 1.16 |") },
  { field: "detectRandomId", since: "1.18", cite: facts(118, "| `detectRandomId` | 1.18 |") },
  { field: "skipDiskSpaceCheck", since: "1.22", cite: facts(119, "| `skipDiskSpaceCheck` | 1.22 |") },
];

export const START_FIELD_NAMES: readonly string[] = START_FIELDS.map((r) => r.field);

export function startField(field: string): StartFieldRow | undefined {
  return START_FIELDS.find((r) => r.field === field);
}

export interface ProgressFieldRow {
  /** Field names inside `progress` (`success` is the answer's top level); dotted below an object. */
  fields: readonly string[];
  since: string;
  /** The field is at the answer's top level, not inside `progress`. */
  topLevel?: boolean;
  /**
   * The service omits it where it does not apply (the facts' **omitted**, **absent**, **only
   * …**): an answer without it is no evidence of an older service, and no warning.
   */
  omitted?: true;
  /**
   * A documentation example answer of a version that has it lacks it (the corpus,
   * test/fixtures/docs-examples, holds each example with its source; a test checks the mark both
   * ways): the examples are real answers (`EXAMPLES_ARE_ANSWERS`), so an answer without it is no
   * evidence of an older service, and no warning.
   */
  examplesLack?: true;
  cite: Cite;
}

/** facts: the documentation's example answers are real answers, read without a warning. */
export const EXAMPLES_ARE_ANSWERS: Cite = facts(
  102,
  "The documentation's example progress answers are examples of real answers: a client, a lint",
);

/**
 * A real answer of a version that has the field may still lack it: the service omits it where
 * it does not apply, or a documentation example of that version lacks it. Such a field is never
 * expected, never warned about, and its absence never says the service is older.
 */
export const mayBeAbsent = (row: ProgressFieldRow): boolean => row.omitted === true || row.examplesLack === true;

/** Progress fields by the version that introduced them (facts: "Progress fields, by version"). */
export const PROGRESS_FIELDS: readonly ProgressFieldRow[] = [
  // the verifier page's mongosync progress example (1.7–1.13) has no `success`
  {
    fields: ["success"],
    since: "1.8",
    topLevel: true,
    examplesLack: true,
    cite: facts(81, "| top-level `success` | 1.8 |"),
  },
  { fields: ["canWrite"], since: "1.0", cite: facts(82, "| `canWrite` | 1.0 |") },
  // no example answer of any version carries the ids or the applied events count
  {
    fields: ["mongosyncID", "coordinatorID"],
    since: "1.3",
    examplesLack: true,
    cite: facts(83, "| `mongosyncID`, `coordinatorID` | 1.3 |"),
  },
  {
    fields: ["totalEventsApplied"],
    since: "1.8",
    examplesLack: true,
    cite: facts(84, "| `totalEventsApplied` | 1.8 |"),
  },
  // the verifier page's mongosync progress example (1.7–1.13) has no `verification`
  {
    fields: ["verification"],
    since: "1.9",
    examplesLack: true,
    cite: facts(85, "| `verification.source` / `.destination` | 1.9 |"),
  },
  {
    fields: ["estimatedSecondsToCEACatchup"],
    since: "1.14",
    omitted: true,
    cite: facts(86, "| `estimatedSecondsToCEACatchup` | 1.14 | **omitted**"),
  },
  {
    fields: ["source.pingLatencyMs", "destination.pingLatencyMs"],
    since: "1.17",
    omitted: true,
    cite: facts(87, "| `source.pingLatencyMs`, `destination.pingLatencyMs` | 1.17 | **absent**"),
  },
  {
    fields: ["indexBuilding"],
    since: "1.19",
    omitted: true,
    cite: facts(88, "| `indexBuilding` | 1.19 | **only during change event application**"),
  },
  {
    fields: ["estimatedOplogTimeRemaining"],
    since: "1.19",
    omitted: true,
    cite: facts(89, "| `estimatedOplogTimeRemaining` | 1.19 | a human string"),
  },
  {
    fields: ["warnings"],
    since: "1.19",
    omitted: true,
    cite: facts(90, "| `warnings` | 1.19 | array of strings, **omitted when there are none**"),
  },
  {
    fields: ["lag"],
    since: "1.21",
    cite: facts(91, "| `lag: { overallLagSeconds, crudLagSeconds, ddlLagSeconds }` | 1.21 |"),
  },
  {
    fields: ["ceaStage"],
    since: "1.22",
    omitted: true,
    cite: facts(92, "| `ceaStage` | 1.22 | **only during change event application**"),
  },
];

/** The row of a progress field (inside `progress`, dotted below an object, or `success`); undefined: the contract's own. */
export function progressField(field: string): ProgressFieldRow | undefined {
  return PROGRESS_FIELDS.find((r) => r.fields.includes(field));
}

export interface StateRow {
  state: SyncState;
  since?: string;
  cite: Cite;
}

/** The states (facts: "States"); the order is the sync's. */
export const STATES: readonly StateRow[] = [
  { state: "IDLE", cite: facts(61, "IDLE, INITIALIZING (1.20)") },
  { state: "INITIALIZING", since: "1.20", cite: facts(61, "INITIALIZING (1.20)") },
  { state: "RUNNING", cite: facts(61, "RUNNING, PAUSED, COMMITTING, COMMITTED, REVERSING") },
  { state: "PAUSED", cite: facts(61, "RUNNING, PAUSED, COMMITTING, COMMITTED, REVERSING") },
  { state: "COMMITTING", cite: facts(61, "RUNNING, PAUSED, COMMITTING, COMMITTED, REVERSING") },
  { state: "COMMITTED", cite: facts(61, "RUNNING, PAUSED, COMMITTING, COMMITTED, REVERSING") },
  { state: "REVERSING", cite: facts(64, "COMMITTED → REVERSING") },
];

/** Every state some version has, in the sync's order. */
export const ALL_STATES: readonly SyncState[] = STATES.map((s) => s.state);

/** The states a version has (undefined version: every state, lint cannot tell). */
export function statesOf(version: string | undefined): SyncState[] {
  return STATES.filter((s) => version === undefined || atLeast(version, s.since)).map((s) => s.state);
}

/** Behaviour that changed at a version (refusals the facts document, and what else moved). */
export const BEHAVIOUR = {
  /** "`start` while INITIALIZING [progress 1.20]" is a documented refusal. */
  startRefusedWhileInitializing: { since: "1.20", cite: facts(57, "while INITIALIZING [progress 1.20]") },
  /** "`commit` while `canCommit` is false [notes 1.21]" is a documented refusal. */
  commitRefusedUnlessCanCommit: {
    since: "1.21",
    cite: facts(57, "`commit` while `canCommit` is false [notes 1.21]"),
  },
  /** "`resume` before PAUSED [notes 1.21]" is a documented refusal. */
  resumeRefusedUnlessPaused: { since: "1.21", cite: facts(58, "`resume` before PAUSED [notes 1.21]") },
  /**
   * The embedded verifier, on by default: for replica sets from 1.9, for sharded clusters from
   * `shardedSince` (1.10).
   */
  embeddedVerifier: {
    since: "1.9",
    shardedSince: "1.10",
    cite: facts(115, "on by default for replica sets from 1.9, for sharded clusters from 1.10"),
  },
  /**
   * `canCommit` stays false until the embedded verifier is in a state that allows commit: before
   * it, the cutover page's "phase fields should show stream hashing" is the runbook's own wait.
   */
  canCommitWaitsForEmbeddedVerifier: {
    since: "1.17",
    cite: facts(99, "`canCommit`: from 1.17 false until the embedded verifier is in a state that allows commit"),
  },
  /** The INITIALIZING state: not ready for /start yet; after a restart it returns to the state before the crash. */
  initializing: { since: "1.20", cite: facts(61, "INITIALIZING (1.20)") },
  /** Write blocking defaults to destination-only. */
  writeBlockingDestinationOnlyDefault: {
    since: "1.11",
    cite: facts(139, "from 1.11 the default is destination-only"),
  },
  /** Writes on the source during commit fail the migration (before: they are lost). */
  failOnSourceWritesDuringCommit: {
    since: "1.17",
    cite: facts(68, "From 1.17 the service fails the migration if it sees writes on the source during commit"),
  },
  /** `afterDataCopy` is the default for sources on server 6.0+, and canCommit waits for the index builds. */
  afterDataCopyDefault: {
    since: "1.17",
    sourceServer: "6.0",
    cite: facts(112, "from 1.17 `afterDataCopy` is the default for sources on server 6.0+"),
  },
  /** Write blocking comes from the service's configuration (and enableUserWriteBlocking is gone). */
  writeBlockingFromConfig: {
    since: "1.20",
    cite: facts(143, "From 1.20 the service manages write blocking on both sides from"),
  },
  /** `lagTimeSeconds` is deprecated for `lag.overallLagSeconds`. */
  lagObject: {
    since: "1.21",
    cite: facts(
      91,
      "| `lag: { overallLagSeconds, crudLagSeconds, ddlLagSeconds }` | 1.21 | `lagTimeSeconds` deprecated: read `lag.overallLagSeconds` when present",
    ),
  },
  /** The one documented error name, and the start option that skips its check. */
  diskSpaceCheck: { since: "1.22", cite: facts(54, "`InsufficientDestinationDiskSpace` [notes 1.22]") },
  /** `databaseRegex` and `collectionsRegex` in a filter entry. */
  filterRegex: {
    since: "1.6",
    cite: facts(111, "| `databaseRegex`, `collectionsRegex` in a filter entry | 1.6 |"),
  },
  /** Sources on server 4.4 and destinations on 6.0 are refused: `sourceServer` is the oldest source server left. */
  oldServersDropped: {
    since: "1.19",
    sourceServer: "5.0",
    cite: facts(136, "1.19 dropped sources on 4.4 and destinations on 6.0"),
  },
} as const satisfies Record<string, { since: string; cite: Cite; sourceServer?: string; shardedSince?: string }>;

/**
 * Which releases are supported (facts: "Supported versions", from the release notes index): a
 * runbook whose `serviceVersion` is older than `oldestSupported` declares an end-of-life service.
 */
export const SUPPORT = {
  oldestSupported: {
    version: "1.20",
    cite: facts(74, "1.20 is the oldest supported release; all earlier ones are end of life"),
  },
  /** The current stable release; nothing newer is published. */
  current: { version: "1.22", cite: facts(75, "1.22 is the current stable release (2026-09-09)") },
} as const satisfies Record<string, { version: string; cite: Cite }>;

/** The version is older than the oldest supported release: end of life. */
export const endOfLife = (version: string): boolean => !atLeast(version, SUPPORT.oldestSupported.version);

/** What needs a newer server rather than a newer service. */
export const SERVER = {
  /** Write blocking (`"sourceAndDestination"`, `true`), `reversible` and `createSupportingIndexes` need a source on server 6.0+. */
  sourceForWriteBlocking: {
    server: "6.0",
    cite: facts(132, 'A source on server below 6.0: no `reversible`, no `"sourceAndDestination"`, no'),
  },
} as const satisfies Record<string, { server: string; cite: Cite }>;

/**
 * Versions read from documentation pages that spec/service-facts.md does not quote (so no cite
 * a test can check): kept here all the same, so that no other module writes a version down.
 */
export const UNCITED = {
  /** The preflight's reading: the service syncs capped collections from 1.3.0 (since its first edition). */
  cappedCollections: { since: "1.3" },
  /**
   * Without write blocking and without the embedded verifier, write to the destination only once
   * COMMITTED (not at `canWrite: true`). The facts quote it of 1.14–1.19 ("On 1.14–1.19, without
   * write blocking and without the verifier, the page says to wait for COMMITTED instead"); the
   * pages themselves say it from 1.11 (`mongodb/docs` `content/mongosync/v1.11`, `v1.12`,
   * `v1.13`, `v1.14`, `v1.17` `/source/reference/cutover-process.txt`, "canWrite and COMMITTED":
   * "If you set enableUserWriteBlocking to either "sourceAndDestination" or "destinationOnly", or
   * the verifier is turned on, you can write to the destination after /progress reports canWrite:
   * true. Otherwise, wait until the state is COMMITTED."); the 1.21 and current pages no longer
   * do ("You can write to the destination after /progress reports canWrite: true or when the state
   * is COMMITTED"). The wider range is the one that fails safe: COMMITTED is never too early.
   */
  committedBeforeWritesWithoutBlocking: { since: "1.11", until: "1.20" },
} as const satisfies Record<string, { since: string; until?: string }>;

/**
 * Live upgrades (a new binary continuing a running sync) exist only where the release notes say
 * so: `from` undefined means any earlier version. Everything else (1.20 in particular) is not a
 * live upgrade: stop the sync and start again.
 */
export const LIVE_UPGRADES: readonly { from?: string; to: string; cite: Cite }[] = [
  { from: "1.12", to: "1.13", cite: facts(73, "1.12 → 1.13 [versioning page]") },
  { to: "1.18", cite: facts(73, "to 1.18 [notes 1.18]") },
];

/** Whether the documentation publishes a live upgrade from `from` to `to` (minor versions compared). */
export function liveUpgradePublished(from: string, to: string): boolean {
  const minor = (v: string): string => v.split(".").slice(0, 2).join(".");
  return LIVE_UPGRADES.some(
    (u) =>
      compareVersions(minor(to), u.to) === 0 &&
      compareVersions(minor(from), u.to) < 0 &&
      (u.from === undefined || compareVersions(minor(from), u.from) === 0),
  );
}

/** `service 1.15+`, `service 0.9–1.19 (removed in 1.20)`: how a version range reads everywhere (format descriptions, lint, plans). */
export function versionRange(since: string | undefined, until?: string): string {
  if (until !== undefined) return `${versionSpan(since ?? OLDEST_VERSION, until)} (removed in ${until})`;
  return since === undefined ? "every service version" : `service ${since}+`;
}

/** `service 1.11–1.19`: the versions from `since` up to the one before `until`. */
export function versionSpan(since: string, until: string): string {
  return `service ${since}–${previous(until)}`;
}

/** `1.20` → `1.19`: the last minor before (the table's versions are minors). */
function previous(v: string): string {
  const [major = "1", minor = "0"] = v.split(".");
  const m = Number(minor);
  return m > 0 ? `${major}.${m - 1}` : `${Number(major) - 1}.x`;
}

/** A start field or value that the version does not have. */
export interface StartVersionProblem {
  /** Path inside the start body (a field, or the field whose value it is). */
  path: (string | number)[];
  field: string;
  /** The value, when the value (not the field) is what the version lacks. */
  value?: string | boolean;
  kind: "too-new" | "removed";
  /** The version the field or value needs, or the one that removed it. */
  version: string;
  row: StartFieldRow;
}

/**
 * What of a start body `version` does not have: fields newer than it, fields it removed, values
 * newer than it. The body as written in the runbook (unknown fields are the schema's business).
 */
export function startVersionProblems(start: object, version: string): StartVersionProblem[] {
  const body = start as Readonly<Record<string, unknown>>;
  const out: StartVersionProblem[] = [];
  for (const row of START_FIELDS) {
    if (!Object.hasOwn(body, row.field) || body[row.field] === undefined) continue;
    const base = { path: [row.field], field: row.field, row };
    if (row.since !== undefined && !atLeast(version, row.since)) {
      out.push({ ...base, kind: "too-new", version: row.since });
      continue;
    }
    if (row.until !== undefined && atLeast(version, row.until)) {
      out.push({ ...base, kind: "removed", version: row.until });
      continue;
    }
    const v = body[row.field];
    const value = row.values?.find((x) => x.value === v);
    if (value?.since !== undefined && !atLeast(version, value.since))
      out.push({ ...base, value: value.value, kind: "too-new", version: value.since });
  }
  return out;
}

/** The start fields and values whose meaning depends on the version, and what the documentation says of each. */
export function versionDependentParts(start: object): { field: string; text: string }[] {
  const body = start as Readonly<Record<string, unknown>>;
  const out: { field: string; text: string }[] = [];
  for (const row of START_FIELDS) {
    if (!Object.hasOwn(body, row.field) || body[row.field] === undefined) continue;
    const v = body[row.field];
    const value = row.values?.find((x) => x.value === v);
    if (value?.since !== undefined && value.since !== row.since)
      out.push({
        field: row.field,
        text: `${row.field}: ${JSON.stringify(value.value)} (${versionRange(value.since)})`,
      });
    else if (row.since !== undefined || row.until !== undefined)
      out.push({ field: row.field, text: `${row.field} (${versionRange(row.since, row.until)})` });
  }
  return out;
}
