/** Public surface of the fleet: broadcast identical commands, poll and judge every instance. */
export { createFleet } from "./fleet.js";
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
export { identityProblems, instanceLabel, clusterName } from "./identity.js";
export type { IdentityExpectation, IdentityProblem } from "./identity.js";
export { evaluate, progressSignature, lagLimitSeconds, readPath, errorSummary } from "./conditions.js";
export type { ConditionBody, Evaluation, FailingCondition } from "./conditions.js";
