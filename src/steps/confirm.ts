/** `confirm`: a yes/no question to the operator. `--yes` answers it; it never lifts an interlock. */
import type { ConfirmBody } from "../runbook/types.js";
import { StepFailure } from "./kit/context.js";
import { keyed, type StepKindDef } from "./kit/define.js";
import { unchanged } from "./kit/sequence.js";

const messageOf = (c: ConfirmBody): string => (typeof c === "string" ? c : (c.message ?? "Continue?"));

export const confirm: StepKindDef<ConfirmBody> = {
  body: keyed("confirm"),
  title: (c) => (typeof c === "string" ? c : (c.message ?? "Confirm")),
  plan: () => [],
  sequence: (_b, at) => unchanged(at),
  async run(ctx, c) {
    const message = messageOf(c);
    if (ctx.run.yes) {
      ctx.run.emit("decision", {
        index: ctx.index,
        id: ctx.id,
        kind: "interlock",
        ok: true,
        check: "confirm",
        reason: `answered yes by --yes: ${message}`,
      });
      return;
    }
    if (!ctx.run.prompt)
      throw new StepFailure(`needs an answer and there is no terminal: ${message}`, {
        reason: "declined",
        hint: "Run it in a terminal, or pass --yes to answer every confirm with yes.",
      });
    const ok = await ctx.run.prompt.confirm(message, ctx.signal);
    ctx.run.emit("decision", {
      index: ctx.index,
      id: ctx.id,
      kind: "interlock",
      ok,
      check: "confirm",
      reason: `${ok ? "yes" : "no"}: ${message}`,
    });
    if (!ok)
      throw new StepFailure(`the operator answered no: ${message}`, {
        reason: "declined",
        hint: "The run stopped here; nothing after this step was done.",
      });
  },
};
