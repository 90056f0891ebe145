/** `waitFor`: poll until the condition holds on every instance (or `on: any | coordinator`). */
import { evaluate } from "../fleet/index.js";
import { durationOr } from "../runbook/index.js";
import type { StepContext } from "../run/context.js";
import { waitUntil } from "../run/wait.js";
import { describeCondition, needsVerifier } from "./conditions.js";

export async function run(ctx: StepContext): Promise<void> {
  const cond = ctx.step.waitFor;
  if (!cond) return;
  const d = ctx.run.defaults;
  await waitUntil(ctx, {
    pollMs: cond.pollInterval === undefined ? d.pollMs : d.scale(durationOr(cond.pollInterval, d.pollMs)),
    slowAfterMs: cond.slowAfter === undefined ? d.slowAfterMs : d.scale(durationOr(cond.slowAfter, d.slowAfterMs)),
    verifier: needsVerifier(cond),
    describe: describeCondition(cond),
    evaluate: (snap, v) => evaluate(cond, snap, v),
  });
}
