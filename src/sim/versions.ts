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
  /** "Live upgrades of a running sync are not supported from 1.11." */
  noLiveUpgrades: "1.11",
  /** "From 1.17 the service fails the migration if it sees writes on the source during commit". */
  failOnSourceWritesDuringCommit: "1.17",
  /** "from 1.17 `afterDataCopy` is the default for sources on server 6.0+" */
  afterDataCopyDefault: "1.17",
  /** InsufficientDestinationDiskSpace and skipDiskSpaceCheck (1.22). */
  diskSpaceCheck: "1.22",
  /** from 1.20 write blocking comes from the service's own configuration, not the start body */
  writeBlockingFromConfig: "1.20",
} as const;

/** The version simulated when none is asked for (`syncbook sim`, the rehearsal of a runbook without `serviceVersion`). */
export const DEFAULT_SERVICE_VERSION = "1.8.0";

/** A version string the simulator accepts: `1.8`, `1.8.0`. */
export const VERSION_RE = /^\d+\.\d+(\.\d+)?$/;
