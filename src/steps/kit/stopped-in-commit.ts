/**
 * The `stopped-in-commit` interlock: no instance may have stopped during the commit before the
 * destination took writes (src/fleet/window.ts `StoppedInCommit`). "If mongosync stops during
 * commit, before the /progress endpoint reports canWrite: true, you must restart the entire
 * migration to ensure that it's verified" (docs-cluster-to-cluster-sync
 * source/includes/fact-verification.rst). Two steps ask it: a writes-on hook (an adversarial run:
 * the application was told to write, and the run ended "ok") and `verify` (a runbook without a
 * writes-on hook ended "ok", exit 0, having waited hours for a result that cannot verify this
 * cutover; only the verdict said "not verified").
 */
import { stoppedInCommitWords } from "../../fleet/index.js";
import { byHand, wayOn, type StepContext } from "./context.js";
import { checkInterlock } from "./fleet-ops.js";

/**
 * Refuses the step (exit 3) when the window saw an instance stop during the commit, unless
 * `--force=stopped-in-commit`; `held`: what this refusal kept from happening, said first in the hint.
 */
export function stoppedInCommitInterlock(ctx: StepContext, held: string): void {
  const stopped = ctx.run.window.stoppedInCommit();
  if (!stopped) return;
  checkInterlock(
    ctx,
    "stopped-in-commit",
    false,
    stoppedInCommitWords(stopped),
    `${held}, and the commit holds on the fleet. ${byHand(ctx.run, "fleet", `Restart the migration (a new sync to an emptied destination), then: ${wayOn(ctx.run, { newCutover: true })}; or, only if you accept this migration unverified or know from that instance's log that its process did not stop before the destination took writes, ${wayOn(ctx.run, { force: "stopped-in-commit" })}.`)}`,
  );
}
