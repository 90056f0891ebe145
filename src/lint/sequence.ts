/**
 * Step order, judged against a model of the fleet's possible states.
 *
 * Before each step lint keeps a `Flow`: the set of sync states the fleet can be in there
 * (closed under the transitions that happen by themselves: INITIALIZING → RUNNING,
 * COMMITTING → COMMITTED), facts that hold on every path (writes stopped, canCommit awaited,
 * change event application reached), and facts that hold on some path (a start or commit may
 * have run, verification may be in progress).
 *
 * - The top is unknown (every state) unless the first sync command is a `start`: then the
 *   fleet must be IDLE until it, or that start fails. A cutover-only runbook (no start) is
 *   judged from "anything is possible", so it is never flagged for what it cannot know.
 * - Commands move the set (start: IDLE → RUNNING; pause: RUNNING → PAUSED; resume: PAUSED →
 *   RUNNING; commit: RUNNING → COMMITTING/COMMITTED; reverse: COMMITTED → RUNNING). A command is
 *   flagged only when it is impossible in *every* reachable state; lint then assumes it
 *   succeeded, so one mistake is reported once, not again at every later step.
 * - `waitFor` / `assert` narrow the set; a condition that holds in no reachable state is
 *   flagged (an endless wait, or an assert after which nothing runs), unless the step has
 *   `continueOnError`.
 * - A step with `continueOnError` may fail (both outcomes flow on); a step whose `when` comes
 *   from interpolation may or may not run; a literal `when: false` never runs.
 */
import { COMMAND_OPERATIONS } from "../api/commands.js";
import type { SyncState } from "../api/types.js";
import type { AssertBody, Step, StepKind, WaitForBody } from "../runbook/types.js";
import { pluginStepKind, stepKind } from "../runbook/types.js";
import type { LintContext, RuleInfo } from "./context.js";
import { durationSeconds, plural, q, serviceAtLeast } from "./context.js";

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
      "`verify` where the sync cannot reach change event application (not started yet, or paused before CEA).",
    spec: "after the sync service's progress shows `info` equal to `change event application`, verification checks may start and this endpoint is polled until phase is `idle`.",
    source: "sync-service-api.md",
    hint: "Move verify after start (it waits for change event application itself), and after any resume.",
  },
  {
    id: "verify-writes-off-early",
    severity: "warning",
    description: "`verify` with `writesOff: true` before writes are sure to be stopped.",
    spec: "`POST /api/v1/writesOff` (body `{}`) tells it writes have stopped on the source (after the sync is committed), so it can finish.",
    source: "service-facts.md",
    hint: "Send writesOff only after stopWrites (and after commit): set `writesOff: true` on a verify step placed after them.",
  },
  {
    id: "verify-without-writes-off",
    severity: "warning",
    description:
      "`verify` starts a check but never sends writesOff, so the verifier never finishes and the step times out.",
    spec: "`POST /api/v1/writesOff` (body `{}`) tells it writes have stopped on the source (after the sync is committed), so it can finish.",
    source: "service-facts.md",
    hint: "Place verify after stopWrites with `writesOff: true`, or set `continueOnError: true` on an early verify and finish with a later `verify: { startCheck: false, writesOff: true }`.",
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
    id: "stop-writes-without-undo",
    severity: "warning",
    description:
      "A `stopWrites` step without `undo`: a failure before commit would leave the application unable to write.",
    spec: "A failure or Ctrl-C before commit runs the `undo` of every hook that ran; after commit, nothing is undone.",
    source: "DESIGN.md",
    hint: "Add `undo: { use: ..., with: ... }` that turns application writes back on.",
  },
];

// the order a sync goes through them, for messages
const ORDER: readonly SyncState[] = ["IDLE", "INITIALIZING", "RUNNING", "PAUSED", "COMMITTING", "COMMITTED"];
const SYNC_COMMANDS: ReadonlySet<string> = new Set(COMMAND_OPERATIONS);
const CEA = "change event application";

interface Verifying {
  /** Step index of the verify or start that began it. */
  at: number;
  embedded: boolean;
}

interface Flow {
  states: Set<SyncState>;
  /** Must: a stopWrites step has succeeded (since the last reverse). */
  writesStopped: boolean;
  /** Must: a wait/assert of canCommit true since the last start/resume/reverse. */
  canCommitSeen: boolean;
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
}

function clone(f: Flow): Flow {
  return { ...f, states: new Set(f.states), starts: [...f.starts], pendingCommits: new Set(f.pendingCommits) };
}

function join(a: Flow, b: Flow): Flow {
  return {
    states: new Set([...a.states, ...b.states]),
    writesStopped: a.writesStopped && b.writesStopped,
    canCommitSeen: a.canCommitSeen && b.canCommitSeen,
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
  };
}

/** Add the states the fleet reaches by itself, with time. */
function closure(states: Iterable<SyncState>): Set<SyncState> {
  const out = new Set(states);
  if (out.has("INITIALIZING")) out.add("RUNNING");
  if (out.has("COMMITTING")) out.add("COMMITTED");
  return out;
}

function list(states: Iterable<SyncState>): string {
  const s = ORDER.filter((x) => [...states].includes(x));
  if (s.length <= 1) return s.join("");
  return `${s.slice(0, -1).join(", ")} or ${s.at(-1)}`;
}

const DDL_WORDS = [
  "createindex",
  "dropindex",
  "createcollection",
  "dropcollection",
  "dropdatabase",
  "renamecollection",
  "collmod",
  "shardcollection",
  "reshardcollection",
  "refinecollectionshardkey",
  "converttocapped",
  "createview",
  "ddl",
];

function looksLikeDdl(step: Step): string | undefined {
  const plugin = pluginStepKind(step);
  const text = JSON.stringify([
    step.id,
    step.name,
    "hook" in step ? step.hook : undefined,
    plugin,
    plugin ? (step as Record<string, unknown>)[plugin] : undefined,
  ])
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
  return DDL_WORDS.find((w) => text.includes(w));
}

type RunMode = "always" | "never" | "maybe";

interface Outcome {
  ok: Flow;
  /** The flow when the step fails (defaults to the flow before it). */
  failed?: Flow;
}

interface Condition {
  state?: SyncState[];
  canCommit?: boolean;
  info?: string;
  /** Some field that is null in IDLE must be non-null. */
  needsProgress?: string;
  lagBelow?: number;
}

function condition(body: WaitForBody | AssertBody): Condition {
  const c: Condition = {};
  if (body.state !== undefined) c.state = Array.isArray(body.state) ? body.state : [body.state];
  if (body.canCommit !== undefined) c.canCommit = body.canCommit;
  if (body.info !== undefined) c.info = body.info;
  for (const e of body.expect ?? []) {
    if (e.path === "state") {
      const v = e.equals !== undefined ? [e.equals] : e.in;
      if (v && v.every((x) => typeof x === "string" && (ORDER as readonly string[]).includes(x))) {
        const s = v as SyncState[];
        c.state = c.state ? c.state.filter((x) => s.includes(x)) : s;
      }
    } else if (e.path === "canCommit" && e.equals === true) c.canCommit = true;
    else if (e.path === "info" && typeof e.equals === "string") c.info = e.equals;
  }
  if (body.lagBelow !== undefined) {
    const n = durationSeconds(body.lagBelow);
    if (n !== undefined) c.lagBelow = n;
  }
  if (body.lagBelow !== undefined) c.needsProgress = "lagTimeSeconds";
  else if (c.info !== undefined) c.needsProgress = "info";
  else if (body.canWrite === true) c.needsProgress = "canWrite";
  else if (body.copyComplete === true || body.copyStarted === true) c.needsProgress = "collectionCopy";
  return c;
}

export function check(ctx: LintContext): void {
  const steps = ctx.runbook.steps;
  checkIds(ctx);
  steps.forEach((s, i) => {
    if ("stopWrites" in s && s.stopWrites && !s.stopWrites.undo) {
      ctx.report(
        "stop-writes-without-undo",
        ["steps", i, "stopWrites"],
        "This stopWrites step has no `undo`: if the run fails before commit, application writes stay off until someone turns them back on by hand.",
        {
          key: true,
        },
      );
    }
  });

  // a plugin's step kind does what its plugin does: judged like a hook (no sync command; during verification it must run no DDL)
  const kinds = steps.map((s): StepKind => {
    const k = stepKind(s);
    return k === "plugin" ? "hook" : k;
  });
  const modes = steps.map((s, i) => runMode(ctx, s, i));
  const v120 = ctx.runbook.serviceVersion === undefined || serviceAtLeast(ctx.runbook, "1.20");
  const all = new Set(ORDER.filter((s) => s !== "INITIALIZING" || v120));

  const firstCmd = kinds.findIndex((k, i) => SYNC_COMMANDS.has(k) && modes[i] !== "never");
  const hasStart = kinds.some((k, i) => k === "start" && modes[i] !== "never");
  const startsClean = firstCmd >= 0 && kinds[firstCmd] === "start" && modes[firstCmd] === "always";
  let flow: Flow = {
    states: startsClean ? new Set<SyncState>(["IDLE"]) : all,
    writesStopped: false,
    canCommitSeen: false,
    ceaReached: false,
    starts: [],
    firstCommand: undefined,
    committed: undefined,
    pendingCommits: new Set(),
    // A cutover-only runbook on service 1.9+: the embedded verifier (on by default) may be running.
    verifying: !hasStart && serviceAtLeast(ctx.runbook, "1.9") ? { at: -1, embedded: true } : undefined,
  };
  const reportedPending = new Set<number>();
  const reportPending = (f: Flow, reason: string): void => {
    for (const c of f.pendingCommits) {
      if (reportedPending.has(c)) continue;
      reportedPending.add(c);
      ctx.report(
        "commit-without-committed-wait",
        ["steps", c, "commit"],
        `Nothing waits for this commit to reach COMMITTED${reason}; it stays COMMITTING for lagTimeSeconds.`,
        { key: true },
      );
    }
  };

  steps.forEach((step, i) => {
    const mode = modes[i] as RunMode;
    if (mode === "never") return;
    const out = apply(ctx, step, kinds[i] as StepKind, i, clone(flow), { v120, steps: steps.length, reportPending });
    const mayFail = step.continueOnError === true;
    let next = out.ok;
    if (mayFail) next = join(next, out.failed ?? flow);
    if (mode === "maybe") next = join(next, flow);
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

interface ApplyEnv {
  v120: boolean;
  steps: number;
  reportPending: (f: Flow, reason: string) => void;
}

function apply(ctx: LintContext, step: Step, kind: StepKind, i: number, f: Flow, env: ApplyEnv): Outcome {
  const at = ["steps", i, kind];
  const line = (j: number, k: string): string => `the ${k} at line ${ctx.lineOf(["steps", j, k], { key: true })}`;
  const kindAt = (j: number): string =>
    line(j, pluginStepKind(ctx.runbook.steps[j] as Step) ?? stepKind(ctx.runbook.steps[j] as Step));
  const states = f.states;
  // A command no reachable state allows is reported; lint then assumes the fleet ended where
  // the author expected it to, without the command's other effects (so one mistake is one finding).
  const impossible = (needs: SyncState, verb: string, target: SyncState[]): Outcome => {
    ctx.report(
      "command-impossible-state",
      at,
      `${verb} is allowed only in ${needs}, and here the sync can only be ${list(states)}.`,
      { key: true },
    );
    f.firstCommand ??= i;
    f.states = closure(target);
    return { ok: f };
  };
  const command = (): void => {
    f.firstCommand ??= i;
  };

  switch (kind) {
    case "start": {
      if (f.starts.length > 0) {
        ctx.report(
          "start-twice",
          at,
          `The sync is already started by ${line(f.starts[0] as number, "start")}; start is allowed only in IDLE.`,
          { key: true },
        );
        return { ok: f };
      } else if (f.firstCommand !== undefined) {
        ctx.report(
          "start-not-first",
          at,
          `start is allowed only in IDLE, and ${kindAt(f.firstCommand)} runs before it.`,
          { key: true },
        );
        f.starts = [i];
        f.states = closure(env.v120 ? ["INITIALIZING", "RUNNING"] : ["RUNNING"]);
        return { ok: f };
      } else if (!states.has("IDLE")) {
        f.starts = [i];
        return impossible("IDLE", "start", env.v120 ? ["INITIALIZING", "RUNNING"] : ["RUNNING"]);
      }
      command();
      const s = "start" in step ? step.start : undefined;
      const embedded =
        s?.verification?.enabled === true || (s?.verification?.enabled !== false && serviceAtLeast(ctx.runbook, "1.9"));
      f.states = closure(env.v120 ? ["INITIALIZING", "RUNNING"] : ["RUNNING"]);
      f.starts = [i];
      f.canCommitSeen = false;
      f.ceaReached = false;
      f.committed = undefined;
      if (embedded) f.verifying = { at: i, embedded: true };
      return { ok: f };
    }
    case "commit": {
      if (f.committed !== undefined) {
        ctx.report(
          "commit-twice",
          at,
          `The sync is already committed by ${line(f.committed, "commit")}; commit needs state RUNNING.`,
          { key: true },
        );
        return { ok: f };
      } else if (!states.has("RUNNING")) {
        return impossible("RUNNING", "commit", ["COMMITTING"]);
      }
      if (!f.writesStopped && ctx.runbook.writesStoppedExternally !== true) {
        const maybe = ctx.runbook.steps.slice(0, i).some((s) => "stopWrites" in s);
        ctx.report(
          "commit-without-stop-writes",
          at,
          maybe
            ? "No stopWrites step is sure to have succeeded before this commit (one may be skipped or continue on error); writes during commit may lose data."
            : "No stopWrites step runs before this commit; application writes to the source must be stopped, or data written during commit may be lost.",
          { key: true },
        );
      }
      if (!f.canCommitSeen) {
        ctx.report(
          "commit-without-can-commit-wait",
          at,
          "No `waitFor: { canCommit: true }` runs before this commit (since the sync last started or resumed); commit needs RUNNING with canCommit true.",
          {
            key: true,
          },
        );
      }
      command();
      f.states = closure(["COMMITTING"]);
      f.committed = i;
      f.pendingCommits.add(i);
      if (f.verifying?.embedded) f.verifying = undefined;
      return { ok: f };
    }
    case "pause": {
      if (!states.has("RUNNING")) return impossible("RUNNING", "pause", ["PAUSED"]);
      command();
      f.states = new Set(["PAUSED"]);
      return { ok: f };
    }
    case "resume": {
      if (!states.has("PAUSED")) return impossible("PAUSED", "resume", ["RUNNING"]);
      command();
      f.states = new Set(["RUNNING"]);
      f.canCommitSeen = false;
      return { ok: f };
    }
    case "reverse": {
      if (!states.has("COMMITTED")) return impossible("COMMITTED", "reverse", ["RUNNING"]);
      const starts = f.starts.map((j) => ({
        j,
        s: (ctx.runbook.steps[j] as Step & { start: { reversible?: boolean } }).start,
      }));
      if (starts.length > 0 && starts.every(({ s }) => s.reversible !== true)) {
        ctx.report(
          "reverse-not-reversible",
          at,
          `${line(starts[0]?.j as number, "start")} does not set \`reversible: true\`, so the sync cannot be reversed.`,
          { key: true },
        );
      }
      env.reportPending(f, ` before the reverse at line ${ctx.lineOf(at, { key: true })}, which needs COMMITTED`);
      command();
      f.states = new Set(["RUNNING"]);
      f.committed = undefined;
      f.pendingCommits = new Set();
      f.writesStopped = false;
      f.canCommitSeen = false;
      f.ceaReached = false;
      return { ok: f };
    }
    case "waitFor":
    case "assert": {
      const body = ("waitFor" in step ? step.waitFor : "assert" in step ? step.assert : undefined) as
        WaitForBody | AssertBody;
      const c = condition(body);
      const { feasible, reason } = narrow(states, c);
      if (feasible.size === 0) {
        // Never holds: report (unless a failure is expected), and judge what follows from the
        // states before it, ignoring the condition, so one mistake is reported once.
        if (step.continueOnError === true || !reason) return { ok: f };
        const after = env.steps - i - 1;
        if (kind === "assert") {
          ctx.report(
            "unreachable-after-assert",
            at,
            `This assert can never hold here: ${reason}. The run fails at it${after > 0 ? `, so the ${plural(after, "step")} after it never run` : ""}.`,
            { key: true },
          );
        } else {
          ctx.report(
            "wait-never-holds",
            at,
            `This waitFor can never be satisfied here: ${reason}. It would wait until its timeout and fail.`,
            { key: true },
          );
        }
        return { ok: f };
      }
      const held = feasible;
      f.states = closure(held);
      if (c.canCommit === true && body.on !== "any") f.canCommitSeen = true;
      if (c.canCommit === true || c.info === CEA) f.ceaReached = true;
      if ([...held].every((s) => s === "COMMITTED")) f.pendingCommits = new Set();
      return { ok: f };
    }
    case "verify": {
      const v = "verify" in step ? step.verify : undefined;
      if (states.size > 0 && [...states].every((s) => s === "IDLE")) {
        ctx.report(
          "verify-before-cea",
          at,
          "No sync is running here (the fleet is IDLE until start), so change event application is never reached and verification cannot begin.",
          {
            key: true,
          },
        );
      } else if (!f.ceaReached && states.has("PAUSED") && [...states].every((s) => s === "PAUSED" || s === "IDLE")) {
        ctx.report(
          "verify-before-cea",
          at,
          "The sync is paused here and has not been seen in change event application: it cannot reach it until resumed.",
          { key: true },
        );
      }
      if (v?.writesOff === true && !f.writesStopped && ctx.runbook.writesStoppedExternally !== true) {
        ctx.report(
          "verify-writes-off-early",
          [...at, "writesOff"],
          "writesOff tells the verifier that writes to the source have stopped, and no stopWrites step is sure to have run before this verify.",
        );
      }
      if (v?.startCheck !== false && v?.writesOff !== true && step.continueOnError !== true) {
        ctx.report(
          "verify-without-writes-off",
          at,
          "This verify starts the verifier's check but never tells it that writes have stopped (`writesOff`), so the verifier keeps rechecking and the step waits until its timeout.",
          {
            key: true,
          },
        );
      }
      const failed = clone(f);
      failed.verifying ??= { at: i, embedded: false };
      f.ceaReached = true;
      if (f.verifying && !f.verifying.embedded) f.verifying = undefined;
      return { ok: f, failed };
    }
    case "hook": {
      if (f.verifying) {
        const why = f.verifying.embedded
          ? f.verifying.at >= 0
            ? `the embedded verifier (on by default since service 1.9) checks from ${line(f.verifying.at, "start")} until commit`
            : "the embedded verifier (on by default since service 1.9) may be checking until commit"
          : `${line(f.verifying.at, "verify")} may still be verifying (it continues on error)`;
        const ddl = looksLikeDdl(step);
        if (ddl) {
          ctx.report(
            "ddl-during-verify",
            at,
            `This hook looks like DDL (${q(ddl)}) and ${why}; the verifier does not support DDL.`,
            { key: true },
          );
        } else {
          ctx.report(
            "hook-during-verify",
            at,
            `This hook runs while ${why}; the verifier does not support DDL, so the hook must run none.`,
            { key: true },
          );
        }
      }
      return { ok: f };
    }
    case "stopWrites": {
      const failed = clone(f);
      f.writesStopped = true;
      return { ok: f, failed };
    }
    default:
      return { ok: f };
  }
}

function narrow(states: Set<SyncState>, c: Condition): { feasible: Set<SyncState>; reason?: string } {
  let f = new Set(states);
  const here = `here the sync can only be ${list(states)}`;
  if (c.lagBelow !== undefined && c.lagBelow <= 0)
    return { feasible: new Set(), reason: `lagBelow ${c.lagBelow} asks for lagTimeSeconds below 0, which it never is` };
  if (c.state) {
    const want = c.state;
    f = new Set([...f].filter((s) => want.includes(s)));
    if (f.size === 0) return { feasible: f, reason: `it expects state ${list(want)}, and ${here}` };
  }
  if (c.needsProgress) {
    f.delete("IDLE");
    if (f.size === 0)
      return { feasible: f, reason: `it needs \`${c.needsProgress}\`, which is null in IDLE (${here})` };
  }
  if (c.lagBelow !== undefined) {
    f.delete("PAUSED");
    if (f.size === 0) return { feasible: f, reason: `lagTimeSeconds is null while the sync is PAUSED (${here})` };
  }
  if (c.canCommit === true) {
    f.delete("IDLE");
    if (f.size === 0)
      return { feasible: f, reason: `canCommit is never true in IDLE: a commit needs RUNNING (${here})` };
  }
  return { feasible: f };
}
