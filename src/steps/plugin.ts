/**
 * A step kind added by a plugin (a kebab-case key with a hyphen): runs its implementation; its
 * `undo`, if it returns one, is registered like a hook's. Lint judges it like a hook.
 */
import { runPluginStep, stepInfo, undoFor } from "../plugin/index.js";
import { pluginStepKind } from "../runbook/types.js";
import { StepFailure } from "./kit/context.js";
import { UNDO_TIMEOUT_MS, notifyStandIn, type StepKindDef } from "./kit/define.js";
import { HOOK_SEQUENCE_RULES, hookSequence } from "./hook.js";
import { redactLeaves } from "../redact.js";

export interface PluginStepBody {
  /** The plugin's step kind (`drain-traffic`). */
  kind: string;
  options: unknown;
}

export const plugin: StepKindDef<PluginStepBody> = {
  body: (step) => {
    const kind = pluginStepKind(step);
    return kind === undefined ? undefined : { kind, options: (step as Record<string, unknown>)[kind] };
  },
  // the plan replaces it with the plugin's own title when the plugin is loaded
  title: (b) => b.kind,
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: HOOK_SEQUENCE_RULES,
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: undefined,
    failureStopsRun: undefined,
  },
  hookCall: undefined,
  writesCheck: undefined,
  condition: undefined,
  startRequest: undefined,
  plan: (b, to) => [
    {
      method: "POST",
      target: `plugin step ${b.kind}`,
      path: "",
      body: redactLeaves(b.options ?? {}, (s) => to.redact(s)),
      note: "runs the plugin's step",
    },
  ],
  sequence: (_b, at) => hookSequence(at),
  async run(ctx, { kind, options }) {
    const { registry, ctx: pctx, undo } = ctx.run.plugins;
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
  },
  undoTimeoutMs: () => UNDO_TIMEOUT_MS,
  rehearsal: (step, b, to) =>
    to.keepHooks ? step : notifyStandIn(step, `plugin step ${b.kind} not run (--keep-hooks runs it)`),
};
