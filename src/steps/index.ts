/**
 * The step kinds: one module each, looked up here by the runner (run, timing), the plan (title,
 * requests) and lint (what each does to the fleet's states). A kind is that module, its schema
 * entry and its line below.
 */
import type { HookCall, Step, StepKind } from "../runbook/types.js";
import { stepKind } from "../runbook/types.js";
import { assert } from "./assert.js";
import { commit } from "./commit.js";
import { confirm } from "./confirm.js";
import type { StepContext } from "./kit/context.js";
import type { PlannedRequest, PlanTargets, RehearsalTargets, StepKindDef, StepTiming } from "./kit/define.js";
import type { SequenceOutcome, SequenceStep } from "./kit/sequence.js";
import { hook } from "./hook.js";
import { lifecycle } from "./lifecycle.js";
import { notify } from "./notify.js";
import { plugin } from "./plugin.js";
import { preflight } from "./preflight.js";
import { sleep } from "./sleep.js";
import { start } from "./start.js";
import { startVerification } from "./start-verification.js";
import { stopWrites } from "./stop-writes.js";
import { verify } from "./verify.js";
import { waitFor } from "./wait-for.js";

/** A step bound to its kind's definition: what the runner, the plan and lint call. */
export interface BoundStep {
  kind: StepKind | "plugin";
  /** The title when the step has no `name`. */
  title(): string;
  plan(to: PlanTargets): Omit<PlannedRequest, "step">[];
  timing(): StepTiming;
  sequence(at: SequenceStep): SequenceOutcome;
  run(ctx: StepContext): Promise<void>;
  /** The hook call of a kind that runs a hook plugin with an `undo` (`stopWrites`, `hook`), else undefined. */
  hookCall(): HookCall | undefined;
  /** Its undo's time limit (the call's `undo.timeout`, else the default); undefined: the kind has no undo. */
  undoTimeoutMs(): number | undefined;
  /** It opens the write-stop window when it succeeds. */
  opensWriteStop: boolean;
  /** Why its failure ends the run whatever `continueOnError` says; undefined: the flag applies. */
  failureStopsRun: string | undefined;
  /** What a rehearsal runs in its place. */
  rehearsal(to: RehearsalTargets): Step;
}

function binder<B>(def: StepKindDef<B>): (step: Step, kind: StepKind | "plugin") => BoundStep {
  return (step, kind) => {
    const body = def.body(step);
    if (body === undefined) throw new Error(`step without a ${kind} body (schema validation should have caught this)`);
    return {
      kind,
      title: () => def.title(body),
      plan: (to) => def.plan(body, to),
      timing: () => def.timing?.(body) ?? {},
      sequence: (at) => def.sequence(body, at),
      run: (ctx) => def.run(ctx, body),
      hookCall: () => def.hookCall?.(body),
      undoTimeoutMs: () => def.undoTimeoutMs?.(body),
      opensWriteStop: def.opensWriteStop === true,
      failureStopsRun: def.failureStopsRun,
      rehearsal: (to) => def.rehearsal?.(step, body, to) ?? step,
    };
  };
}

/** Every kind's definition, by its runbook key (`plugin`: a kind a plugin adds). */
const DEFS: { readonly [K in StepKind | "plugin"]: StepKindDef<unknown> } = {
  preflight,
  start,
  waitFor,
  startVerification,
  verify,
  stopWrites,
  commit,
  assert,
  confirm,
  notify,
  hook,
  sleep,
  pause: lifecycle("pause"),
  resume: lifecycle("resume"),
  reverse: lifecycle("reverse"),
  plugin,
};

/** A step bound to its kind (the schema guarantees exactly one kind key). */
export function bindStep(step: Step): BoundStep {
  const kind = stepKind(step);
  return binder(DEFS[kind])(step, kind);
}

/**
 * Whether a step of this kind opens the write-stop window when it succeeds, for readers that
 * have only its name (an event's or a journal's `kind`).
 */
export function opensWriteStop(kind: string | undefined): boolean {
  return kind !== undefined && Object.hasOwn(DEFS, kind) && DEFS[kind as StepKind].opensWriteStop === true;
}

export type { StepKindDef, PlannedRequest, PlanTargets, RehearsalTargets, StepTiming } from "./kit/define.js";
export { UNDO_TIMEOUT_MS } from "./kit/define.js";
export { StepFailure, StepTimeout, FORCE_CHECKS, newIdentityMemory } from "./kit/context.js";
export type {
  StepContext,
  RunContext,
  RunMemory,
  IdentityMemory,
  VerifierMemory,
  VerifierAsk,
  Defaults,
  Prompter,
  ForceCheck,
  WritesProbe,
} from "./kit/context.js";
export { observeIdentity } from "./kit/fleet-ops.js";
export type { Flow, SequenceOutcome, SequenceStep } from "./kit/sequence.js";
export { allStates, cloneFlow, joinFlows } from "./kit/sequence.js";
