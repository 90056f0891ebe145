/** `stopWrites`: the hook that stops application writes; commit's interlock needs it to succeed. */
import type { StepContext } from "../run/context.js";
import { runHookStep } from "./hook.js";

export async function run(ctx: StepContext): Promise<void> {
  const call = ctx.step.stopWrites;
  if (!call) return;
  await runHookStep(ctx, call);
  ctx.run.memory.writesStopped = true;
  ctx.run.emit("decision", {
    index: ctx.index,
    id: ctx.id,
    kind: "interlock",
    ok: true,
    check: "writes-stopped",
    reason: `application writes stopped by ${call.use}`,
  });
}
