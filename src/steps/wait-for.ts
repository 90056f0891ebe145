/** `waitFor`: poll until the condition holds on every instance (or `on: any | coordinator`). */
import { evaluate, readCondition, type ConditionBody } from "../fleet/index.js";
import type { WaitForBody } from "../runbook/types.js";
import { BEHAVIOUR, atLeast } from "../api/versions.js";
import { keyed, toEach, type StepKindDef } from "./kit/define.js";
import { CEA, closure, narrow, type SequenceOutcome, type SequenceStep } from "./kit/sequence.js";
import { waitUntil } from "./kit/wait.js";

/**
 * What a condition (waitFor, assert) does to lint's model: the states narrow to those where it
 * can hold. One that can hold nowhere is reported with `never` (unless the step may fail), and
 * what follows is judged from the states before it, so one mistake is one finding.
 */
export function conditionSequence(
  body: ConditionBody,
  at: SequenceStep,
  never: (reason: string) => void,
): SequenceOutcome {
  const f = at.flow;
  const c = readCondition(body).model;
  const { feasible, reason } = narrow(f.states, c);
  if (feasible.size === 0) {
    if (at.step.continueOnError !== true && reason) never(reason);
    return { ok: f };
  }
  f.states = closure(feasible);
  if (c.canCommit === true && body.on !== "any") f.canCommitSeen = true;
  if (c.canCommit === true || c.info === CEA) f.ceaReached = true;
  if ([...feasible].every((s) => s === "COMMITTED")) f.pendingCommits = new Set();
  return { ok: f };
}

export const waitFor: StepKindDef<WaitForBody> = {
  body: keyed("waitFor"),
  title: (b) => `Wait for ${readCondition(b).text}`,
  plan: (b, to) => {
    // what the condition reads where the version decides it (src/api/versions.ts)
    const reads: string[] = [];
    if (b.lagBelow !== undefined)
      reads.push(
        to.serviceVersion !== undefined && atLeast(to.serviceVersion, BEHAVIOUR.lagObject.since)
          ? `lagBelow reads lag.overallLagSeconds (service ${BEHAVIOUR.lagObject.since}+)`
          : `lagBelow reads lag.overallLagSeconds when present, else lagTimeSeconds`,
      );
    if (b.canWrite !== undefined && b.on === undefined && to.instances.length > 1)
      reads.push("canWrite read on the coordinator");
    return toEach(to, "GET", "/api/v1/progress", {
      note: `polled until the condition holds${reads.length ? `; ${reads.join("; ")}` : ""}`,
    });
  },
  timing: (b) => ({ timeout: b.timeout, pollInterval: b.pollInterval, slowAfter: b.slowAfter }),
  sequence: (b, at) =>
    conditionSequence(b, at, (reason) =>
      at.report(
        "wait-never-holds",
        `This waitFor can never be satisfied here: ${reason}. It would wait until its timeout and fail.`,
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
    });
  },
};
