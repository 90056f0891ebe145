/**
 * The model's parameters and their defaults, in one place: `startSimulator`'s `model` option
 * overrides `DEFAULT_MODEL`; the instances and the verifier read them.
 */
/** The model's rates and durations (simulated time). */
export interface ModelParams {
  /** Bytes one instance copies per simulated second (default 64 MiB). */
  copyBytesPerSecond: number;
  /** Change events one instance applies per simulated second (default 4000). */
  applyEventsPerSecond: number;
  /**
   * The apply rate while change event application drains the backlog the collection copy left
   * (1.22 calls it `ceaStage` "collection copy drain"), as a fraction of `applyEventsPerSecond`
   * (default 1: as fast as in steady state). Below the source's write rate the lag holds or rises
   * during the drain and falls after it: what readiness must not call "not converging". No page
   * gives the drain's rate; it is a knob of the model, not a fact of the service.
   */
  drainApplyFactor: number;
  /** Seconds between start and the beginning of the copy, when progress shows 0 of 1 (default 3). */
  precopySeconds: number;
  /** The lag that no-ops keep even with no writes ("a few seconds above zero"; default 2). */
  noopLagSeconds: number;
  /** Fraction of COMMITTING after which canWrite turns true (default 0.5). */
  canWriteAfter: number;
  /**
   * The other processes' `canWrite`, which the cutover page calls "not valid": the fraction of
   * COMMITTING after which it turns true, kept through COMMITTED (0: from the commit on, before the
   * first process's); above 1, never (the default, 2). What such a value is, no page says: either
   * reading shows a client that reads it (one waits for ever, the other closes the window early).
   */
  otherCanWriteAfter: number;
  /** Service 1.20+: seconds an instance is INITIALIZING after it starts or restarts while IDLE (default 2). */
  initializingSeconds: number;
  /** Seconds after start or a restart during which coordinatorID is still null (default 1). */
  coordinatorNullSeconds: number;
  /** Index builds after the copy (buildIndexes afterDataCopy): seconds before canCommit (default 5). */
  indexBuildSeconds: number;
  /** Seconds in REVERSING before the reversed sync is RUNNING (default 3). */
  reversingSeconds: number;
  /** `source.pingLatencyMs` / `destination.pingLatencyMs` from 1.17 (default 1; absent under 1 ms). */
  pingLatencyMs: number;
  /** The copy total the service estimates, as a fraction of the real data (default 1: exact). */
  estimatedTotalRatio: number;
  /** The embedded verifier's initial hashing: bytes per simulated second (default 256 MiB). */
  embeddedHashBytesPerSecond: number;
  /** How long the source's oplog holds changes, for `estimatedOplogTimeRemaining` (default 100 h). */
  oplogWindowSeconds: number;
  /** Average document size, for document counts (default 1024). */
  averageDocumentBytes: number;
  /** Verifier: seconds between an accepted check and its first task; progress waits meanwhile (default 1). */
  verifierSetupSeconds: number;
  /** Verifier: bytes compared per simulated second (default 256 MiB). */
  verifyBytesPerSecond: number;
  /** Verifier: bytes per first-generation task (default 256 MiB). */
  verifyBytesPerTask: number;
  /** Verifier: changed documents per recheck task (default 1000). */
  recheckDocsPerTask: number;
  /** Verifier: recheck and collection tasks done per simulated second (default 20). */
  recheckTasksPerSecond: number;
  /** Verifier: tasks processed at once (default 4). */
  verifierWorkers: number;
}

export const DEFAULT_MODEL: ModelParams = {
  copyBytesPerSecond: 64 * 2 ** 20,
  applyEventsPerSecond: 4000,
  drainApplyFactor: 1,
  precopySeconds: 3,
  noopLagSeconds: 2,
  canWriteAfter: 0.5,
  otherCanWriteAfter: 2,
  initializingSeconds: 2,
  coordinatorNullSeconds: 1,
  indexBuildSeconds: 5,
  reversingSeconds: 3,
  pingLatencyMs: 1,
  estimatedTotalRatio: 1,
  embeddedHashBytesPerSecond: 256 * 2 ** 20,
  oplogWindowSeconds: 100 * 3600,
  averageDocumentBytes: 1024,
  verifierSetupSeconds: 1,
  verifyBytesPerSecond: 256 * 2 ** 20,
  verifyBytesPerTask: 256 * 2 ** 20,
  recheckDocsPerTask: 1000,
  recheckTasksPerSecond: 20,
  verifierWorkers: 4,
};
