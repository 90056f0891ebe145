/** `assert`: one reading of the fleet must meet the condition now. */
import type { RuleInfo } from "../diagnostics.js";
import { evaluate, readCondition } from "../fleet/index.js";
import type { AssertBody } from "../runbook/types.js";
import { StepFailure } from "./kit/context.js";
import { keyed, toEach, type StepKindDef } from "./kit/define.js";
import { readFleet } from "./kit/fleet-ops.js";
import { plural } from "../text.js";
import { describeFailing } from "./kit/wait.js";
import {
  VERIFIER_CONDITION_NOT_EARNED,
  conditionSequence,
  refuseUnearnable,
  refuseUnreadableCanWrite,
} from "./wait-for.js";
import { observeVerifier, verifierEarned } from "./kit/earned.js";

import { canWriteInstance } from "../runbook/can-write.js";

/** Lint's `unreachable-after-assert` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const UNREACHABLE_AFTER_ASSERT: RuleInfo = {
  id: "unreachable-after-assert",
  severity: "error",
  description:
    "An `assert` that can never hold where it stands (without continueOnError): it fails the run and the steps after it never run.",
  spec: "Dry-run lint rules: ... unreachable steps after a failing assert.",
  source: "DESIGN.md",
  hint: "Fix the condition or move the assert to where it can hold (e.g. `state: COMMITTED` after the commit and its wait).",
};

export const assert: StepKindDef<AssertBody> = {
  body: keyed("assert"),
  title: (b) => `Assert ${readCondition(b).text}`,
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [UNREACHABLE_AFTER_ASSERT, VERIFIER_CONDITION_NOT_EARNED],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: undefined,
    afterWritesBack: "again",
    usesVerifier: false,
    callsPlugin: undefined,
    failureStopsRun: undefined,
  },
  hookCall: undefined,
  writesCheck: undefined,
  undoTimeoutMs: undefined,
  condition: (b) => b,
  startRequest: undefined,
  rehearsal: undefined,
  plan: (_b, to) => toEach(to, "GET", "/api/v1/progress", { note: "read once" }),
  sequence: (b, at) => {
    const after = at.count - at.index - 1;
    const fails = `The run fails at it${after > 0 ? `, so the ${plural(after, "step")} after it never run` : ""}.`;
    const never = (reason: string): void =>
      at.report(UNREACHABLE_AFTER_ASSERT, `This assert can never hold here: ${reason}. ${fails}`);
    return conditionSequence(b, at, never, never, (reason) =>
      at.report(
        VERIFIER_CONDITION_NOT_EARNED,
        `This assert's condition on the verifier can never count here: ${reason}. ${fails}`,
      ),
    );
  },
  async run(ctx, body) {
    const cond = readCondition(body, canWriteInstance(ctx.run.runbook));
    refuseUnreadableCanWrite(ctx, cond);
    refuseUnearnable(ctx, cond, "assert");
    const snap = await readFleet(ctx);
    let verifier;
    const m = ctx.run.memory.verifier;
    if (cond.verifier.length > 0 && ctx.run.verifier) {
      verifier = await ctx.run.verifier.progress({ signal: ctx.signal });
      ctx.run.emit("verifier.sampled", { progress: verifier });
      observeVerifier(m, verifier);
    }
    const ev = evaluate(cond, snap, verifier, verifier && verifierEarned(m, verifier));
    ctx.run.emit("wait.status", {
      index: ctx.index,
      id: ctx.id,
      met: ev.met,
      failing: ev.failing.map((f) => ({ ...f, sinceMs: 0 })),
    });
    if (!ev.met)
      throw new StepFailure(`assertion failed: ${cond.text}: ${describeFailing(ev.failing)}`, {
        reason: "assert",
        hint: "The fleet is not where the runbook expects it to be here.",
      });
  },
};
