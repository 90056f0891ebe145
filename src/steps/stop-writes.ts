/** `stopWrites`: the hook that stops application writes; commit's interlock needs it to succeed. */
import type { HookCall } from "../runbook/types.js";
import { keyed, type StepKindDef } from "./kit/define.js";
import { cloneFlow } from "./kit/sequence.js";
import { runHookStep } from "./hook.js";

export const stopWrites: StepKindDef<HookCall> = {
  body: keyed("stopWrites"),
  title: (b) => `Stop application writes (${b.use})`,
  plan: () => [],
  sequence(_b, at) {
    const failed = cloneFlow(at.flow);
    at.flow.writesStopped = true;
    return { ok: at.flow, failed };
  },
  async run(ctx, call) {
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
  },
};
