/**
 * A yes/no question to the operator, journaled as a `confirm` interlock decision: `--yes` answers
 * it, no terminal is a refusal (never a silent yes), and a no stops the step. Used by the
 * `confirm` step kind and by targeted commands (kit/targets.ts).
 */
import { StepFailure, type StepContext } from "./context.js";
import { whileWatching } from "./watch.js";

export interface AskWording {
  /** The failure's message when there is no terminal to ask on. */
  noTerminal: string;
  /** The hint of that failure. */
  noTerminalHint: string;
  /** The hint when the operator answers no. */
  declinedHint: string;
}

export async function askOperator(ctx: StepContext, question: string, words: AskWording): Promise<void> {
  const decide = (ok: boolean, reason: string): void =>
    void ctx.run.emit("decision", { index: ctx.index, id: ctx.id, kind: "interlock", ok, check: "confirm", reason });
  if (ctx.run.yes) {
    // a rehearsal answers every confirm, --yes or not (an adversarial run: it said "by --yes"
    // where none was given); the read model takes either as no person's answer (src/model/fold.ts)
    decide(true, `answered yes by ${ctx.run.mode === "rehearse" ? "the rehearsal" : "--yes"}: ${question}`);
    return;
  }
  if (!ctx.run.prompt)
    throw new StepFailure(`${words.noTerminal}: ${question}`, { reason: "declined", hint: words.noTerminalHint });
  // the fleet is read while the question waits: the screen shows it as it is when the answer is given
  const prompt = ctx.run.prompt;
  const ok = await whileWatching(ctx.run, ctx.signal, () => prompt.confirm(question, ctx.signal));
  decide(ok, `${ok ? "yes" : "no"}: ${question}`);
  if (!ok)
    throw new StepFailure(`the operator answered no: ${question}`, { reason: "declined", hint: words.declinedHint });
}
