/**
 * `commit`: refused, with the reason, unless every instance is RUNNING with canCommit true, a
 * stopWrites succeeded in this run (or the runbook says writes are stopped outside it) and no
 * instance answered with an error; `--force=<check>` names a check to skip. Once sent, nothing
 * is undone.
 */
import { commandTookEffect } from "../api/index.js";
import { checkIdentity, checkInterlock, instanceName, readFleet, sendCommand } from "../run/fleet-ops.js";
import type { StepContext } from "../run/context.js";

export async function run(ctx: StepContext): Promise<void> {
  const { memory, runbook } = ctx.run;
  checkInterlock(
    ctx,
    "writes-stopped",
    memory.writesStopped || runbook.writesStoppedExternally === true,
    memory.writesStopped
      ? "a stopWrites step succeeded in this run"
      : runbook.writesStoppedExternally
        ? "the runbook declares writes stopped outside it"
        : "no stopWrites step has succeeded in this run: writes during commit may lose data",
    ctx.run.mode === "resume"
      ? "The journal shows no stopWrites that held (a failed one, or one whose undo ran): check the writers, then run the stopWrites step again, or set `writesStoppedExternally: true` if writes are stopped another way."
      : "Run the stopWrites step first (a --from past it skips it), or set `writesStoppedExternally: true` if writes are stopped another way.",
  );
  checkInterlock(
    ctx,
    "no-errors",
    memory.serviceErrors.length === 0,
    memory.serviceErrors.length === 0
      ? "no instance answered with an error in this run"
      : `instances answered with errors earlier: ${memory.serviceErrors.map((e) => `${e.op}: ${e.error}`).join("; ")}`,
  );
  const snap = await readFleet(ctx);
  checkIdentity(ctx, snap);
  const notReady = snap.instances.filter((i) => !(i.progress?.state === "RUNNING" && i.progress.canCommit === true));
  checkInterlock(
    ctx,
    "can-commit",
    notReady.length === 0,
    notReady.length === 0
      ? "every instance is RUNNING with canCommit true"
      : `commit needs every instance RUNNING with canCommit true; ${notReady.map((i) => (i.progress ? `${instanceName(i.ref)} is ${i.progress.state} with canCommit ${String(i.progress.canCommit)}` : `${instanceName(i.ref)} is unreachable (${i.error?.message ?? "?"})`)).join(", ")}`,
    "Wait for canCommit (a waitFor step) before commit.",
  );
  const r = await sendCommand(ctx, {
    op: "commit",
    body: {},
    tookEffect: (p) => commandTookEffect("commit", p.state),
    onAccepted: (n) => {
      if (n > 0) memory.commitAccepted = true;
    },
    beforeSend: () => {
      // from here on nothing is undone: writes may already be going to the destination
      memory.commitSent = true;
      ctx.run.plugins.undo.disarm();
    },
  });
  ctx.run.emit("commit.sent", {
    index: ctx.index,
    id: ctx.id,
    instances: ctx.run.fleet.refs.map(instanceName),
    skewMs: r.skewMs,
  });
}
