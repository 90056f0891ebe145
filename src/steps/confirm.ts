/** `confirm`: a yes/no question to the operator. `--yes` answers it; it never lifts an interlock. */
import { StepFailure, type StepContext } from "../run/context.js";

export async function run(ctx: StepContext): Promise<void> {
  const c = ctx.step.confirm;
  const message = typeof c === "string" ? c : (c?.message ?? "Continue?");
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
}
