/** `pause`, `resume`, `reverse`: a state precondition on every instance, then the identical command. */
import type { Progress } from "../api/index.js";
import { checkIdentity, checkInterlock, instanceName, readFleet, sendCommand, type CommandOp } from "../run/fleet-ops.js";
import type { StepContext } from "../run/context.js";

const RULES: Record<"pause" | "resume" | "reverse", { from: string; to: string }> = {
  pause: { from: "RUNNING", to: "PAUSED" },
  resume: { from: "PAUSED", to: "RUNNING" },
  reverse: { from: "COMMITTED", to: "RUNNING" },
};

export function lifecycle(op: "pause" | "resume" | "reverse") {
  return async (ctx: StepContext): Promise<void> => {
    const rule = RULES[op];
    const snap = await readFleet(ctx);
    checkIdentity(ctx, snap);
    const wrong = snap.instances.filter((i) => i.progress?.state !== rule.from);
    checkInterlock(
      ctx,
      "fleet-state",
      wrong.length === 0,
      wrong.length === 0 ? `every instance is ${rule.from}` : `${op} is allowed only in ${rule.from}; ${wrong.map((i) => `${instanceName(i.ref)} is ${i.progress?.state ?? "unreachable"}`).join(", ")}`,
    );
    const tookEffect = (p: Progress): boolean | undefined => (p.state === rule.to ? true : p.state === rule.from ? false : undefined);
    await sendCommand(ctx, { op: op as CommandOp, body: {}, tookEffect });
    if (op === "reverse") {
      // the sync runs the other way now: its commit needs its own write stop
      ctx.run.memory.writesStopped = false;
      ctx.run.memory.commitSent = false;
      ctx.run.memory.commitAccepted = false;
      ctx.run.plugins.undo.rearm();
    }
  };
}
