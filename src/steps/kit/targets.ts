/**
 * A command sent to part of the fleet: `--only <instance>` (an operator completing what a refusal
 * or a crash left half done), or `--resume` completing a command the journal shows reached only
 * some instances. The service wants identical commands on every instance, so a targeted command
 * is only ever the rest of one the others already have:
 *
 * - the instances not named must already show its effect, or, for `commit` and `reverse` (which
 *   block until every instance has them), still be waiting in its state before (`fleet-state`);
 * - the named ones pass the command's own interlocks (the step checks them on those instances);
 * - it is confirmed (a prompt, or `--yes`): it is not in the runbook as written.
 */
import { blocksUntilEveryInstance, COMMAND_EFFECT, type CommandOperation } from "../../api/index.js";
import { instanceLabel } from "../../events.js";
import type { FleetSnapshot, InstanceSample } from "../../fleet/index.js";
import { askOperator } from "./ask.js";
import type { StepContext } from "./context.js";
import { checkInterlock, stateOrWhyNot } from "./fleet-ops.js";

/**
 * The instances a command step judges and sends to: every instance, or the targeted ones after
 * the fleet-state check on the others and the operator's yes.
 */
export async function commandTargets(
  ctx: StepContext,
  op: CommandOperation,
  snap: FleetSnapshot,
): Promise<{ judged: InstanceSample[]; only?: number[] }> {
  const t = ctx.targets;
  if (!t) return { judged: snap.instances };
  const named = snap.instances.filter((i) => t.only.includes(i.ref.index));
  const others = snap.instances.filter((i) => !t.only.includes(i.ref.index));
  const { before, after }: { before: readonly string[]; after: readonly string[] } = COMMAND_EFFECT[op];
  const okOther = (i: InstanceSample): boolean => {
    // Stryker disable next-line StringLiteral: equivalent: no state is any string that is not one
    const st = i.progress?.state ?? "";
    return after.includes(st) || (blocksUntilEveryInstance(op) && before.includes(st));
  };
  const wrong = others.filter((i) => !okOther(i));
  const names = named.map((i) => instanceLabel(i.ref)).join(", ");
  const othersNow = others.map((i) => `${instanceLabel(i.ref)} ${stateOrWhyNot(i)}`).join(", ");
  // Stryker disable next-line StringLiteral: equivalent: every command is sent from one state
  const sentFrom = before.join("/");
  checkInterlock(
    ctx,
    "fleet-state",
    wrong.length === 0,
    wrong.length === 0
      ? `${op} to ${names} only (${t.why}); ${others.length ? `the others are ${othersNow}` : "no other instance"}`
      : `${op} to ${names} only would split the fleet: ${wrong.map((i) => `${instanceLabel(i.ref)} is ${stateOrWhyNot(i)}`).join(", ")}, which ${blocksUntilEveryInstance(op) ? `is neither waiting for ${op} (${sentFrom}) nor past it` : `has not taken ${op}`} (${after.join("/")})`,
    `A targeted ${op} only completes one the other instances already have; send it to the whole fleet (without --only) instead.`,
  );
  // a start an instance refused counts at the commit, completed or not (src/steps/commit.ts
  // `no-errors`): said before the yes, not found out at the commit with writes stopped (a trial)
  const refusedStart =
    op === "start" && !ctx.run.force.has("no-errors") && ctx.run.memory.serviceErrors.some((e) => e.op === "start");
  const question = `Send ${op} to ${names} only (${t.why})?${refusedStart ? ` The refusal of the start still counts at the commit: nothing published says an instance started after the others leaves the destination a consistent copy, so a commit of this sync, in this run or a later one, goes on only with --force=no-errors.` : ""}`;
  await askOperator(ctx, question, {
    noTerminal: `a targeted ${op} needs an answer and there is no terminal`,
    noTerminalHint: "Run it in a terminal, or pass --yes to confirm it.",
    declinedHint: "Nothing was sent.",
  });
  return { judged: named, only: named.map((i) => i.ref.index) };
}
