/** `assert`: one reading of the fleet must meet the condition now. */
import { evaluate } from "../fleet/index.js";
import { StepFailure, type StepContext } from "../run/context.js";
import { readFleet } from "../run/fleet-ops.js";
import { describeFailing } from "../run/wait.js";
import { describeCondition, needsVerifier } from "./conditions.js";

export async function run(ctx: StepContext): Promise<void> {
  const cond = ctx.step.assert;
  if (!cond) return;
  const snap = await readFleet(ctx);
  let verifier;
  if (needsVerifier(cond) && ctx.run.verifier) {
    verifier = await ctx.run.verifier.progress({ signal: ctx.signal });
    ctx.run.emit("verifier.sampled", { progress: verifier });
  }
  const ev = evaluate(cond, snap, verifier);
  ctx.run.emit("wait.status", {
    index: ctx.index,
    id: ctx.id,
    met: ev.met,
    failing: ev.failing.map((f) => ({ ...f, sinceMs: 0 })),
  });
  if (!ev.met)
    throw new StepFailure(`assertion failed: ${describeCondition(cond)}: ${describeFailing(ev.failing)}`, {
      reason: "assert",
      hint: "The fleet is not where the runbook expects it to be here.",
    });
}
