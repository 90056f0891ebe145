/**
 * What a step kind is: everything the rest of syncbook asks of one, in one object per kind
 * (`src/steps/<kind>.ts`). The runner runs it, the plan titles it and lists its requests for
 * `--dry-run`, lint's state model asks what it does to the fleet's states, and the runner reads
 * its timing fields. Adding a kind is that one file, its schema entry, and its line in
 * `src/steps/index.ts`.
 */
import type { CommandOperation } from "../../api/commands.js";
import type { RuleInfo } from "../../diagnostics.js";
import type { AssertBody, Duration, HookCall, StartRequest, Step, WaitForBody } from "../../runbook/types.js";
import type { StepContext } from "./context.js";
import type { SequenceOutcome, SequenceStep } from "./sequence.js";
import type { WritesCheckCall } from "./writes-check.js";

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
  /** The instance whose `canWrite` is valid (src/runbook/can-write.ts); undefined: none may be read. */
  canWriteFrom?: number | undefined;
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

/**
 * What a step kind is, as code outside src/steps asks it: the undo, `--probe`, `--resume`, the
 * write-stop window, lint, the plugin-call checks, the journal's reader. Every kind states every
 * trait (the compiler checks), so nothing outside src/steps names a kind (`test/steps/kind-names.test.ts`).
 */
export interface StepTraits {
  /** A step of this kind that succeeds stops application writes: the write-stop window opens, and its undo turns writes back on. */
  opensWriteStop: boolean;
  /** The command it sends to every instance of the service (src/api/commands.ts), if any. */
  command: CommandOperation | undefined;
  /**
   * What it lets time pass for, reading until it holds: the fleet's state (a condition: inside the
   * write-stop window the service's share until met), the verifier's result, time, or a person
   * (the operator's share). `--probe` does not judge the state a later command meets by now.
   */
  waitsFor: "service" | "verifier" | "time" | "person" | undefined;
  /**
   * On `--resume`, a step of this kind that passed while writes were stopped by a step whose undo
   * has run since: `again`, what it established held only while writes were stopped (a check: it
   * runs again); `told`, it cannot run again (a verify: one check per verifier process) and the
   * operator is told; `kept`, it acted (a hook, a notification, a command) and is not repeated.
   */
  afterWritesBack: "again" | "told" | "kept";
  /** It talks to the migration verifier: the runbook needs a `verifier` URL. */
  usesVerifier: boolean;
  /** The kind of plugin its body calls by `use:` (a hook, with its `undo:` and `check:`; a notifier), checked by the plugin-call checks. */
  callsPlugin: "hook" | "notifier" | undefined;
  /**
   * Why a failure of this kind must end the run, whatever `continueOnError` says (lint refuses
   * the flag on it, `continue-on-error-unsafe`; the runner ignores it): what going on would leave.
   * Undefined: the flag applies.
   */
  failureStopsRun: string | undefined;
}

/**
 * A trait read from a kind's body, or undefined when the kind has none: stated by every kind.
 * (Written as a method's type so a kind's definition stays assignable to `StepKindDef<unknown>`,
 * as its optional methods were: methods are compared bivariantly.)
 */
type BodyTrait<B, R> = { read(body: B): R }["read"] | undefined;

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
  /**
   * Every lint rule its `sequence` reports, with its metadata (id, severity, the sentence it
   * enforces, its hint): written beside the code that reports it, read by lint's catalogue.
   * A kind reports only rules it lists here (lint checks as it walks).
   */
  rules: readonly RuleInfo[];
  run(ctx: StepContext, body: B): Promise<void>;
  /** What it is (see `StepTraits`). */
  traits: StepTraits;
  /**
   * The hook call of a kind that runs a hook plugin: the dry run shows it, and its `undo:` is what
   * the runner (and a resume) runs if the cutover stops before commit. Undefined: it runs no hook.
   */
  hookCall: BodyTrait<B, HookCall>;
  /** The hook call that reads whether writes are stopped (a stopWrites' `check:`), read again before every commit. */
  writesCheck: BodyTrait<B, WritesCheckCall | undefined>;
  /** Its undo's time limit when the runbook gives none; undefined: the kind has no undo. */
  undoTimeoutMs: BodyTrait<B, number>;
  /** The condition it reads on the fleet (lint checks where it is read), if any. */
  condition: BodyTrait<B, WaitForBody | AssertBody>;
  /** The start request it sends (lint checks its fields), if any. */
  startRequest: BodyTrait<B, StartRequest>;
  /** What a rehearsal runs in its place; undefined: the step itself. */
  rehearsal: { read(step: Step, body: B, to: RehearsalTargets): Step }["read"] | undefined;
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
