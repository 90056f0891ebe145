/** Public surface of the API client of the sync service and the verifier. */
export { createServiceClient, createVerifierClient, verifierBody, JsonBody, DEFAULT_MAX_BODY_BYTES } from "./client.js";
export type {
  ClientOptions,
  RequestOptions,
  VerifierCommand,
  VerifierCommandOptions,
  CommandResult,
  CommandOutcome,
  ServiceClient,
  VerifierClient,
} from "./client.js";
export {
  BLOCKING,
  blocksUntilEveryInstance,
  COMMAND_EFFECT,
  COMMAND_OPERATIONS,
  SPONTANEOUS,
  commandTookEffect,
  isCommandOperation,
  settledStates,
} from "./commands.js";
export type { CommandOperation } from "./commands.js";
export { ApiError, TransportError, ServiceError, errorsText, mayStillArrive } from "./errors.js";
export type { ApiOperation, ServiceOperation, VerifierOperation, TransportErrorCode } from "./errors.js";
export { bodyExcerpt } from "../redact.js";
export { checkAnswer, issueText } from "./check.js";
export type { AnswerIssue, Checked, CheckOutcome } from "./check.js";
export { SYNC_STATES } from "./types.js";
export type {
  SyncState,
  Progress,
  ProgressFields,
  ProgressResponse,
  OperationResponse,
  VerifierProgress,
  VerifierProgressFields,
  VerifierProgressResponse,
  VerificationStatus,
  CollectionCopy,
  DirectionMapping,
} from "./types.js";
export {
  START_FIELDS,
  PROGRESS_FIELDS,
  STATES,
  BEHAVIOUR,
  ALL_STATES,
  startVersionProblems,
  versionDependentParts,
  versionRange,
  statesOf,
  compareVersions,
  atLeast,
} from "./versions.js";
export type { Cite, StartFieldRow, ProgressFieldRow, StateRow, StartVersionProblem } from "./versions.js";
export { lagSeconds, pingLatencyMs } from "./progress.js";
export { wireStartBody } from "./start-body.js";
export { progressResponseSpec } from "./types.js";
