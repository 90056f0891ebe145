/** `pause`, `resume`, `reverse`: a state precondition on every instance, then the identical command. */
import { COMMAND_EFFECT, commandTookEffect } from "../api/index.js";
import { checkIdentity, checkInterlock, instanceName, readFleet, sendCommand } from "../run/fleet-ops.js";
import type { StepContext } from "../run/context.js";

export function lifecycle(op: "pause" | "resume" | "reverse") {
  return async (ctx: StepContext): Promise<void> => {
    const from = COMMAND_EFFECT[op].before;
    const snap = await readFleet(ctx);
    checkIdentity(ctx, snap);
    const wrong = snap.instances.filter((i) => !from.includes(i.progress?.state ?? ""));
    checkInterlock(
      ctx,
      "fleet-state",
      wrong.length === 0,
      wrong.length === 0
        ? `every instance is ${from.join(" or ")}`
        : `${op} is allowed only in ${from.join(" or ")}; ${wrong.map((i) => `${instanceName(i.ref)} is ${i.progress?.state ?? "unreachable"}`).join(", ")}`,
    );
    await sendCommand(ctx, { op, body: {}, tookEffect: (p) => commandTookEffect(op, p.state) });
    if (op === "reverse") {
      // the sync runs the other way now: its commit needs its own write stop
      ctx.run.memory.writesStopped = false;
      ctx.run.memory.commitSent = false;
      ctx.run.memory.commitAccepted = false;
      ctx.run.plugins.undo.rearm();
    }
  };
}
