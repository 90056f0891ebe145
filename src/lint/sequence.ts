/**
 * Step order, judged against a model of the fleet's possible states (src/steps/kit/sequence.ts).
 *
 * Lint walks the steps with a `Flow` (the states the fleet can be in before each step, and what
 * holds on every or some path), and asks each step's kind what it does to it (the kind's
 * `sequence`, next to how it runs, which reports the rules it finds: their metadata sits there too,
 * in the kind's `rules`). This file owns the walk and the rules no one kind reports (a commit
 * nothing waits for, duplicate ids, a stopWrites without undo):
 *
 * - The top is unknown (every state) unless the first sync command is a `start`: then the
 *   fleet must be IDLE until it, or that start fails. A cutover-only runbook (no start) is
 *   judged from "anything is possible", so it is never flagged for what it cannot know.
 * - A step with `continueOnError` may fail (both outcomes flow on); a step whose `when` comes
 *   from interpolation may or may not run; a literal `when: false` never runs (`true`: always).
 * - Steps whose `when` is the same variable (`${vars.rollback}`, spaces inside the braces aside:
 *   as the loader reads it) run together: a `when` is read once, when the runbook loads, from
 *   `vars`, `--var` and the environment, and no step changes them during a run. The walk carries
 *   one flow per assignment of the variables seen (a branch): the variable's steps run on the
 *   branches where it is true, not at all where it is false, and past its last step the two are
 *   joined again. A step is judged once, on the join of the branches it runs on. Any other
 *   `when` text, a variable only one step names, and one met past `MAX_TIED` tied at once: each
 *   step may or may not run on its own. `continueOnError` still lets a tied step fail on its branch.
 */
import { BEHAVIOUR } from "../api/versions.js";
import type { SyncState } from "../api/types.js";
import { wholeReference } from "../runbook/interpolate.js";
import type { Step } from "../runbook/types.js";
import { pluginStepKind, stepKind } from "../runbook/types.js";
import {
  SEQUENCE_RULES,
  allStates,
  cloneFlow,
  joinFlows,
  traitsOf,
  type Flow,
  type SequenceStep,
} from "../steps/index.js";
import type { LintContext, RuleInfo } from "./context.js";
import { q, serviceAtLeast } from "./context.js";

export const rules: RuleInfo[] = [
  ...SEQUENCE_RULES,
  {
    id: "commit-without-committed-wait",
    severity: "warning",
    description: "`commit` is never followed by a wait for state COMMITTED.",
    spec: "RUNNING → COMMITTING: stays in COMMITTING for the number of seconds given by lagTimeSeconds; then COMMITTED: continuous sync stops.",
    source: "sync-service-api.md",
    hint: "Add `waitFor: { state: COMMITTED, timeout: 1h }` after the commit.",
  },
  {
    id: "commit-without-verify",
    severity: "warning",
    description:
      'A runbook that commits and has no `verify` step: nothing verifies the destination before the application moves to it, and its run, rehearsal and report say "not verified".',
    spec: "Before you switch your application workload to the destination cluster, you should always verify a successful sync.",
    source: "service-facts.md",
    docs: "https://www.mongodb.com/docs/cluster-to-cluster-sync/current/reference/cutover-process/",
    ref: "mongodb/docs content/mongosync/current/source/reference/cutover-process.txt (the note above its steps); service-facts.md, The recommended cutover, 5",
    hint: "Add `verify: { timeout: 4h }` after the commit and its `waitFor: { state: COMMITTED }` (with the runbook's `verifier:` URL), and before the step that moves the application; start the check early with `startVerification` during change event application.",
  },
  {
    id: "step-id-duplicate",
    severity: "error",
    description: "Two steps have the same `id`.",
    spec: "Step identifier, unique in the runbook; used by `--from`, `--to`, `--resume` and reports.",
    source: "DESIGN.md",
    hint: "Give every step a different id.",
  },
  {
    id: "continue-on-error-unsafe",
    severity: "error",
    description:
      '`continueOnError` on a `start`, `commit`, `reverse` or `stopWrites`: a failure of these must end the run (a refused commit ended "run ok, not committed, exit 0").',
    spec: "When true, a failure of this step is reported but the run goes on. Never allowed to skip a safety interlock, and never on `start`, `commit`, `reverse` or `stopWrites`: their failure ends the run (lint refuses the flag there).",
    source: "runbook.schema.json",
    hint: "Remove `continueOnError` from this step: the runner ignores it here. To go on by hand after a failure, read the fleet (`syncbook status`) and run again `--from` the step that should follow.",
  },
  {
    id: "stop-writes-without-undo",
    severity: "warning",
    description:
      "A `stopWrites` step without `undo`: a failure before commit would leave the application unable to write.",
    spec: "A failure or Ctrl-C before commit runs the `undo` of every hook that ran; after commit, nothing is undone.",
    source: "DESIGN.md",
    hint: "Add `undo: { use: ..., with: ... }` that turns application writes back on.",
  },
];

type RunMode = "always" | "never" | "maybe";

/**
 * The most `when` variables tied at once: each doubles the branches walked side by side (16 here).
 * A variable first met past it stays untied, its steps each a "maybe" on their own (the walk
 * before ties): more paths than a run can take, so more findings, never fewer.
 */
const MAX_TIED = 4;

/** One assignment of the tied `when` variables (true: their steps run), and the flow on it. */
interface Branch {
  assign: ReadonlyMap<string, boolean>;
  flow: Flow;
}

export function check(ctx: LintContext): void {
  const steps = ctx.runbook.steps;
  checkIds(ctx);
  ctx.steps.forEach(({ bound: b }, i) => {
    if (b.opensWriteStop && b.hookCall() && !b.hookCall()?.undo) {
      ctx.report(
        "stop-writes-without-undo",
        ["steps", i, b.kind],
        `This ${b.kind} step has no \`undo\`: if the run fails before commit, application writes stay off until someone turns them back on by hand.`,
        { key: true },
      );
    }
  });

  const bound = ctx.steps.map((s) => s.bound);
  bound.forEach((b, i) => {
    if (steps[i]!.continueOnError === true && b.failureStopsRun !== undefined)
      ctx.report(
        "continue-on-error-unsafe",
        ["steps", i, "continueOnError"],
        `\`continueOnError\` cannot apply to a ${b.kind} step: ${b.failureStopsRun}.`,
        { key: true },
      );
  });
  const modes = steps.map((s, i) => runMode(ctx, s, i));
  const initializing =
    ctx.runbook.serviceVersion === undefined || serviceAtLeast(ctx.runbook, BEHAVIOUR.initializing.since);
  const isCommand = (i: number): boolean => bound[i]!.command !== undefined && modes[i] !== "never";
  const firstCmd = bound.findIndex((_, i) => isCommand(i));
  const hasStart = bound.some((b, i) => b.command === "start" && modes[i] !== "never");
  const startsClean = firstCmd >= 0 && bound[firstCmd]!.command === "start" && modes[firstCmd] === "always";
  const flow: Flow = {
    // before a start: IDLE, or INITIALIZING (1.20+: not ready for start yet; the start step waits it out)
    states: startsClean
      ? new Set<SyncState>(initializing ? ["INITIALIZING", "IDLE"] : ["IDLE"])
      : allStates(initializing),
    writesStopped: false,
    canCommitSeen: false,
    streamHashingSeen: false,
    ceaReached: false,
    starts: [],
    firstCommand: undefined,
    committed: undefined,
    pendingCommits: new Set(),
    // A cutover-only runbook on service 1.9+: the embedded verifier (on by default) may be running.
    verifying:
      !hasStart && serviceAtLeast(ctx.runbook, BEHAVIOUR.embeddedVerifier.since)
        ? { at: -1, embedded: true }
        : undefined,
    checkMay: undefined,
    checkMust: false,
    writesOffMay: false,
    writesOffMust: false,
    checkBeforeReverse: undefined,
  };
  const reportedPending = new Set<number>();
  const reportPending = (f: Flow, reason: string): void => {
    for (const c of f.pendingCommits) {
      if (reportedPending.has(c)) continue;
      reportedPending.add(c);
      ctx.report(
        "commit-without-committed-wait",
        ["steps", c, bound[c]!.kind],
        `Nothing waits for this commit to reach COMMITTED${reason}; it stays COMMITTING for lagTimeSeconds.`,
        { key: true },
      );
    }
  };
  const keyOf = (j: number): string => {
    const s = steps[j] as Step;
    return pluginStepKind(s) ?? stepKind(s);
  };
  const lineOf = (j: number): number => ctx.lineOf(["steps", j, keyOf(j)], { key: true });
  // `loud`: the step's findings are reported; a quiet run only says what the step leaves on one branch
  const stepAt = (i: number, f: Flow, loud: boolean): SequenceStep => ({
    index: i,
    step: steps[i]!,
    runbook: ctx.runbook,
    flow: f,
    count: steps.length,
    atLeast: (v) => serviceAtLeast(ctx.runbook, v),
    initializing,
    report: (rule, message, sub) => {
      // a kind reports only the rules it lists (their metadata sits beside the code that reports them)
      if (!bound[i]!.rules.includes(rule))
        throw new Error(`step kind ${bound[i]!.kind} reports ${rule.id}, which is not in its rules`);
      if (!loud) return;
      if (sub) ctx.report(rule.id, ["steps", i, keyOf(i), ...sub], message);
      else ctx.report(rule.id, ["steps", i, keyOf(i)], message, { key: true });
    },
    line: (j) => `the ${keyOf(j)} at line ${lineOf(j)}`,
    lineOf,
    reportPending: loud ? reportPending : () => undefined,
    runs: (j) => modes[j] as RunMode,
    // a variable is read once per run: steps that name the same one run together, tied or not
    runsWhenever: (j) => modes[j] === "always" || (refs[j] !== undefined && refs[j] === refs[i]),
  });

  const refs = steps.map((_, i) => (modes[i] === "maybe" ? whenReference(ctx, i) : undefined));
  const lastUse = sharedWhens(refs);
  const untied = new Set<string>();
  let branches: Branch[] = [{ assign: new Map(), flow }];
  // the tied variable of step i's `when`, splitting every branch on it at its first step
  const tieOf = (ref: string | undefined): string | undefined => {
    if (ref === undefined || !lastUse.has(ref) || untied.has(ref)) return undefined;
    const assign = branches[0]!.assign;
    if (assign.has(ref)) return ref;
    if (assign.size >= MAX_TIED) {
      untied.add(ref);
      return undefined;
    }
    branches = branches.flatMap((b) =>
      [true, false].map((v) => ({ assign: new Map(b.assign).set(ref, v), flow: b.flow })),
    );
    return ref;
  };

  steps.forEach((step, i) => {
    const mode = modes[i] as RunMode;
    if (mode === "never") return;
    const tied = tieOf(refs[i]);
    const runs = (b: Branch): boolean => tied === undefined || b.assign.get(tied) === true;
    const running = branches.filter(runs);
    // judged once, on the join of the branches it runs on: a finding that needs every reachable
    // state (command-impossible-state) keeps meaning every state of every path to the step
    const judged = bound[i]!.sequence(stepAt(i, cloneFlow(running.map((b) => b.flow).reduce(joinFlows)), true));
    branches = branches.map((b) => {
      if (!runs(b)) return b;
      const out = running.length === 1 ? judged : bound[i]!.sequence(stepAt(i, cloneFlow(b.flow), false));
      let next = out.ok;
      if (step.continueOnError === true) next = joinFlows(next, out.failed ?? b.flow);
      if (mode === "maybe" && tied === undefined) next = joinFlows(next, b.flow);
      return { assign: b.assign, flow: next };
    });
    if (tied !== undefined && lastUse.get(tied) === i) branches = forget(branches, tied);
  });
  reportPending(branches.map((b) => b.flow).reduce(joinFlows), " before the runbook ends");
  checkVerified(
    ctx,
    bound.map((b) => b.kind),
    modes,
  );
}

/**
 * `commit-without-verify`: the cutover page, "Before you switch your application workload to the
 * destination cluster, you should always verify a successful sync" (mongodb/docs,
 * content/mongosync/current/source/reference/cutover-process.txt). Reported once, at the first
 * commit; a runbook that only starts the sync commits nothing and is not asked to verify. Per sync:
 * a commit after a reverse needs a verify after that reverse.
 */
function checkVerified(ctx: LintContext, kinds: readonly string[], modes: readonly RunMode[]): void {
  const runs = (i: number): boolean => modes[i] !== "never";
  // a reverse starts a new sync, verified on its own (a verify before it no longer counts after it:
  // src/api/verifier-memory.ts reversedVerification): each sync's commit needs a verify of its own
  const syncs: number[][] = [[]];
  kinds.forEach((k, i) => {
    if (!runs(i)) return;
    if (traitsOf(k).command === "reverse") syncs.push([]);
    else syncs.at(-1)!.push(i);
  });
  for (const [n, sync] of syncs.entries()) {
    const commit = sync.find((i) => traitsOf(kinds[i]).command === "commit");
    // the kind that waits for the verifier's result is the one that verifies (a startVerification only starts it)
    if (commit === undefined || sync.some((i) => traitsOf(kinds[i]).waitsFor === "verifier")) continue;
    ctx.report(
      "commit-without-verify",
      ["steps", commit, kinds[commit]!],
      n === 0
        ? 'This runbook commits, and no `verify` step verifies the destination: the cutover page says "Before you switch your application workload to the destination cluster, you should always verify a successful sync." Its run, rehearsal and report will say "not verified".'
        : 'This commit of the reversed sync has no `verify` step after the reverse (the verification before it compared the sync that ran the other way): the cutover page says "Before you switch your application workload to the destination cluster, you should always verify a successful sync." Its run, rehearsal and report will say "not verified".',
      { key: true },
    );
    return;
  }
}

function runMode(ctx: LintContext, step: Step, i: number): RunMode {
  if (step.when === undefined) return "always";
  const raw = ctx.rawAt(["steps", i, "when"]);
  if (typeof raw === "boolean") return raw ? "always" : "never";
  return "maybe"; // interpolated: vars can be overridden at run time
}

/**
 * The variable step i's interpolated `when` names (`vars.rollback`), as the loader reads it: the
 * value is that variable's, fixed for the run. Undefined for any other text (judged on its own).
 */
function whenReference(ctx: LintContext, i: number): string | undefined {
  return wholeReference(ctx.rawAt(["steps", i, "when"]));
}

/** `when` variables that two or more steps share, each with the last step that has it. */
function sharedWhens(refs: readonly (string | undefined)[]): Map<string, number> {
  const count = new Map<string, number>();
  const last = new Map<string, number>();
  refs.forEach((r, i) => {
    if (r === undefined) return;
    count.set(r, (count.get(r) ?? 0) + 1);
    last.set(r, i);
  });
  return new Map([...last].filter(([r]) => count.get(r)! > 1));
}

/** Past a variable's last step: the branches that differ only by it joined (the ran one first, as a maybe step's). */
function forget(branches: readonly Branch[], ref: string): Branch[] {
  const merged = new Map<string, Branch>();
  for (const b of branches) {
    const assign = new Map([...b.assign].filter(([r]) => r !== ref));
    const key = JSON.stringify([...assign]);
    const seen = merged.get(key);
    merged.set(key, { assign, flow: seen ? joinFlows(seen.flow, b.flow) : b.flow });
  }
  return [...merged.values()];
}

function checkIds(ctx: LintContext): void {
  const seen = new Map<string, number>();
  ctx.runbook.steps.forEach((s, i) => {
    if (s.id === undefined) return;
    const first = seen.get(s.id);
    if (first !== undefined) {
      ctx.report(
        "step-id-duplicate",
        ["steps", i, "id"],
        `Step id ${q(s.id)} is already used by step ${first + 1} (line ${ctx.lineOf(["steps", first, "id"], { key: true })}).`,
      );
    } else seen.set(s.id, i);
  });
}
