/** `assert`: one reading of the fleet must meet the condition now. */
import { evaluate, readCondition } from "../fleet/index.js";
import type { AssertBody } from "../runbook/types.js";
import { StepFailure } from "./kit/context.js";
import { keyed, toEach, type StepKindDef } from "./kit/define.js";
import { readFleet } from "./kit/fleet-ops.js";
import { plural } from "../text.js";
import { describeFailing } from "./kit/wait.js";
import { conditionSequence } from "./wait-for.js";

export const assert: StepKindDef<AssertBody> = {
  body: keyed("assert"),
  title: (b) => `Assert ${readCondition(b).text}`,
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
  sequence: (b, at) =>
    conditionSequence(b, at, (reason) => {
      const after = at.count - at.index - 1;
      at.report(
        "unreachable-after-assert",
        `This assert can never hold here: ${reason}. The run fails at it${after > 0 ? `, so the ${plural(after, "step")} after it never run` : ""}.`,
      );
    }),
  async run(ctx, body) {
    const cond = readCondition(body);
    const snap = await readFleet(ctx);
    let verifier;
    if (cond.verifier.length > 0 && ctx.run.verifier) {
      verifier = await ctx.run.verifier.progress({ signal: ctx.signal });
      ctx.run.emit("verifier.sampled", { progress: verifier });
    }
    const ev = evaluate(cond, snap, verifier);
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
