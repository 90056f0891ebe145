/** Public surface of the fleet: broadcast identical commands, poll and judge every instance. */
export { createFleet } from "./fleet.js";
export { createVerifier, type VerifierOptions } from "./verifier.js";
export { errorKind } from "./record.js";
export type {
  Fleet,
  FleetOptions,
  FleetInstance,
  FleetEmit,
  FleetSnapshot,
  InstanceSample,
  BroadcastOptions,
  BroadcastResult,
  BroadcastOutcome,
} from "./fleet.js";
export { identityProblems, clusterName } from "./identity.js";
export type { IdentityExpectation, IdentityProblem } from "./identity.js";
export {
  evaluate,
  readCondition,
  progressSignature,
  instanceSignature,
  conditionReads,
  readPath,
  errorSummary,
  unmetExpectations,
  expectationText,
} from "./conditions.js";
export type {
  Condition,
  ConditionBody,
  ConditionModel,
  Evaluation,
  FailingCondition,
  VerifierNeed,
  VerifierStanding,
} from "./conditions.js";
export {
  createPollRecorder,
  histogramPercentile,
  mergeHistograms,
  bucketOf,
  bucketBound,
  type PollRecorder,
  type PollStat,
  type PollTarget,
} from "./polls.js";
export {
  WindowTracker,
  WINDOW_SHARES,
  describeWindow,
  earlierWindows,
  windowShares,
  stoppedInCommitWords,
  type StoppedInCommit,
  type WindowPart,
  type WindowShare,
  type WriteStopWindow,
} from "./window.js";
export { findCoordinator } from "./conditions.js";
