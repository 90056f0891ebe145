/** `waitFor`: poll until the condition holds on every instance (or `on: any | coordinator`). */
import type { RuleInfo } from "../diagnostics.js";
import {
  evaluate,
  instanceSignature,
  conditionReads,
  readCondition,
  type Condition,
  type ConditionBody,
  type ConditionModel,
} from "../fleet/index.js";
import { canWriteInstance, noCanWriteReason } from "../runbook/can-write.js";
import type { WaitForBody } from "../runbook/types.js";
import { BEHAVIOUR, STATES, serviceAtLeast } from "../api/versions.js";
import { keyed, toEach, type StepKindDef } from "./kit/define.js";
import {
  CEA,
  closure,
  narrow,
  shardedWithoutEmbedded,
  type SequenceOutcome,
  type SequenceStep,
} from "./kit/sequence.js";
import { waitUntil } from "./kit/wait.js";
import { memoryWhyNot, verifierEarned } from "./kit/earned.js";
import { StepFailure, type StepContext } from "./kit/context.js";

/**
 * A condition on the verifier that nothing the run did can make this cutover's (no check of its
 * own, no writesOff for a result, a check whose first answers were never judged): refused at once
 * with why, rather than waited on until the step's time limit (earned.ts `memoryWhyNot`).
 */
export function refuseUnearnable(ctx: StepContext, cond: Condition, kind: "waitFor" | "assert"): void {
  const need = cond.model.verifierNeeds;
  const why = need === undefined ? undefined : memoryWhyNot(ctx.run.memory.verifier, need);
  if (why === undefined) return;
  throw new StepFailure(
    `this ${kind}'s condition on the verifier (${cond.text}) counts only for ${need === "result" ? "this cutover's verification result" : "this cutover's check"}, and there is none: ${why}`,
    {
      reason: kind === "assert" ? "assert" : "failed",
      hint:
        need === "result"
          ? "`idle` is also the answer of a verifier that never ran a check, or finished someone else's verification. Wait for the result with a `verify` step after the commit (it sends the check if none ran, then writesOff, then waits); conditions on the verifier's result belong after it."
          : "Start the check first (`startVerification` during change event application, or `verify`).",
    },
  );
}

/** Lint's `wait-never-holds` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const WAIT_NEVER_HOLDS: RuleInfo = {
  id: "wait-never-holds",
  severity: "error",
  description: "A `waitFor` whose condition can never hold where it stands: it waits until its timeout and fails.",
  spec: "In state IDLE, all fields except `state` and `canCommit` are null. In state PAUSED, `lagTimeSeconds` is null. (States and transitions.)",
  source: "sync-service-api.md",
  hint: "Fix the condition or move the wait to where the sync can reach it.",
};

/** Lint's `verifier-wait-without-writes-off` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const VERIFIER_WAIT_WITHOUT_WRITES_OFF: RuleInfo = {
  id: "verifier-wait-without-writes-off",
  severity: "error",
  description:
    "A wait for the verifier's result (`phase: idle`) after its check started and before anything tells it writes are off: the check never finishes, so the wait never ends.",
  spec: "`check` answers success at once and starts later … Success: phase `idle` after a check ran. (The check rechecks until `writesOff`: then one last generation, then `idle`.)",
  source: "service-facts.md",
  hint: "Wait for the result with a `verify` step (it sends writesOff, then waits), after the commit.",
};

/**
 * Lint's `verifier-condition-not-earned` (the state model, src/lint/sequence.ts), reported by the
 * `waitFor` and `assert` kinds' `sequence`: `idle` is also the answer of a verifier that never ran
 * a check (verifier v0.2.1 internal/verifier/progress.go), so a condition on the verifier counts
 * only for this cutover's check and result (src/steps/kit/earned.ts).
 */
export const VERIFIER_CONDITION_NOT_EARNED: RuleInfo = {
  id: "verifier-condition-not-earned",
  severity: "error",
  description:
    "A `waitFor` or `assert` on the verifier (`phase`, `failedTasks`, `metadataMismatchTasks`, `verifier.` paths) where no answer can be this cutover's: a result before any `verify`, a running check before any check of the runbook's. The run refuses it.",
  spec: '`idle` means "not running": not started, finished, or a new process. The documentation\'s success test holds only for a verification this client started and told `writesOff`: `idle` is also the answer of a verifier that never ran a check, and of a restarted one. A condition on `phase: idle` alone proves nothing.',
  source: "service-facts.md",
  hint: "Let a `verify` step (after the commit) wait for the result; put conditions on the verifier's result after it, and conditions on its running check after `startVerification`.",
};

/**
 * What a condition (waitFor, assert) does to lint's model: the states narrow to those where it
 * can hold. One that can hold nowhere is reported with `never` (unless the step may fail), and
 * what follows is judged from the states before it, so one mistake is one finding.
 */
export function conditionSequence(
  body: ConditionBody,
  at: SequenceStep,
  never: (reason: string) => void,
  verifierNeverIdle: (reason: string) => void = never,
  verifierNotEarned: (reason: string) => void = never,
): SequenceOutcome {
  const f = at.flow;
  const c = readCondition(body).model;
  // the verifier's check never ends before writesOff (service facts): idle cannot come
  if (
    c.verifierIdle &&
    f.checkMust &&
    !f.writesOffMay &&
    f.checkMay !== undefined &&
    at.step.continueOnError !== true
  ) {
    verifierNeverIdle(
      `the verifier's check started by ${at.line(f.checkMay)} is never idle until it is told writes are off, and no writesOff (a \`verify\` step) comes before this`,
    );
    return { ok: f };
  }
  // a verifier condition counts only for this cutover's check or result (src/steps/kit/earned.ts)
  const unearned =
    c.verifierNeeds === "result" && !f.writesOffMay
      ? "it reads the verifier's result, which counts only once a `verify` step of this runbook has told this cutover's check that writes are off, and none comes before it (`idle` is also the answer of a verifier that never ran a check, or finished someone else's verification)"
      : c.verifierNeeds === "check" && f.checkMay === undefined
        ? "it reads the verifier's running check, which counts only when a check of this runbook's (`startVerification` or `verify`) comes before it, and none does"
        : undefined;
  if (unearned !== undefined) {
    if (at.step.continueOnError !== true) verifierNotEarned(unearned);
    return { ok: f };
  }
  const embedded = embeddedNever(c, at) ?? stateNever(c, at);
  if (embedded !== undefined) {
    if (at.step.continueOnError !== true) never(embedded);
    return { ok: f };
  }
  const { feasible, reason } = narrow(f.states, c);
  if (feasible.size === 0) {
    if (at.step.continueOnError !== true && reason) never(reason);
    return { ok: f };
  }
  // facts [progress 1.20]: INITIALIZING ends in IDLE, or after a restart in "the state it had before
  // the crash": where the fleet may be past IDLE, those states stay possible after it
  f.states = closure(feasible.has("INITIALIZING") ? new Set([...feasible, ...f.states]) : feasible);
  if (c.canCommit === true && body.on !== "any") f.canCommitSeen = true;
  if (c.embedded?.phase === "stream hashing" && body.on !== "any") f.streamHashingSeen = true;
  if (c.canCommit === true || c.info === CEA) f.ceaReached = true;
  if ([...feasible].every((s) => s === "COMMITTED")) f.pendingCommits = new Set();
  return { ok: f };
}

/**
 * Why a condition on the state can never hold at the declared version, if it cannot: every state
 * it accepts is newer than the version (INITIALIZING: "IDLE, INITIALIZING (1.20)").
 */
function stateNever(c: ConditionModel, at: SequenceStep): string | undefined {
  const version = at.runbook.serviceVersion;
  if (version === undefined || !c.states?.length) return undefined;
  const newer = STATES.filter((r) => c.states!.includes(r.state) && r.since !== undefined && !at.atLeast(r.since));
  if (newer.length < c.states.length) return undefined;
  return newer
    .map((r) => `state ${r.state} exists from service ${r.since} (the runbook declares ${version})`)
    .join("; ");
}

/** Why a condition on the embedded verifier can never hold here, if it cannot. */
function embeddedNever(c: ConditionModel, at: SequenceStep): string | undefined {
  const e = c.embedded;
  if (!e) return undefined;
  if (at.runbook.serviceVersion !== undefined && !at.atLeast(BEHAVIOUR.embeddedVerifier.since))
    return `progress has no \`verification\` before service ${BEHAVIOUR.embeddedVerifier.since} (the runbook declares ${at.runbook.serviceVersion})`;
  if (e.lagBelowSeconds !== undefined && e.lagBelowSeconds <= 0)
    return `verification lagBelow ${e.lagBelowSeconds} asks for a lag below 0, which it never is`;
  const starts = at.runbook.steps.flatMap((s) => ("start" in s && s.start ? [s.start] : []));
  if (e.phase !== "not started" && starts.length > 0 && starts.every((b) => b.verification?.enabled === false))
    return "the start turns the embedded verifier off (`verification: { enabled: false }`), so its phases stay `not started`";
  if (e.phase !== "not started" && starts.length > 0 && starts.every((b) => shardedWithoutEmbedded(b, at)))
    return `the embedded verifier does not support sharded clusters before service ${BEHAVIOUR.embeddedVerifier.shardedSince}: the migration includes one and mongosync disables it (the runbook declares ${at.runbook.serviceVersion}), so its phases stay \`not started\``;
  return undefined;
}

export const waitFor: StepKindDef<WaitForBody> = {
  body: keyed("waitFor"),
  title: (b) => `Wait for ${readCondition(b).text}`,
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [WAIT_NEVER_HOLDS, VERIFIER_WAIT_WITHOUT_WRITES_OFF, VERIFIER_CONDITION_NOT_EARNED],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: "service",
    afterWritesBack: "again",
    usesVerifier: false,
    callsPlugin: undefined,
    failureStopsRun: undefined,
  },
  hookCall: undefined,
  writesCheck: undefined,
  undoTimeoutMs: undefined,
  condition: (b) => b,
  startRequest: undefined,
  rehearsal: undefined,
  plan: (b, to) => {
    // what the condition reads where the version decides it (src/api/versions.ts)
    const reads: string[] = [];
    if (b.lagBelow !== undefined)
      reads.push(
        serviceAtLeast(to, BEHAVIOUR.lagObject.since)
          ? `lagBelow reads lag.overallLagSeconds (service ${BEHAVIOUR.lagObject.since}+)`
          : `lagBelow reads lag.overallLagSeconds when present, else lagTimeSeconds`,
      );
    if (readsCanWrite(b) && to.instances.length > 1)
      reads.push(
        to.canWriteFrom === undefined
          ? "canWrite refused: no instance is declared the first process (`startedFirst: true`), and the others' canWrite is not valid"
          : `canWrite read on ${to.instances[to.canWriteFrom]} only (the first process; the others' is not valid), the others read once when it holds (a process stopped during the commit)`,
      );
    return toEach(to, "GET", "/api/v1/progress", {
      note: `polled until the condition holds${reads.length ? `; ${reads.join("; ")}` : ""}`,
    });
  },
  timing: (b) => ({ timeout: b.timeout, pollInterval: b.pollInterval, slowAfter: b.slowAfter }),
  sequence: (b, at) =>
    conditionSequence(
      b,
      at,
      (reason) =>
        at.report(
          WAIT_NEVER_HOLDS,
          `This waitFor can never be satisfied here: ${reason}. It would wait until its timeout and fail.`,
        ),
      (reason) =>
        at.report(
          VERIFIER_WAIT_WITHOUT_WRITES_OFF,
          `This waitFor waits for the verifier's result, which never comes here: ${reason}. It would wait until its timeout and fail.`,
        ),
      (reason) =>
        at.report(
          VERIFIER_CONDITION_NOT_EARNED,
          `This waitFor's condition on the verifier can never count here: ${reason}. The run refuses it at once.`,
        ),
    ),
  async run(ctx, body) {
    const cond = readCondition(body, canWriteInstance(ctx.run.runbook));
    refuseUnreadableCanWrite(ctx, cond);
    refuseUnearnable(ctx, cond, "waitFor");
    const m = ctx.run.memory.verifier;
    const reads = conditionReads(cond, ctx.run.fleet.refs.length);
    await waitUntil(ctx, {
      pollMs: ctx.pollMs,
      slowAfterMs: ctx.slowAfterMs,
      verifier: cond.verifier.length > 0,
      describe: cond.text,
      evaluate: (snap, v) => evaluate(cond, snap, v, v && verifierEarned(m, v)),
      watch: (sample) => instanceSignature(cond, sample),
      reads,
    });
    if (ctx.run.memory.commitSent) await readTheOthers(ctx, reads);
  },
};

/**
 * The instances a wait after the commit did not read (the first process's canWrite alone), read
 * once as it ends, before any later step can turn the application's writes on. "If mongosync
 * stops during commit, before the /progress endpoint reports canWrite: true, you must restart the
 * entire migration" (mongodb/docs-cluster-to-cluster-sync source/includes/fact-verification.rst):
 * another process that restarted while the wait read the first alone shows it now (a refused read,
 * INITIALIZING, fewer events applied), and the writes-on hook's `stopped-in-commit` interlock
 * refuses (src/fleet/window.ts). One that answers is no longer in doubt: a later stop is after.
 * No retry: a failure is the answer, and is judged as one.
 */
async function readTheOthers(ctx: StepContext, read: readonly number[]): Promise<void> {
  const others = ctx.run.fleet.refs.map((r) => r.index).filter((i) => !read.includes(i));
  if (others.length > 0) await ctx.run.fleet.progress(ctx.signal, others);
}

/** The condition reads `canWrite` (the shorthand, or an `expect` path). */
export function readsCanWrite(body: ConditionBody): boolean {
  return body.canWrite !== undefined || (body.expect ?? []).some((e) => e.path === "canWrite");
}

/**
 * A `canWrite` condition on a fleet of several instances with no first process declared: no
 * value may be read (the others' "is not valid", the cutover page), so the step is refused at
 * once rather than left to wait, maybe after commit with application writes stopped, on a value
 * that may never turn true. Lint refuses the runbook first (`can-write-no-first-process`).
 */
export function refuseUnreadableCanWrite(ctx: StepContext, cond: Condition): void {
  if (cond.canWrite.length === 0 || cond.canWriteFrom !== undefined || ctx.run.fleet.refs.length < 2) return;
  throw new StepFailure(`this condition reads canWrite, but ${noCanWriteReason(ctx.run.runbook)}`, {
    hint: "Declare the first process (`startedFirst: true` on the instance the operator starts first, listed first), or wait for `state: COMMITTED` instead (the cutover page: you can write to the destination once the state is COMMITTED).",
  });
}
