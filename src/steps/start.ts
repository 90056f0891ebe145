/** `start`: every instance must be IDLE; the identical body goes to every instance once. */
import { commandTookEffect } from "../api/index.js";
import { checkIdentity, checkInterlock, instanceName, readFleet, sendCommand } from "../run/fleet-ops.js";
import type { StepContext } from "../run/context.js";

export async function run(ctx: StepContext): Promise<void> {
  const body = ctx.step.start;
  const snap = await readFleet(ctx);
  checkIdentity(ctx, snap);
  const notIdle = snap.instances.filter((i) => i.progress?.state !== "IDLE");
  checkInterlock(
    ctx,
    "fleet-idle",
    notIdle.length === 0,
    notIdle.length === 0
      ? "every instance is IDLE"
      : `start is allowed only in IDLE; ${notIdle.map((i) => `${instanceName(i.ref)} is ${i.progress?.state ?? `unreachable (${i.error?.message ?? "?"})`}`).join(", ")}`,
    "A sync already runs (use --resume to adopt a run this tool started), or an instance is down.",
  );
  await sendCommand(ctx, { op: "start", body, tookEffect: (p) => commandTookEffect("start", p.state) });
}
