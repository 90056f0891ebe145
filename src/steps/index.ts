/**
 * The step kinds: one module each, looked up here by the runner (run, timing), the plan (title,
 * requests) and lint (what each does to the fleet's states). A kind is that module, its schema
 * entry and its line below.
 */
import type { CommandOperation } from "../api/commands.js";
import type { RuleInfo } from "../diagnostics.js";
import type { AssertBody, HookCall, Runbook, StartRequest, Step, StepKind, WaitForBody } from "../runbook/types.js";
import { stepKind } from "../runbook/types.js";
import { lagBelowOf, type ReadinessPlan } from "../model/readiness.js";
import { assert } from "./assert.js";
import { commit } from "./commit.js";
import { confirm } from "./confirm.js";
import type { StepContext } from "./kit/context.js";
import type {
  PlannedRequest,
  PlanTargets,
  RehearsalTargets,
  StepKindDef,
  StepTiming,
  StepTraits,
} from "./kit/define.js";
import type { SequenceOutcome, SequenceStep } from "./kit/sequence.js";
import type { WritesCheckCall } from "./kit/writes-check.js";
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
export interface BoundStep extends StepTraits {
  kind: StepKind | "plugin";
  /** The title when the step has no `name`. */
  title(): string;
  plan(to: PlanTargets): Omit<PlannedRequest, "step">[];
  timing(): StepTiming;
  sequence(at: SequenceStep): SequenceOutcome;
  /** The lint rules its `sequence` may report. */
  rules: readonly RuleInfo[];
  run(ctx: StepContext): Promise<void>;
  /** The hook call of a kind that runs a hook plugin with an `undo` (`stopWrites`, `hook`), else undefined. */
  hookCall(): HookCall | undefined;
  /** The hook call that reads whether writes are stopped (a stopWrites' `check:`), else undefined. */
  writesCheck(): WritesCheckCall | undefined;
  /** Its undo's time limit (the call's `undo.timeout`, else the default); undefined: the kind has no undo. */
  undoTimeoutMs(): number | undefined;
  /** The condition it reads on the fleet, else undefined. */
  condition(): WaitForBody | AssertBody | undefined;
  /** The start request it sends, else undefined. */
  startRequest(): StartRequest | undefined;
  /** What a rehearsal runs in its place. */
  rehearsal(to: RehearsalTargets): Step;
}

function binder<B>(def: StepKindDef<B>): (step: Step, kind: StepKind | "plugin") => BoundStep {
  return (step, kind) => {
    const body = def.body(step);
    if (body === undefined) throw new Error(`step without a ${kind} body (schema validation should have caught this)`);
    return {
      kind,
      ...def.traits,
      title: () => def.title(body),
      plan: (to) => def.plan(body, to),
      timing: () => def.timing?.(body) ?? {},
      sequence: (at) => def.sequence(body, at),
      rules: def.rules,
      run: (ctx) => def.run(ctx, body),
      hookCall: () => def.hookCall?.(body),
      writesCheck: () => def.writesCheck?.(body),
      undoTimeoutMs: () => def.undoTimeoutMs?.(body),
      condition: () => def.condition?.(body),
      startRequest: () => def.startRequest?.(body),
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
 * What a kind is, for readers that have only its name (an event's or a journal's `kind`); a name
 * that is no built-in kind (a plugin step kind's own key, a journal's unknown word) is a plugin
 * step's traits: it opens no window, sends no command, waits for nothing.
 */
export function traitsOf(kind: string | undefined): StepTraits {
  return kind !== undefined && Object.hasOwn(DEFS, kind) ? DEFS[kind as StepKind].traits : DEFS.plugin.traits;
}

/** The runbook's first start request and its place, for preflight (which sits below the steps). */
export function firstStartRequest(
  rb: Runbook | undefined,
): { index: number; at: (string | number)[]; body: StartRequest } | undefined {
  for (const [index, step] of (rb?.steps ?? []).entries()) {
    const b = bindStep(step);
    const body = b.startRequest();
    if (body) return { index, at: ["steps", index, b.kind], body };
  }
  return undefined;
}

/**
 * What "ready to commit?" needs from the runbook (src/model/readiness.ts), for every reader that
 * says it (`status`, `watch`): the `lagBelow` before its commit, and whether its start turned the
 * embedded verifier off, so that phases it will never leave (`not started`) hold nothing back.
 */
export function readinessPlan(rb: Runbook): ReadinessPlan {
  const lag = lagBelowOf(
    rb.steps.map((st) => {
      const b = bindStep(st);
      return { command: b.command, condition: b.condition() };
    }),
  );
  const off = firstStartRequest(rb)?.body.verification?.enabled === false;
  return { ...(lag !== undefined ? { lagBelowSeconds: lag } : {}), ...(off ? { embeddedVerifierOff: true } : {}) };
}

/** How many of the runbook's steps send `op` (the kinds' `command` trait): preflight's "multiple reversals". */
export function stepsSending(rb: Runbook | undefined, op: CommandOperation): number {
  return (rb?.steps ?? []).filter((step) => bindStep(step).command === op).length;
}

/** Whether a step of this kind opens the write-stop window when it succeeds (`traitsOf(kind).opensWriteStop`). */
export function opensWriteStop(kind: string | undefined): boolean {
  return traitsOf(kind).opensWriteStop;
}

/** Every lint rule the kinds' `sequence` reports (lint's state model), each once, in the kinds' order. */
export const SEQUENCE_RULES: readonly RuleInfo[] = [...new Set(Object.values(DEFS).flatMap((d) => d.rules))];

/** The step kinds whose body calls a plugin by `use:`, and whether it stops writes: the plugin-call checks' data (src/plugin sits below the steps). */
export const PLUGIN_CALL_KINDS: ReadonlyMap<string, { plugin: "hook" | "notifier"; opensWriteStop: boolean }> = new Map(
  Object.entries(DEFS).flatMap(([k, d]) =>
    d.traits.callsPlugin
      ? [[k, { plugin: d.traits.callsPlugin, opensWriteStop: d.traits.opensWriteStop }] as const]
      : [],
  ),
);

export type {
  StepKindDef,
  StepTraits,
  PlannedRequest,
  PlanTargets,
  RehearsalTargets,
  StepTiming,
} from "./kit/define.js";
export { UNDO_TIMEOUT_MS } from "./kit/define.js";
export {
  StepFailure,
  StepTimeout,
  FORCE_CHECKS,
  newIdentityMemory,
  timeoutHint,
  byHand,
  realRunOr,
  REHEARSE_FROM_THE_START,
} from "./kit/context.js";
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
  EarlierHooks,
} from "./kit/context.js";
export { observeIdentity } from "./kit/fleet-ops.js";
export {
  COMMIT_WRITES_FORCED,
  filteredWords,
  modelVerification,
  verification,
  verificationShown,
  verificationText,
  verifierEarned,
} from "./kit/earned.js";
export { writesOnVerdict, BEFORE_COMMIT, type WritesOnVerdict } from "./kit/writes-on.js";
export { whileWatching } from "./kit/watch.js";
export type { Flow, SequenceOutcome, SequenceStep } from "./kit/sequence.js";
export { allStates, cloneFlow, joinFlows } from "./kit/sequence.js";
