/**
 * `stopWrites`: the hook that stops application writes; commit's interlock needs it to succeed.
 * A hook that says what it does to writes (`writes` in its definition) must stop them here, and
 * where the writes can be seen (a rehearsal's simulator) they must have stopped before the
 * interlock passes: a hook that ran is not proof that writes stopped.
 */
import type { HookCall, Step } from "../runbook/types.js";
import { StepFailure } from "./kit/context.js";
import { keyed, type StepKindDef } from "./kit/define.js";
import { cloneFlow } from "./kit/sequence.js";
import { readWrites } from "./kit/writes-check.js";
import { hookUndoTimeoutMs, runHookStep } from "./hook.js";

type StopWritesCall = NonNullable<Step["stopWrites"]>;

export const stopWrites: StepKindDef<StopWritesCall> = {
  body: keyed("stopWrites"),
  title: (b) => `Stop application writes (${b.use})`,
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [],
  traits: {
    opensWriteStop: true,
    command: undefined,
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: "hook",
    failureStopsRun:
      "a write stop that failed leaves writes in an unknown state (one switch off, another still on): the run must stop, and its undo turn writes back on",
  },
  writesCheck: (b) => b.check,
  condition: undefined,
  startRequest: undefined,
  plan: () => [],
  sequence(_b, at) {
    const failed = cloneFlow(at.flow);
    at.flow.writesStopped = true;
    return { ok: at.flow, failed };
  },
  async run(ctx, call) {
    const { emit } = ctx.run;
    const decide = (ok: boolean, reason: string): void =>
      void emit("decision", { index: ctx.index, id: ctx.id, kind: "interlock", ok, check: "writes-stopped", reason });
    // lint refuses this too; the runner holds it for what lint did not see (values from ${…}, a library caller)
    if (ctx.run.plugins.registry.hook(call.use)?.writes?.(call.with ?? {}) === "on") {
      const reason = `hook ${call.use} with these options turns application writes on: it cannot be the step that stops them`;
      decide(false, reason);
      throw new StepFailure(`refused (writes-stopped): ${reason}; the hook was not run`, {
        reason: "interlock",
        hint: "Give the options that stop writes; put the call that turns them on under `undo:`.",
      });
    }
    await runHookStep(ctx, call);
    // writes stop with the hook's success: the window opens then, though it is said only once the
    // check below has seen them stopped (the check's read is downtime as well)
    const openedAt = Date.now();
    // read, not assumed: the rehearsal's simulator and the step's own `check:`
    const seen = await readWrites(ctx, call.check ? [{ index: ctx.index, step: ctx.step, call: call.check }] : []);
    if (seen) {
      if (!seen.stopped) {
        const reason = `hook ${call.use} succeeded, but ${seen.by === "probe" ? "the application still writes" : "writes are not seen stopped"} (${seen.detail})`;
        decide(false, reason);
        throw new StepFailure(`${reason}: writes during commit would be lost`, {
          hint: "Check what the hook really does (a rehearsal with --keep-hooks runs your own): it must stop the application's writes to the source, and a `check:` must pass only while they are stopped.",
        });
      }
    }
    ctx.run.memory.writesStopped = true;
    // the application's downtime starts here: waits poll fast until the destination takes writes (src/fleet/window.ts)
    ctx.run.emit("window.opened", { index: ctx.index, id: ctx.id, openedAt });
    decide(true, `application writes stopped by ${call.use}${seen ? ` (and seen stopped: ${seen.detail})` : ""}`);
  },
  hookCall: (b) => b,
  undoTimeoutMs: hookUndoTimeoutMs,
  // the simulator's writes switch (its undo turns writes back on)
  rehearsal: (step, b, to) => {
    if (to.keepHooks || !step.stopWrites) return step;
    // the runbook's own check reads the real switch: the rehearsal reads the simulator's instead
    const stand: HookCall = { use: "sim-writes", with: { url: to.simUrl } };
    return { ...step, stopWrites: b.timeout !== undefined ? { ...stand, timeout: b.timeout } : stand };
  },
};
