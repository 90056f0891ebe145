/** A step kind added by a plugin: runs its implementation; its `undo`, if it returns one, is registered like a hook's. */
import { runPluginStep, stepInfo, undoFor } from "../plugin/index.js";
import { pluginStepKind } from "../runbook/types.js";
import { StepFailure, type StepContext } from "../run/context.js";

const UNDO_TIMEOUT_MS = 120_000;

export async function run(ctx: StepContext): Promise<void> {
  const kind = pluginStepKind(ctx.step);
  if (!kind) throw new StepFailure("not a plugin step");
  const { registry, ctx: pctx, undo } = ctx.run.plugins;
  const options = (ctx.step as Record<string, unknown>)[kind];
  const info = stepInfo(ctx.index, ctx.id, kind, ctx.title, ctx.step, pctx.redact);
  ctx.run.emit("hook.started", { index: ctx.index, id: ctx.id, use: kind, undo: false });
  const outcome = await runPluginStep(registry, kind, options, info, pctx, {
    timeoutMs: ctx.timeoutMs,
    signal: ctx.signal,
  });
  ctx.run.emit("hook.finished", {
    index: ctx.index,
    id: ctx.id,
    use: kind,
    undo: false,
    ok: outcome.ok,
    durationMs: outcome.durationMs,
    ...(outcome.ok ? {} : { error: outcome.error }),
  });
  undo.push(undoFor(registry, { use: kind }, outcome, info, pctx, UNDO_TIMEOUT_MS));
  if (!outcome.ok) {
    if (outcome.interrupted && ctx.signal.aborted)
      throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error("interrupted");
    throw new StepFailure(outcome.error, {
      reason: outcome.timedOut ? "timeout" : "failed",
      hint: "See the plugin's log lines above.",
    });
  }
}
