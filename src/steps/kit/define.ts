/**
 * What a step kind is: everything the rest of syncbook asks of one, in one object per kind
 * (`src/steps/<kind>.ts`). The runner runs it, the plan titles it and lists its requests for
 * `--dry-run`, lint's state model asks what it does to the fleet's states, and the runner reads
 * its timing fields. Adding a kind is that one file, its schema entry, and its line in
 * `src/steps/index.ts`.
 */
import type { Duration, HookCall, Step } from "../../runbook/types.js";
import type { StepContext } from "./context.js";
import type { SequenceOutcome, SequenceStep } from "./sequence.js";

/** One request of the plan (`--dry-run`), in order. */
export interface PlannedRequest {
  step: string;
  method: "GET" | "POST";
  /** A redacted instance or verifier URL, or a description (`plugin step drain-traffic`). */
  target: string;
  path: string;
  body?: unknown;
  note?: string;
}

/** Where a plan's requests go: every instance (redacted URLs) and the verifier. */
export interface PlanTargets {
  instances: readonly string[];
  verifier: string;
  redact(text: string): string;
  /** The runbook's `serviceVersion`: what the plan says depends on it (src/api/versions.ts). */
  serviceVersion?: string | undefined;
}

/** The timing fields a kind reads from its own body (the runner applies the defaults and the rehearsal scale). */
export interface StepTiming {
  timeout?: Duration | undefined;
  pollInterval?: Duration | undefined;
  slowAfter?: Duration | undefined;
}

/** How long an undo may take when its call sets no `timeout` (a hook's `undo:`, a plugin step's returned undo). */
export const UNDO_TIMEOUT_MS = 120_000;

/** What a rehearsal knows when it asks a kind for its stand-in. */
export interface RehearsalTargets {
  /** The simulated instance whose `/sim/writes` switch a stopWrites turns (the `sim-writes` hook's `url`). */
  simUrl: string;
  /** `--keep-hooks`: the runbook's own hooks and plugin steps run. */
  keepHooks: boolean;
}

export interface StepKindDef<B> {
  /** The body of this kind in a step (`step.start`); plugin step kinds find their own key. */
  body(step: Step): B | undefined;
  /** The title when the step has no `name`. */
  title(body: B): string;
  /** The requests it sends, in order (progress polls summarized once); nothing is sent. */
  plan(body: B, to: PlanTargets): Omit<PlannedRequest, "step">[];
  /** Timing fields of its own (a waitFor's `timeout`, `pollInterval`, `slowAfter`). */
  timing?(body: B): StepTiming;
  /** What it does to lint's model of the fleet's states. */
  sequence(body: B, at: SequenceStep): SequenceOutcome;
  run(ctx: StepContext, body: B): Promise<void>;
  /**
   * The hook call of a kind that runs a hook plugin (`stopWrites`, `hook`): the dry run shows it,
   * and its `undo:` is what the runner (and a resume) runs if the cutover stops before commit.
   */
  hookCall?(body: B): HookCall;
  /** Its undo's time limit when the runbook gives none; kinds without an undo have none. */
  undoTimeoutMs?(body: B): number;
  /** A step of this kind that succeeds stops application writes: the write-stop window opens. */
  opensWriteStop?: true;
  /**
   * Why a failure of this kind must end the run, whatever `continueOnError` says (lint refuses
   * the flag on it, `continue-on-error-unsafe`; the runner ignores it): what going on would leave.
   */
  failureStopsRun?: string;
  /** What a rehearsal runs in its place (undefined: the step itself). */
  rehearsal?(step: Step, body: B, to: RehearsalTargets): Step;
}

const COMMON = ["id", "name", "timeout", "when", "continueOnError"] as const;

/** A rehearsal's stand-in: a `notify` line saying what a real run would have done, in the step's place. */
export function notifyStandIn(step: Step, text: string): Step {
  const common = Object.fromEntries(COMMON.filter((k) => k in step).map((k) => [k, step[k]]));
  return { ...common, notify: `rehearsal: ${text}` };
}

/** The body under a fixed key: `start`, `waitFor`, … */
export function keyed<K extends keyof Step>(key: K): (step: Step) => NonNullable<Step[K]> | undefined {
  return (step) => step[key] ?? undefined;
}

/** The same GET or POST to every instance. */
export function toEach(
  to: PlanTargets,
  method: "GET" | "POST",
  path: string,
  extra: { body?: unknown; note?: string } = {},
): Omit<PlannedRequest, "step">[] {
  return to.instances.map((target) => ({ method, target, path, ...extra }));
}
