/**
 * src/run — the runner: `runRunbook` (steps against the fleet, interlocks, undo), its event
 * stream types, the plan (`--dry-run`), and `--resume` planning.
 */
export { runRunbook, runDefaults, type RunOptions, type RunResult, type ResumePlan } from "./runner.js";
export { planSteps, planRequests, type PlannedStep, type PlannedRequest } from "./plan.js";
export { FORCE_CHECKS, StepFailure, type ForceCheck, type Prompter, type RunMemory } from "../steps/index.js";
export { createEmitter, type Emitter, type Emit } from "./emitter.js";
export type { RunEvent, RunEventMap, RunEventOf, RunEventType, RunListener, Outcome, InstanceRef } from "../events.js";
