/**
 * Step order, judged against a model of the fleet's possible states (src/steps/kit/sequence.ts).
 *
 * Lint walks the steps with a `Flow` (the states the fleet can be in before each step, and what
 * holds on every or some path), and asks each step's kind what it does to it (the kind's
 * `sequence`, next to how it runs). This file owns the rules' texts and the walk:
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
import { allStates, bindStep, cloneFlow, joinFlows, type Flow, type SequenceStep } from "../steps/index.js";
import type { LintContext, RuleInfo } from "./context.js";
import { q, serviceAtLeast } from "./context.js";

export const rules: RuleInfo[] = [
  {
    id: "start-not-first",
    severity: "error",
    description:
      "`start` comes after another sync command (commit, pause, resume, reverse), so the fleet cannot be IDLE.",
    spec: "start is allowed only in IDLE.",
    source: "sync-service-api.md",
    hint: "Put `start` before every other command, or split the runbook: one that starts the sync, one for the cutover.",
  },
  {
    id: "start-twice",
    severity: "error",
    description: "A second `start` after the sync was started.",
    spec: "Start fails when the service is not in state IDLE.",
    source: "sync-service-api.md",
    hint: "Remove the second start: a running sync is never started again (to add a database, restart the sync from the beginning in a new runbook).",
  },
  {
    id: "commit-twice",
    severity: "error",
    description: "A `commit` after another commit (with no reverse between them).",
    spec: "Preconditions: application writes to the source are stopped; state RUNNING and canCommit true. Effect: state goes to COMMITTING, then COMMITTED; continuous sync stops.",
    source: "sync-service-api.md",
    hint: "Commit once; wait for it with `waitFor: { state: COMMITTED }`.",
  },
  {
    id: "commit-without-stop-writes",
    severity: "error",
    description:
      "`commit` with no earlier `stopWrites` step that is sure to have succeeded (and no `writesStoppedExternally: true`).",
    spec: "Preconditions: application writes to the source are stopped (reads are still allowed; writes during commit may lose data).",
    source: "sync-service-api.md",
    // Service facts, "Not published": "Which configuration controls write blocking from 1.20, and
    // its default on the source: assume source writes are **not** blocked; stopping application
    // writes stays the runbook's job": so a 1.20+ runbook needs its stopWrites too.
    hint: "Add a `stopWrites` step (with an `undo`) before commit, or declare `writesStoppedExternally: true` if writes are stopped outside the runbook.",
  },
  {
    id: "commit-without-can-commit-wait",
    severity: "error",
    description: "`commit` with no earlier `waitFor` of `canCommit: true` since the sync last (re)started.",
    spec: "The progress endpoint should show state RUNNING and canCommit true before commit is sent.",
    source: "sync-service-api.md",
    hint: "Add `waitFor: { canCommit: true, lagBelow: 5 }` before the commit.",
  },
  {
    id: "commit-without-committed-wait",
    severity: "warning",
    description: "`commit` is never followed by a wait for state COMMITTED.",
    spec: "RUNNING → COMMITTING: stays in COMMITTING for the number of seconds given by lagTimeSeconds; then COMMITTED: continuous sync stops.",
    source: "sync-service-api.md",
    hint: "Add `waitFor: { state: COMMITTED, timeout: 1h }` after the commit.",
  },
  {
    id: "command-impossible-state",
    severity: "error",
    description:
      "A command no reachable state allows (resume never paused, pause after commit, reverse before commit, commit when not RUNNING, start when not IDLE).",
    spec: "pause: only in RUNNING; resume: only in PAUSED; reverse: only in COMMITTED. (commit: state RUNNING; start: allowed only in IDLE.)",
    source: "service-facts.md",
    hint: "Reorder the steps so the command meets the state it needs, or remove it.",
  },
  {
    id: "reverse-not-reversible",
    severity: "error",
    description: "`reverse` of a sync whose `start` did not set `reversible: true`.",
    spec: "`POST /api/v1/reverse`: only in COMMITTED, and only if `start` set `reversible: true` and write blocking on source and destination.",
    source: "service-facts.md",
    hint: "Set `reversible: true` and `enableUserWriteBlocking: true` in start, or remove the reverse step.",
  },
  {
    id: "verify-before-cea",
    severity: "error",
    description:
      "`startVerification` or `verify` starts the verifier's check where the sync cannot reach change event application (not started yet, or paused before CEA).",
    spec: "after the sync service's progress shows `info` equal to `change event application`, verification checks may start and this endpoint is polled until phase is `idle`.",
    source: "sync-service-api.md",
    hint: "Move the step after start (it waits for change event application itself), and after any resume.",
  },
  {
    id: "verify-writes-off-early",
    severity: "warning",
    description: "`verify` (which sends writesOff) before writes are sure to be stopped.",
    spec: "When the README's workflow sends `writesOff`: after writes on the source have stopped and the sync is **COMMITTED**.",
    source: "service-facts.md",
    hint: "Place verify after stopWrites and commit (the documented order: commit, `waitFor: { state: COMMITTED }`, then verify).",
  },
  {
    id: "writes-off-before-commit",
    severity: "warning",
    description:
      "`verify` sends writesOff where the sync may not be COMMITTED yet: the destination's index metadata still differs by design, so the verification fails on it.",
    spec: "When the README's workflow sends `writesOff`: after writes on the source have stopped and the sync is **COMMITTED**. Before commit the service keeps unique indexes non-unique, TTL indexes at their largest value and hidden indexes visible on the destination, so index metadata differs by design until commit.",
    source: "service-facts.md",
    hint: "Start the check early with `startVerification` (during change event application) and move `verify` after the commit and a `waitFor: { state: COMMITTED }` (and `waitFor: { canWrite: true }`, on every instance).",
  },
  {
    id: "verifier-wait-without-writes-off",
    severity: "error",
    description:
      "A wait for the verifier's result (`phase: idle`) after its check started and before anything tells it writes are off: the check never finishes, so the wait never ends.",
    spec: "`check` answers success at once and starts later … Success: phase `idle` after a check ran. (The check rechecks until `writesOff`: then one last generation, then `idle`.)",
    source: "service-facts.md",
    hint: "Wait for the result with a `verify` step (it sends writesOff, then waits), after the commit.",
  },
  {
    id: "verify-without-writes-off",
    severity: "warning",
    description:
      "`startVerification` starts a check that no later `verify` step finishes: the verifier never gets writesOff and never gives a result.",
    spec: "When the README's workflow sends `writesOff`: after writes on the source have stopped and the sync is **COMMITTED**.",
    source: "service-facts.md",
    hint: "Add a `verify` step after the commit and its `waitFor: { state: COMMITTED }`.",
  },
  {
    id: "hook-during-verify",
    severity: "warning",
    description: "A `hook` step runs while verification may be in progress (the verifier does not support DDL).",
    spec: "The verifier does not support DDL operations, so no DDL may run on the source while verification is in progress.",
    source: "sync-service-api.md",
    hint: "Make sure the hook runs no DDL (create/drop/rename collections or indexes, collMod), or move it before verification starts or after it completes.",
  },
  {
    id: "ddl-during-verify",
    severity: "error",
    description:
      "A hook that looks like DDL (createIndex, drop, renameCollection, collMod, ...) while verification may be in progress.",
    spec: "The verifier does not support DDL operations, so no DDL may run on the source while verification is in progress.",
    source: "sync-service-api.md",
    hint: "Run DDL before the sync starts or after verification completes (and the sync is committed).",
  },
  {
    id: "writes-on-before-can-write",
    severity: "error",
    description:
      "A `hook` with `writesOn: true` (the application writes again) that can run before the destination takes writes: no commit before it, or no wait for `canWrite: true` (or state COMMITTED) between the commit and it.",
    spec: "`canWrite` becomes true during commit; COMMITTED comes later. Do not write to the destination while `canWrite` is false.",
    source: "service-facts.md",
    hint: "Put the hook after the commit and a `waitFor: { canWrite: true }` (every instance) (or `state: COMMITTED`); to switch writes back on the source before commit, use the stopWrites step's `undo`.",
  },
  {
    id: "unreachable-after-assert",
    severity: "error",
    description:
      "An `assert` that can never hold where it stands (without continueOnError): it fails the run and the steps after it never run.",
    spec: "Dry-run lint rules: ... unreachable steps after a failing assert.",
    source: "DESIGN.md",
    hint: "Fix the condition or move the assert to where it can hold (e.g. `state: COMMITTED` after the commit and its wait).",
  },
  {
    id: "wait-never-holds",
    severity: "error",
    description: "A `waitFor` whose condition can never hold where it stands: it waits until its timeout and fails.",
    spec: "In state IDLE, all fields except `state` and `canCommit` are null. In state PAUSED, `lagTimeSeconds` is null. (States and transitions.)",
    source: "sync-service-api.md",
    hint: "Fix the condition or move the wait to where the sync can reach it.",
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
    id: "preflight-after-start",
    severity: "warning",
    description: "A `preflight` step after a `start`: the sync is writing to the destination by then.",
    spec: "Checks against the live clusters in the days before the window, and again minutes before `start`.",
    source: "DESIGN.md",
    hint: "Put the preflight step first, before start.",
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
  steps.forEach((s, i) => {
    const b = bindStep(s);
    if (b.opensWriteStop && b.hookCall() && !b.hookCall()?.undo) {
      ctx.report(
        "stop-writes-without-undo",
        ["steps", i, b.kind],
        `This ${b.kind} step has no \`undo\`: if the run fails before commit, application writes stay off until someone turns them back on by hand.`,
        { key: true },
      );
    }
  });

  const bound = steps.map((s) => bindStep(s));
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
      report: (rule, message, sub) =>
        sub
          ? ctx.report(rule, ["steps", i, keyOf(i), ...sub], message)
          : ctx.report(rule, ["steps", i, keyOf(i)], message, { key: true }),
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
