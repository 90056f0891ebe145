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
 *   from interpolation may or may not run; a literal `when: false` never runs.
 */
import { BEHAVIOUR } from "../api/versions.js";
import type { SyncState } from "../api/types.js";
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
  let flow: Flow = {
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

  steps.forEach((step, i) => {
    const mode = modes[i] as RunMode;
    if (mode === "never") return;
    const at: SequenceStep = {
      index: i,
      step,
      runbook: ctx.runbook,
      flow: cloneFlow(flow),
      count: steps.length,
      atLeast: (v) => serviceAtLeast(ctx.runbook, v),
      initializing,
      report: (rule, message, sub) => {
        // a kind reports only the rules it lists (their metadata sits beside the code that reports them)
        if (!bound[i]!.rules.includes(rule))
          throw new Error(`step kind ${bound[i]!.kind} reports ${rule.id}, which is not in its rules`);
        if (sub) ctx.report(rule.id, ["steps", i, keyOf(i), ...sub], message);
        else ctx.report(rule.id, ["steps", i, keyOf(i)], message, { key: true });
      },
      line: (j) => `the ${keyOf(j)} at line ${lineOf(j)}`,
      lineOf,
      reportPending,
    };
    const out = bound[i]!.sequence(at);
    let next = out.ok;
    if (step.continueOnError === true) next = joinFlows(next, out.failed ?? flow);
    if (mode === "maybe") next = joinFlows(next, flow);
    flow = next;
  });
  reportPending(flow, " before the runbook ends");
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
