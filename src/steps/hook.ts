/**
 * `hook`: run a hook plugin, register its undo (run if the cutover fails or is interrupted
 * before commit), and fail the step when the hook fails. `stopWrites` runs its hook the same way.
 */
import { runHook, stepInfo, undoFor, type HookCallSpec } from "../plugin/index.js";
import { durationOr } from "../runbook/index.js";
import type { HookCall, Step } from "../runbook/types.js";
import { pluginStepKind } from "../runbook/types.js";
import { q } from "../text.js";
import { StepFailure, type StepContext } from "./kit/context.js";
import { keyed, type StepKindDef } from "./kit/define.js";
import type { SequenceOutcome, SequenceStep } from "./kit/sequence.js";

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
    {
      timeoutMs,
      signal: ctx.signal,
    },
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

const DDL_WORDS = [
  "createindex",
  "dropindex",
  "createcollection",
  "dropcollection",
  "dropdatabase",
  "renamecollection",
  "collmod",
  "shardcollection",
  "reshardcollection",
  "refinecollectionshardkey",
  "converttocapped",
  "createview",
  "ddl",
];

function looksLikeDdl(step: Step): string | undefined {
  const plugin = pluginStepKind(step);
  const text = JSON.stringify([
    step.id,
    step.name,
    "hook" in step ? step.hook : undefined,
    plugin,
    plugin ? (step as Record<string, unknown>)[plugin] : undefined,
  ])
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
  return DDL_WORDS.find((w) => text.includes(w));
}

/**
 * What a hook (or a plugin's step kind, which does what its plugin does) means to lint: no sync
 * command, but while verification may be in progress it must run no DDL.
 */
export function hookSequence(at: SequenceStep): SequenceOutcome {
  const f = at.flow;
  if (f.verifying) {
    const why = f.verifying.embedded
      ? f.verifying.at >= 0
        ? `the embedded verifier (on by default since service 1.9) checks from ${at.line(f.verifying.at)} until commit`
        : "the embedded verifier (on by default since service 1.9) may be checking until commit"
      : "startVerification" in (at.runbook.steps[f.verifying.at] ?? {})
        ? `the verifier's check started by ${at.line(f.verifying.at)} runs until a verify step finishes it`
        : `${at.line(f.verifying.at)} may still be verifying (it continues on error)`;
    const ddl = looksLikeDdl(at.step);
    if (ddl) {
      at.report(
        "ddl-during-verify",
        `This hook looks like DDL (${q(ddl)}) and ${why}; the verifier does not support DDL.`,
      );
    } else {
      at.report(
        "hook-during-verify",
        `This hook runs while ${why}; the verifier does not support DDL, so the hook must run none.`,
      );
    }
  }
  return { ok: f };
}

export const hook: StepKindDef<HookCall> = {
  body: keyed("hook"),
  title: (b) => `Hook ${b.use}`,
  plan: () => [],
  sequence: (_b, at) => hookSequence(at),
  run: (ctx, body) => runHookStep(ctx, body),
};
