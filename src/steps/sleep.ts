/** `sleep`: wait a fixed time (interruptible). */
import { setTimeout as sleep } from "node:timers/promises";
import { durationOr } from "../runbook/index.js";
import type { StepContext } from "../run/context.js";
import { abortReason } from "../run/wait.js";

export async function run(ctx: StepContext): Promise<void> {
  const ms = ctx.run.defaults.scale(durationOr(ctx.step.sleep, 0));
  try {
    await sleep(ms, undefined, { signal: ctx.signal });
  } catch {
    throw abortReason(ctx, [], { describe: `a ${ms} ms sleep` });
  }
}
