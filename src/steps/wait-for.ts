/** `waitFor`: poll until the condition holds on every instance (or `on: any | coordinator`). */
import type { RuleInfo } from "../diagnostics.js";
import { evaluate, instanceSignature, readCondition, type ConditionBody, type ConditionModel } from "../fleet/index.js";
import type { WaitForBody } from "../runbook/types.js";
import { BEHAVIOUR, STATES, serviceAtLeast } from "../api/versions.js";
import { keyed, toEach, type StepKindDef } from "./kit/define.js";
import { CEA, closure, narrow, type SequenceOutcome, type SequenceStep } from "./kit/sequence.js";
import { waitUntil } from "./kit/wait.js";

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
 * What a condition (waitFor, assert) does to lint's model: the states narrow to those where it
 * can hold. One that can hold nowhere is reported with `never` (unless the step may fail), and
 * what follows is judged from the states before it, so one mistake is one finding.
 */
export function conditionSequence(
  body: ConditionBody,
  at: SequenceStep,
  never: (reason: string) => void,
  verifierNeverIdle: (reason: string) => void = never,
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
  return undefined;
}

export const waitFor: StepKindDef<WaitForBody> = {
  body: keyed("waitFor"),
  title: (b) => `Wait for ${readCondition(b).text}`,
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [WAIT_NEVER_HOLDS, VERIFIER_WAIT_WITHOUT_WRITES_OFF],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: "service",
    afterWritesBack: "again",
    usesVerifier: false,
    callsPlugin: undefined,
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
    if (b.canWrite !== undefined && b.on === undefined && to.instances.length > 1)
      reads.push("canWrite read on every instance");
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
    ),
  async run(ctx, body) {
    const cond = readCondition(body);
    await waitUntil(ctx, {
      pollMs: ctx.pollMs,
      slowAfterMs: ctx.slowAfterMs,
      verifier: cond.verifier.length > 0,
      describe: cond.text,
      evaluate: (snap, v) => evaluate(cond, snap, v),
      watch: (sample) => instanceSignature(cond, sample),
    });
  },
};
