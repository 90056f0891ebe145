/**
 * `hook`: run a hook plugin, register its undo (run if the cutover fails or is interrupted
 * before commit), and fail the step when the hook fails. `stopWrites` runs its hook the same way.
 */
import type { RuleInfo } from "../diagnostics.js";
import { runHook, stepInfo, undoFor, type HookCallSpec } from "../plugin/index.js";
import { withProcessWatch, type ProcessWatch } from "../plugin/process.js";
import { committedBeforeWrites, durationOr } from "../runbook/index.js";
import type { HookCall, Step } from "../runbook/types.js";
import { pluginStepKind } from "../runbook/types.js";
import { q } from "../text.js";
import { StepFailure, type RunContext, type StepContext } from "./kit/context.js";
import { stoppedInCommitInterlock } from "./kit/stopped-in-commit.js";
import { UNDO_TIMEOUT_MS, keyed, notifyStandIn, type StepKindDef } from "./kit/define.js";
import type { SequenceOutcome, SequenceStep } from "./kit/sequence.js";

/** Lint's `hook-during-verify` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const HOOK_DURING_VERIFY: RuleInfo = {
  id: "hook-during-verify",
  severity: "warning",
  description: "A `hook` step runs while verification may be in progress (the verifier does not support DDL).",
  spec: "The verifier does not support DDL operations, so no DDL may run on the source while verification is in progress.",
  source: "sync-service-api.md",
  hint: "Make sure the hook runs no DDL (create/drop/rename collections or indexes, collMod), or move it before verification starts or after it completes.",
};

/** Lint's `ddl-during-verify` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const DDL_DURING_VERIFY: RuleInfo = {
  id: "ddl-during-verify",
  severity: "error",
  description:
    "A hook that looks like DDL (createIndex, drop, renameCollection, collMod, ...) while verification may be in progress.",
  spec: "The verifier does not support DDL operations, so no DDL may run on the source while verification is in progress.",
  source: "sync-service-api.md",
  hint: "Run DDL before the sync starts or after verification completes (and the sync is committed).",
};

/** Lint's `writes-on-before-can-write` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const WRITES_ON_BEFORE_CAN_WRITE: RuleInfo = {
  id: "writes-on-before-can-write",
  severity: "error",
  description:
    "A `hook` with `writesOn: true` (the application writes again) that can run before the destination takes writes: no commit before it, or no wait for `canWrite: true` (or state COMMITTED) between the commit and it.",
  spec: "`canWrite` becomes true during commit; COMMITTED comes later. Do not write to the destination while `canWrite` is false.",
  source: "service-facts.md",
  hint: "Put the hook after the commit and a `waitFor: { canWrite: true }` (read on the first process) or `state: COMMITTED`; to switch writes back on the source before commit, use the stopWrites step's `undo`.",
};

/** Lint's `writes-on-before-committed` (the state model), reported by this kind's `sequence`. */
export const WRITES_ON_BEFORE_COMMITTED: RuleInfo = {
  id: "writes-on-before-committed",
  severity: "warning",
  description:
    "On service 1.11–1.19 (or with no `serviceVersion` declared), a start without write blocking (`enableUserWriteBlocking: false` or `none`, or `preExistingDestinationData: true`, with which the service enables none), and a `hook` with `writesOn: true` after a wait for canWrite but not for COMMITTED: the cutover page of those versions says to wait until COMMITTED unless the embedded verifier is on, and a process option or a live upgrade can turn it off whatever the start request says.",
  spec: 'If you set enableUserWriteBlocking to either "sourceAndDestination" or "destinationOnly", or the verifier is turned on, you can write to the destination after /progress reports canWrite: true. Otherwise, wait until the state is COMMITTED. (cutover process, 1.11–1.19; the facts: "On 1.14–1.19, without write blocking and without the verifier, the page says to wait for COMMITTED instead before writing to the destination")',
  source: "service-facts.md",
  docs: "https://www.mongodb.com/docs/cluster-to-cluster-sync/current/reference/cutover-process/",
  hint: "Put a `waitFor: { state: COMMITTED }` before the hook that lets the application write, or start with write blocking (`enableUserWriteBlocking: destinationOnly`, the 1.11+ default).",
};

/** The rules `hookSequence` reports (a hook, a plugin step). */
export const HOOK_SEQUENCE_RULES: readonly RuleInfo[] = [
  HOOK_DURING_VERIFY,
  DDL_DURING_VERIFY,
  WRITES_ON_BEFORE_CAN_WRITE,
  WRITES_ON_BEFORE_COMMITTED,
];

/** The time limit of a hook call's `undo:` (its own `timeout`, else the default). */
export const hookUndoTimeoutMs = (call: HookCall): number => durationOr(call.undo?.timeout, UNDO_TIMEOUT_MS);

/** A hook call as the journal names it. */
export interface HookCallRef {
  index: number;
  id: string;
  use: string;
  undo: boolean;
  /** An undo's call as a command an operator can run by hand (redacted). */
  command?: string;
}

/**
 * The process watch of a run's hook calls: `begin` journals `hook.started` with a new token
 * (fsynced before the call starts anything, by `emit` for a hook, which stops the run if the
 * journal cannot record it); every process the call then starts carries the token and is
 * journaled (`hook.process`) right after its spawn. One call at a time: hooks and undos run in turn.
 */
export function hookWatch(run: Pick<RunContext, "say">): ProcessWatch & {
  begin(call: HookCallRef, emit: RunContext["emit"]): void;
} {
  let current: HookCallRef | undefined;
  const watch = {
    token: "",
    begin(call: HookCallRef, emit: RunContext["emit"]) {
      current = call;
      // node:crypto loaded here, not at the top: `syncbook lint` loads this module and never calls it (issue 41)
      watch.token = process.getBuiltinModule("node:crypto").randomUUID();
      emit("hook.started", { ...call, token: watch.token });
    },
    spawned(p: { pid: number; pgid?: number; start?: number }) {
      if (!current) return;
      run.say("hook.process", { index: current.index, id: current.id, undo: current.undo, token: watch.token, ...p });
    },
  };
  return watch;
}

export async function runHookStep(ctx: StepContext, call: HookCallSpec): Promise<void> {
  const { registry, ctx: pctx, undo } = ctx.run.plugins;
  const info = stepInfo(ctx.index, ctx.id, ctx.kind, ctx.title, ctx.step, pctx.redact);
  const timeoutMs = durationOr(call.timeout, ctx.timeoutMs);
  const watch = hookWatch(ctx.run);
  watch.begin({ index: ctx.index, id: ctx.id, use: call.use, undo: false }, ctx.run.emit);
  const outcome = await withProcessWatch(watch, () =>
    runHook(registry, call.with ? { use: call.use, with: call.with } : { use: call.use }, info, pctx, {
      timeoutMs,
      signal: ctx.signal,
    }),
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
  undo.push(undoFor(registry, call, outcome, info, pctx, hookUndoTimeoutMs(call)));
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
  const raw = JSON.stringify([
    step.id,
    step.name,
    "hook" in step ? step.hook : undefined,
    plugin,
    plugin ? (step as Record<string, unknown>)[plugin] : undefined,
  ]);
  // its words as written: split at anything but a letter or digit, and at camelCase humps
  const words = (raw.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g) ?? []).map((w) => w.toLowerCase());
  const text = words.join("");
  // a command's name whole (`createIndex`) or split (`create_index`), read across the words; `ddl`
  // only as a word of its own: inside another (`middleware`, a temp folder's `ddLNqZ`) it made
  // an error of a hook that runs no DDL
  return DDL_WORDS.find((w) => (w === "ddl" ? words.includes(w) : text.includes(w)));
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
        DDL_DURING_VERIFY,
        `This hook looks like DDL (${q(ddl)}) and ${why}; the verifier does not support DDL.`,
      );
    } else {
      at.report(
        HOOK_DURING_VERIFY,
        `This hook runs while ${why}; the verifier does not support DDL, so the hook must run none.`,
      );
    }
  }
  return { ok: f };
}

/**
 * A `writesOn` hook (the application writes again, on the destination) is safe only once the
 * destination takes writes: after the commit and a wait that proves canWrite (or COMMITTED).
 */
function writesOnSequence(at: SequenceStep): void {
  const f = at.flow;
  const committedOnly = f.states.size > 0 && [...f.states].every((st) => st === "COMMITTED");
  const commitAt = f.committed;
  const canWriteSeen =
    commitAt !== undefined &&
    at.runbook.steps.some((st, j) => {
      if (j <= commitAt || j >= at.index) return false;
      const c = st.waitFor ?? st.assert;
      // the shorthand, or an `expect` on canWrite equal to true: the same proof, from a step that surely runs
      const proves = c?.canWrite === true || (c?.expect ?? []).some((e) => e.path === "canWrite" && e.equals === true);
      return proves && st.continueOnError !== true && at.runsWhenever(j);
    });
  if (commitAt === undefined || !(committedOnly || canWriteSeen))
    at.report(
      WRITES_ON_BEFORE_CAN_WRITE,
      commitAt === undefined
        ? "This hook says the application writes again, but no commit runs before it: the window would end without a cutover, and the destination does not take writes."
        : `This hook says the application writes again, but nothing between ${at.line(commitAt)} and it waits for canWrite true (or state COMMITTED): the destination may not take writes yet.`,
      ["writesOn"],
    );
  else if (!committedOnly) {
    // canWrite was waited for, COMMITTED was not: on 1.11–1.19 without write blocking the page says
    // COMMITTED unless the verifier is on, which the runbook cannot tell (src/runbook/can-write.ts)
    const late = committedBeforeWrites(at.runbook, at.runbook.steps.find((st) => st.start !== undefined)?.start);
    if (late)
      at.report(
        WRITES_ON_BEFORE_COMMITTED,
        `This hook says the application writes again after a wait for canWrite, but ${late}: nothing between ${at.line(commitAt)} and it waits for state COMMITTED.`,
        ["writesOn"],
      );
  }
}

export const hook: StepKindDef<HookCall> = {
  body: keyed("hook"),
  title: (b) => `Hook ${b.use}`,
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: HOOK_SEQUENCE_RULES,
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: "hook",
    failureStopsRun: undefined,
  },
  writesCheck: undefined,
  condition: undefined,
  startRequest: undefined,
  plan: () => [],
  sequence(b, at) {
    if (b.writesOn === true) writesOnSequence(at);
    return hookSequence(at);
  },
  async run(ctx, body) {
    // writes coming back on before commit: commit's writes-stopped interlock must not trust the
    // earlier stop any more (lint refuses such a runbook; a library caller gets the interlock)
    if (body.writesOn === true && !ctx.run.memory.commitSent) ctx.run.memory.writesStopped = false;
    // an adversarial run restarted an instance while COMMITTING: the run read canWrite, turned the
    // application's writes on and ended "ok"
    if (body.writesOn === true) stoppedInCommitInterlock(ctx, "This run did not tell the application to write");
    await runHookStep(ctx, body);
    // the runbook says this hook lets the application write again: the write-stop window's end
    if (body.writesOn === true) ctx.run.emit("window.writes-on", { index: ctx.index, id: ctx.id });
  },
  hookCall: (b) => b,
  undoTimeoutMs: hookUndoTimeoutMs,
  rehearsal: (step, b, to) =>
    to.keepHooks ? step : notifyStandIn(step, `hook ${b.use} not run (--keep-hooks runs it)`),
};
