/**
 * Lint's model of the fleet's states along a runbook, as each step kind sees it: before each step
 * a `Flow` holds the set of sync states the fleet can be in there (closed under the moves the
 * service makes by itself), facts that hold on every path (writes stopped, canCommit awaited,
 * change event application reached), and facts that hold on some path (a start or commit may
 * have run, verification may be in progress). Each step kind says what it does to the flow
 * (`StepKindDef.sequence`), and reports the lint rules it finds, each rule's metadata (`RuleInfo`)
 * beside the code that reports it and listed in the kind's `rules`; `src/lint/sequence.ts` walks the steps.
 *
 * A command is judged by the command-effect table (`src/api/commands.ts`): it is flagged only
 * when it is impossible in *every* reachable state, and lint then assumes it succeeded, so one
 * mistake is reported once, not again at every later step.
 */
import type { RuleInfo } from "../../diagnostics.js";
import { COMMAND_EFFECT, closeStates, type CommandOperation } from "../../api/commands.js";
import type { SyncState } from "../../api/types.js";
import { ALL_STATES, BEHAVIOUR } from "../../api/versions.js";
import type { ConditionModel } from "../../fleet/index.js";
import type { Runbook, Step } from "../../runbook/types.js";

/** Lint's `command-impossible-state`, reported by `commandPossible` for every kind that sends a command (each lists it in its `rules`). */
export const COMMAND_IMPOSSIBLE_STATE: RuleInfo = {
  id: "command-impossible-state",
  severity: "error",
  description:
    "A command no reachable state allows (resume never paused, pause after commit, reverse before commit, commit when not RUNNING, start when not IDLE).",
  spec: "pause: only in RUNNING; resume: only in PAUSED; reverse: only in COMMITTED. (commit: state RUNNING; start: allowed only in IDLE.)",
  source: "service-facts.md",
  hint: "Reorder the steps so the command meets the state it needs, or remove it.",
};

/** The order a sync goes through its states, for messages (the version table's). */
const ORDER: readonly SyncState[] = ALL_STATES;
export const CEA = "change event application";

export interface Verifying {
  /** Step index of the verify or start that began it (-1: before the runbook). */
  at: number;
  embedded: boolean;
}

export interface Flow {
  states: Set<SyncState>;
  /** Must: a stopWrites step has succeeded (since the last reverse). */
  writesStopped: boolean;
  /** Must: a wait/assert of canCommit true since the last start/resume/reverse. */
  canCommitSeen: boolean;
  /** Must: a wait/assert of both embedded verifier sides in stream hashing since the last start/resume (after a commit the embedded verifier is not modelled: `verifying` ends there). */
  streamHashingSeen: boolean;
  /** Must: change event application has been reached. */
  ceaReached: boolean;
  /** May: indexes of start steps that may have run. */
  starts: number[];
  /** May: the first sync command that may have run. */
  firstCommand: number | undefined;
  /** May: a commit that may have run since the last reverse. */
  committed: number | undefined;
  /** May: commits not yet followed by a wait for COMMITTED. */
  pendingCommits: Set<number>;
  /** May: verification in progress. */
  verifying: Verifying | undefined;
  /** May: the step that first started the verifier's check (startVerification, verify). */
  checkMay: number | undefined;
  /** Must: the verifier's check has been started. */
  checkMust: boolean;
  /** May: the verifier has been told writes are off (a verify step ran, or failed after sending it). */
  writesOffMay: boolean;
  /** Must: the verifier has been told writes are off. */
  writesOffMust: boolean;
  /**
   * May: a reverse after which the verifier may still hold the verification from before it (a
   * check started before it, none since): `reverse` is its line, `check` the check's.
   */
  checkBeforeReverse: { reverse: number; check: number } | undefined;
}

/** What a step leaves: the flow when it succeeds, and when it fails (default: the flow before it). */
export interface SequenceOutcome {
  ok: Flow;
  failed?: Flow;
}

/** What a step kind's `sequence` sees: its flow (a copy it may change) and lint's reporting. */
export interface SequenceStep {
  index: number;
  step: Step;
  runbook: Runbook;
  /** The flow before this step (a copy: change it and return it). */
  flow: Flow;
  /** Steps in the runbook. */
  count: number;
  /** The runbook declares a service version of at least `v`. */
  atLeast(v: string): boolean;
  /** INITIALIZING is possible (1.20, or no version declared). */
  initializing: boolean;
  /** Reports a rule (one of the kind's `rules`) at this step's kind key (or at `sub` below it). */
  report(rule: RuleInfo, message: string, sub?: readonly (string | number)[]): void;
  /** `the start at line 12` for step `j`. */
  line(j: number): string;
  /** The line of step `j`'s kind key. */
  lineOf(j: number): number;
  /** Reports commits that nothing waited for, once each. */
  reportPending(f: Flow, reason: string): void;
  /**
   * Whether step `j` runs: `never` (a literal `when: false`), `maybe` (a `when` from a variable:
   * `--var` may set it at run time, whatever its default), or `always`. Not the loaded `when`,
   * which holds the default's value.
   */
  runs(j: number): "always" | "never" | "maybe";
  /** Step `j` runs in every run this step runs in: it always runs, or its `when` names this step's variable. */
  runsWhenever(j: number): boolean;
}

export function cloneFlow(f: Flow): Flow {
  return { ...f, states: new Set(f.states), starts: [...f.starts], pendingCommits: new Set(f.pendingCommits) };
}

export function joinFlows(a: Flow, b: Flow): Flow {
  return {
    states: new Set([...a.states, ...b.states]),
    writesStopped: a.writesStopped && b.writesStopped,
    canCommitSeen: a.canCommitSeen && b.canCommitSeen,
    streamHashingSeen: a.streamHashingSeen && b.streamHashingSeen,
    ceaReached: a.ceaReached && b.ceaReached,
    starts: [...new Set([...a.starts, ...b.starts])].sort((x, y) => x - y),
    firstCommand:
      a.firstCommand === undefined
        ? b.firstCommand
        : b.firstCommand === undefined
          ? a.firstCommand
          : Math.min(a.firstCommand, b.firstCommand),
    committed: a.committed ?? b.committed,
    pendingCommits: new Set([...a.pendingCommits, ...b.pendingCommits]),
    verifying: a.verifying ?? b.verifying,
    checkMay:
      a.checkMay === undefined ? b.checkMay : b.checkMay === undefined ? a.checkMay : Math.min(a.checkMay, b.checkMay),
    checkMust: a.checkMust && b.checkMust,
    checkBeforeReverse: a.checkBeforeReverse ?? b.checkBeforeReverse,
    writesOffMay: a.writesOffMay || b.writesOffMay,
    writesOffMust: a.writesOffMust && b.writesOffMust,
  };
}

/** Adds the states the fleet reaches by itself, with time. */
export const closure = closeStates;

/** Every state the model knows (INITIALIZING only where the version has it). */
export function allStates(initializing: boolean): Set<SyncState> {
  return new Set(ORDER.filter((s) => s !== "INITIALIZING" || initializing));
}

/** `RUNNING, PAUSED or COMMITTED`, in the sync's order. */
export function listStates(states: Iterable<SyncState>): string {
  const s = ORDER.filter((x) => [...states].includes(x));
  if (s.length <= 1) return s.join("");
  return `${s.slice(0, -1).join(", ")} or ${s.at(-1)}`;
}

/** The states right after `op` took effect, closed. */
export function resultOf(op: CommandOperation, initializing: boolean): Set<SyncState> {
  return closure(COMMAND_EFFECT[op].result.filter((s) => s !== "INITIALIZING" || initializing));
}

/**
 * A sync command at step `at.index`: when no reachable state allows it, reports it and assumes
 * the fleet ended where the author expected (without the command's other effects) — one
 * mistake, one finding. Returns false then; true when the command may run.
 */
export function commandPossible(at: SequenceStep, op: CommandOperation): boolean {
  const f = at.flow;
  const needs = COMMAND_EFFECT[op].before;
  if (needs.some((s) => f.states.has(s))) {
    f.firstCommand ??= at.index;
    return true;
  }
  at.report(
    COMMAND_IMPOSSIBLE_STATE,
    `${op} is allowed only in ${listStates(needs)}, and here the sync can only be ${listStates(f.states)}.`,
  );
  f.firstCommand ??= at.index;
  f.states = resultOf(op, at.initializing);
  return false;
}

/** Which reachable states a condition can hold in, and why none when it holds in none. */
export function narrow(states: Set<SyncState>, c: ConditionModel): { feasible: Set<SyncState>; reason?: string } {
  let f = new Set(states);
  const here = `here the sync can only be ${listStates(states)}`;
  if (c.lagBelowSeconds !== undefined && c.lagBelowSeconds <= 0)
    return {
      feasible: new Set(),
      reason: `lagBelow ${c.lagBelowSeconds} asks for lagTimeSeconds below 0, which it never is`,
    };
  if (c.states) {
    const want = c.states;
    f = new Set([...f].filter((s) => want.includes(s)));
    if (f.size === 0) return { feasible: f, reason: `it expects state ${listStates(want)}, and ${here}` };
  }
  if (c.needsProgress) {
    // null in IDLE (spec, progress rule 1), and in INITIALIZING, which comes before IDLE
    f.delete("IDLE");
    f.delete("INITIALIZING");
    if (f.size === 0)
      return { feasible: f, reason: `it needs \`${c.needsProgress}\`, which is null in IDLE (${here})` };
  }
  if (c.lagBelowSeconds !== undefined) {
    f.delete("PAUSED");
    if (f.size === 0) return { feasible: f, reason: `lagTimeSeconds is null while the sync is PAUSED (${here})` };
  }
  if (c.canCommit === true) {
    f.delete("IDLE");
    f.delete("INITIALIZING");
    if (f.size === 0)
      return { feasible: f, reason: `canCommit is never true in IDLE: a commit needs RUNNING (${here})` };
  }
  return { feasible: f };
}

/** A step that changes nothing lint models. */
export const unchanged = (at: SequenceStep): SequenceOutcome => ({ ok: at.flow });

/**
 * The migration includes a sharded cluster on a service before 1.10: there mongosync runs no
 * embedded verifier, whatever the start says. docs-cluster-to-cluster-sync v1.9 (@5fb41de2)
 * source/includes/fact-verifier-limitations.rst: "The verifier doesn't support sharded clusters.
 * If the migration includes a sharded cluster, mongosync disables the verifier" (gone from v1.10's
 * page, @c1cef224). Undeclared versions are not judged.
 */
export function shardedWithoutEmbedded(b: { source: string; destination: string }, at: SequenceStep): boolean {
  const sharded = (name: string): boolean => at.runbook.clusters?.[name]?.topology === "sharded";
  return (
    at.runbook.serviceVersion !== undefined &&
    !at.atLeast(BEHAVIOUR.embeddedVerifier.shardedSince) &&
    (sharded(b.source) || sharded(b.destination))
  );
}
