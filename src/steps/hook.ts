/**
 * `hook` and `stopWrites`: run a hook plugin, register its undo (run if the cutover fails or is
 * interrupted before commit), and fail the step when the hook fails.
 */
import { runHook, stepInfo, undoFor, type HookCallSpec } from "../plugin/index.js";
import { durationOr } from "../runbook/index.js";
import { StepFailure, type StepContext } from "../run/context.js";

const UNDO_TIMEOUT_MS = 120_000;

export async function runHookStep(ctx: StepContext, call: HookCallSpec): Promise<void> {
  const { registry, ctx: pctx, undo } = ctx.run.plugins;
  const info = stepInfo(ctx.index, ctx.id, ctx.kind, ctx.title, ctx.step, pctx.redact);
  const timeoutMs = durationOr(call.timeout, ctx.timeoutMs);
  ctx.run.emit("hook.started", { index: ctx.index, id: ctx.id, use: call.use, undo: false });
  const outcome = await runHook(
    registry,
    call.with ? { use: call.use, with: call.with } : { use: call.use },
    info,
    pctx,
    { timeoutMs, signal: ctx.signal },
  );
  ctx.run.emit("hook.finished", {
    index: ctx.index,
    id: ctx.id,
    use: call.use,
    undo: false,
    ok: outcome.ok,
    durationMs: outcome.durationMs,
    ...(outcome.ok ? {} : { error: outcome.error }),
  });
  // registered whatever the outcome: a hook that failed half-way may have done part of its work
  undo.push(undoFor(registry, call, outcome, info, pctx, durationOr(call.undo?.timeout, UNDO_TIMEOUT_MS)));
  if (!outcome.ok) {
    if (outcome.interrupted && ctx.signal.aborted)
      throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error("interrupted");
    throw new StepFailure(outcome.error, {
      reason: outcome.timedOut ? "timeout" : "failed",
      hint: outcome.timedOut ? "The hook was stopped at its `timeout`." : "See the hook's log lines above.",
    });
  }
}

export async function run(ctx: StepContext): Promise<void> {
  const call = ctx.step.hook;
  if (call) await runHookStep(ctx, call);
}
