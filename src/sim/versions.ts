/**
 * What each version of the sync service has, as spec/service-facts.md tabulates it: the
 * simulator's own table. It is kept apart from whatever the runner or lint know on purpose: a
 * simulator that shares the runner's beliefs cannot catch them being wrong.
 * Versions are the service's ("1.9" = from 1.9 on); `until` is the first version without it.
 */
import { compareVersions } from "./units.js";

export const atLeast = (version: string, since: string): boolean => compareVersions(version, since) >= 0;

/** Progress fields by the version that introduced them (facts: "Progress fields, by version"). */
export const PROGRESS_SINCE = {
  /** "top-level `success` | 1.8 | older answers have only `progress`" */
  success: "1.8",
  /** "`mongosyncID`, `coordinatorID` | 1.3" */
  ids: "1.3",
  totalEventsApplied: "1.8",
  /** the embedded verifier's `verification.source` / `.destination` */
  verification: "1.9",
  estimatedSecondsToCEACatchup: "1.14",
  pingLatencyMs: "1.17",
  indexBuilding: "1.19",
  estimatedOplogTimeRemaining: "1.19",
  warnings: "1.19",
  lag: "1.21",
  ceaStage: "1.22",
} as const;

/** Top-level start fields: the version that knows them, and the first that no longer does. */
export const START_FIELDS: Record<string, { since: string; until?: string }> = {
  source: { since: "0" },
  destination: { since: "0" },
  includeNamespaces: { since: "1.1" },
  sharding: { since: "1.1" },
  buildIndexes: { since: "1.3" },
  reversible: { since: "0" },
  // "removed in 1.20: never send it to a 1.20+ service"
  enableUserWriteBlocking: { since: "0.9", until: "1.20" },
  excludeNamespaces: { since: "1.6" },
  verification: { since: "1.9" },
  preExistingDestinationData: { since: "1.15" },
  copyInNaturalOrder: { since: "1.16" },
  detectRandomId: { since: "1.18" },
  skipDiskSpaceCheck: { since: "1.22" },
};

/** buildIndexes values: "`beforeDataCopy` (default), `never` (1.3); `excludeHashed` (1.14); `afterDataCopy`, `excludeHashedAfterCopy` (1.16)". */
export const BUILD_INDEXES_SINCE: Record<string, string> = {
  beforeDataCopy: "1.3",
  never: "1.3",
  excludeHashed: "1.14",
  afterDataCopy: "1.16",
  excludeHashedAfterCopy: "1.16",
};

/** enableUserWriteBlocking strings: "`destinationOnly` (1.11), `sourceAndDestination` (= true) and `none` (= false) (1.12)". */
export const WRITE_BLOCKING_SINCE: Record<string, string> = {
  destinationOnly: "1.11",
  sourceAndDestination: "1.12",
  none: "1.12",
};

/** Behaviour that changed at a version. */
export const BEHAVIOUR_SINCE = {
  /** "INITIALIZING (1.20, before RUNNING)"; "`start` while INITIALIZING (1.20)" is refused. */
  initializing: "1.20",
  /** "`commit` while `canCommit` is false (1.21)" is a documented refusal. */
  commitRefusedUnlessCanCommit: "1.21",
  /** "`resume` before PAUSED (1.21)" is a documented refusal. */
  resumeRefusedUnlessPaused: "1.21",
  /** "From 1.17 the service fails the migration if it sees writes on the source during commit". */
  failOnSourceWritesDuringCommit: "1.17",
  /** "from 1.17 `afterDataCopy` is the default for sources on server 6.0+" */
  afterDataCopyDefault: "1.17",
  /** InsufficientDestinationDiskSpace and skipDiskSpaceCheck (1.22). */
  diskSpaceCheck: "1.22",
  /** from 1.20 write blocking comes from the service's own configuration, not the start body */
  writeBlockingFromConfig: "1.20",
  /** "after a crash or restart, **the state it had before the crash** [progress 1.20]" (through INITIALIZING). */
  restartInitializes: "1.20",
  /** "On by default: replica sets from 1.9, sharded clusters from 1.10." */
  embeddedVerifierSharded: "1.10",
  /** "From 1.22 it starts at change event application and reports `"not started"` during the collection copy" */
  embeddedVerifierAtCea: "1.22",
  /** "`canCommit`: from 1.17 false until the embedded verifier is in a state that allows commit" */
  canCommitWaitsForVerifier: "1.17",
  /** "from 1.21 false while the service **or** the embedded verifier reports more than **30 s** of lag" */
  canCommitLagLimit: "1.21",
  /** "from 1.21 the service raises `estimatedTotalBytes` when the copied bytes pass it" */
  totalRaisedToCopied: "1.21",
} as const;

/**
 * The version `startSimulator` emulates when none is asked for: the library's default, which the
 * runner's end-to-end harnesses (test/support) pair with their runbooks' `serviceVersion`. It stays
 * 1.8.0 (end of life) so that those tests keep the conditions they were written for; `syncbook sim`
 * and the rehearsal of a runbook without `serviceVersion` emulate `CURRENT_SERVICE_VERSION`.
 */
export const DEFAULT_SERVICE_VERSION = "1.8.0";

/** The current release: what `syncbook sim` emulates when not told (issue 24: "`syncbook sim` defaults to the current release (1.22)"). */
export const CURRENT_SERVICE_VERSION = "1.22.0";

/** facts (1.21): `canCommit` is false while the service or the embedded verifier lags more than this. */
export const CAN_COMMIT_MAX_LAG_SECONDS = 30;

/**
 * Live upgrades (a new binary continuing a running sync): "only where release notes say so —
 * 1.12 → 1.13 [versioning page], to 1.18 [notes 1.18]; not to 1.20 [notes 1.20]". The emulated
 * version is the one upgraded to; every other version refuses (nothing else is published).
 */
export const LIVE_UPGRADE_TO: readonly string[] = ["1.13", "1.18"];

/** The emulated version is a published live-upgrade target (its major.minor). */
export const liveUpgradeTarget = (version: string): boolean =>
  LIVE_UPGRADE_TO.includes(version.split(".").slice(0, 2).join("."));

/** A version string the simulator accepts: `1.8`, `1.8.0`. */
export const VERSION_RE = /^\d+\.\d+(\.\d+)?$/;
