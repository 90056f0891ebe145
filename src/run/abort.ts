/**
 * `--abort`: the operator calls the window off after a failure or a crash. It reads the journal
 * `--resume` would continue, refuses once commit may have reached the fleet (after commit nothing
 * is undone: the instances that have it must not see writes), and hands the runner the undos
 * still owed (the CLI has waited out the hook processes earlier runs left, earlier.ts
 * `waitOutEarlierRuns`; the runner reads the fleet before it turns writes on, unwind.ts, and an
 * earlier cutover's commit the fleet cannot show refuses it here, `refuseEarlierCommit`): every
 * hook whose effect may hold (finished, cut off, or whose undo failed), last first. No command
 * goes to the service.
 */
import { ExitCode, UserError } from "../errors.js";
import type { RunEvent } from "../events.js";
import type { LoadedRunbook } from "../runbook/index.js";
import { shellCommand } from "../text.js";
import {
  currentSyncCommit,
  cutoverValuesFrom,
  cutoverVars,
  lastReverse,
  earlierCommitFinish,
  earlierCommitOnFleet,
  earlierCommitReason,
  setAsideCommand,
  openEarlierJournal,
  openHooks,
  readFolderJournals,
  reverseInDoubt,
  stepToRunAgain,
  undoVarsDiffer,
  undoVarsRefusal,
  varsChangedRefusal,
  varsChangedSince,
  whenVars,
} from "./earlier.js";
import { planSteps, type PlannedStep } from "./plan.js";
import { MASKED_VAR_NOTE, runbookArg, runTarget, wayOnTarget, wayOnVarsKept } from "../next-run.js";
import type { ResumePlan } from "./runner.js";

export async function planAbort(
  loaded: LoadedRunbook,
  dir: string,
  opts: {
    say: (s: string) => void;
    signal?: AbortSignal;
    file?: string;
    /** `--allow-changed-runbook`: the cutover's fleet moved to this run's values of its variables. */
    allowChangedRunbook?: boolean;
  },
): Promise<{ file: string; plan: ResumePlan; history: RunEvent[] }> {
  const rb = loaded.runbook;
  if (!rb) throw new UserError("not a valid runbook", { exitCode: ExitCode.usage });
  const { file, state, events: history } = await openEarlierJournal(dir, { ...opts, loaded });
  // a reverse that took effect starts a new sync, whose undos are owed until its own commit, as a
  // run's after its reverse step (src/steps/lifecycle.ts rearms the undo stack; Ctrl-C runs them);
  // the sync before it committed, and nothing of it is undone. A reverse in doubt is no reverse here
  const reversed = lastReverse(state);
  const commit = currentSyncCommit(state, false);
  const over = state.finished?.outcome === "ok" && state.finished.to === undefined;
  // a step after the commit that failed and the run went past (a verify): the way on is --from it
  const again = stepToRunAgain(state, rb);
  const steps = planSteps(rb);
  // the fleet's own variables, as --resume judges them: made of other values, the runner's read
  // before the undo (unwind.ts) saw another environment's sync, RUNNING, and an undo taking the
  // fleet's first URL (sim-writes) turned on another switch, said "writes are back on" over a
  // fleet a commit had reached (reproduced; test/run/undo-vars.e2e.test.ts)
  const fleetChanged = varsChangedSince(state, loaded, steps.length);
  // allowed, the cutover's fleet is the new one from here: journaled as the cutover's values
  // (`run.started.cutoverVars`), which status and every way on read. Not, an abort whose undo failed
  // left the old values the cutover's, and its end and status offered `--abort` with them: accepted,
  // it read the old fleet (RUNNING), and turned writes on while a commit had reached the new one
  // (an outside review; test/run/undo-vars.e2e.test.ts)
  const moved =
    fleetChanged.length && opts.allowChangedRunbook === true
      ? cutoverValuesFrom(state, loaded, steps.length)
      : undefined;
  const known = moved
    ? { decidedVars: whenVars(state, loaded), cutoverValues: moved }
    : { decidedVars: cutoverVars(state, loaded) };
  // the runbook as the way on names it, with the --var values its runs decided their `when`s with:
  // where a reverse or a commit went (the refusals just below), whatever this run was given
  const target = runTarget(loaded, cutoverVars(state, loaded));
  const sentWith = fleetChanged.length
    ? ` It names the --var values the cutover's runs sent with; this run's (${fleetChanged.map((c) => `${c.name}=${c.now}`).join(", ")}) make another fleet, which the journal shows nothing was sent to.`
    : "";
  // an abort's own way on after a move: the new values and the flag that takes them (a refusal
  // journals nothing, and a way on with the journal's values read the old fleet, where a commit on
  // the new one is not seen: an outside review)
  // that flag takes whatever values the command has: a secret one is kept masked (`wayOnVarsKept`)
  const kept = moved ? wayOnVarsKept(loaded, known) : undefined;
  const abortTarget = kept ? `${runTarget(loaded, kept.vars)} --allow-changed-runbook` : wayOnTarget(loaded, known);
  const maskedNote = kept?.masked ? MASKED_VAR_NOTE : "";
  const back = reversed ? "" : " Going back to the source after a commit is a reverse, not an abort.";
  // a reverse that may have reached the fleet and whose step did not end (its runner killed with it
  // on its way): which sync runs now only the fleet can say; the commit below may be the sync's
  // before. A reverse goes only to a COMMITTED fleet, so this holds with no commit in this journal
  // too (a runbook that only reverses: --abort went on, and the next run sent the reverse again)
  const doubt = reverseInDoubt(state);
  if (doubt !== undefined)
    throw new UserError(
      `cannot abort from ${file}: a reverse (step ${doubt + 1} "${state.steps[doubt]?.id ?? "?"}") may have reached the fleet and its step did not end ok, after the fleet was committed: --abort reads no fleet, so it cannot tell which sync runs now, and after a commit nothing is undone`,
      {
        hint: `See the fleet: syncbook status ${runbookArg(loaded)}. To go on: syncbook run ${target} --resume (it reads the fleet and adopts the reverse it shows; then the reversed sync's undos are --abort's again, before its own commit).${sentWith}`,
        exitCode: ExitCode.failed,
      },
    );
  if (commit.sent)
    throw new UserError(
      `cannot abort from ${file}: ${reversed ? `the reversed sync's commit (after the reverse, step ${reversed.stepIndex + 1})` : "commit"} ${commit.accepted ? "was accepted by the fleet" : "may have reached the fleet (sent, with no usable answer from some instance)"}: after commit nothing is undone, and writes stay as they are`,
      {
        // a finished run has nothing for --resume to finish (it answers "nothing to resume")
        hint: over
          ? again
            ? `The cutover's last run finished ok, past step ${again.index + 1} ${again.id}, which failed: run it again in this cutover with: syncbook run ${target} --from ${again.id}.${back}${sentWith}`
            : `The cutover's last run finished ok: nothing is left to finish or to undo. See the fleet and the journal: syncbook status ${runbookArg(loaded)}.${back}`
          : `Finish the cutover: syncbook run ${target} --resume (it goes on where the cutover stopped: a commit part of the fleet refused is completed; what it will meet, a writes-on hook refused for an instance stopped during the commit included, is said by syncbook status ${runbookArg(loaded)}).${back}${sentWith}`,
        exitCode: ExitCode.failed,
      },
    );
  if (fleetChanged.length && !moved) throw varsChangedRefusal(fleetChanged, state, loaded, file, "--abort");
  const reversedId = reversed ? steps[reversed.stepIndex]?.id : undefined;
  const all = openHooks(state).sort((a, b) => a.stepIndex - b.stepIndex);
  const open = reversed ? all.filter((h) => h.stepIndex > reversed.stepIndex) : all;
  // the undo that turns writes on, and an earlier cutover's commit the fleet read cannot see
  const stop = open.map((h) => steps[h.stepIndex]).find((st) => st?.bound.opensWriteStop);
  if (stop) await refuseEarlierCommit(loaded, dir, file, stop, abortTarget, maskedNote);
  // an undo is made from the runbook with this run's --var values: with others than its hook ran
  // with, it would turn on another switch and leave the stop standing, said undone
  const differ = undoVarsDiffer(open, loaded);
  if (differ.length)
    throw undoVarsRefusal(differ, state, loaded, `abort from ${file}`, "--abort", moved ? known : undefined);
  if (open.length < all.length)
    opts.say(
      `abort: ${all
        .filter((h) => !open.includes(h))
        .map((h) => `step ${h.stepIndex + 1} "${h.id}"`)
        .join(
          ", ",
        )} ${all.length - open.length === 1 ? "belongs" : "belong"} to the sync before the reverse (step ${reversed!.stepIndex + 1}), which committed: not undone`,
    );
  // a hook whose step has no `undo:` is handed to a person by the run, once that is journaled
  // (src/run/runner.ts, a `decision` of check `by-hand`): told here, a runner killed before the
  // journal had it would leave a later resume counting a write stop the operator turned off
  const undoable = open.filter((h) => steps[h.stepIndex]?.bound.hookCall()?.undo !== undefined);
  opts.say(
    undoable.length
      ? `abort: ${file}: undoing ${undoable.map((h) => `step ${h.stepIndex + 1} "${h.id}"`).join(", ")} (last first); no command is sent to the service`
      : open.length
        ? `abort: ${file}: no owed undo can run from here; nothing is undone, nothing is sent`
        : `abort: ${file}: no hook's undo is owed; nothing to undo, nothing is sent`,
  );
  return {
    file,
    history,
    plan: {
      done: new Map(),
      memory: {
        writesStopped: state.stopWritesSucceeded,
        commitSent: false,
        commitAccepted: false,
        // what the journal knows of the verification and the reverse, as `status` reads it: the
        // run's end words its verdict and commit by them (without, it dropped the reverse: "not
        // verified (no `verify` step passed …)", "not committed", where status said the reverse)
        verifier: { ...state.verifier },
        ...(reversedId !== undefined ? { reversed: reversedId } : {}),
      },
      undoSteps: open.map((h) => h.stepIndex),
      // the way on after it carries the values the cutover's steps ran with, not this run's (often none)
      ...known,
    },
  };
}

/**
 * The undo of a write stop turns application writes on: never while a commit of an earlier
 * cutover of the folder may still take effect, as for this cutover's own (`liveJournals`: one left
 * unfinished for a new cutover stays on the fleet until something since says otherwise). The
 * runner's fleet read before the undo (unwind.ts) sees a commit that took effect, not one held in
 * commit's round (the instances that have it show RUNNING until every instance has it) or still on
 * its way: the round closing later would take the destination over with writes flowing at the
 * source. A folder journal that cannot be read may hold one: refused too (the reading that fails safe).
 */
async function refuseEarlierCommit(
  loaded: LoadedRunbook,
  dir: string,
  file: string,
  stop: PlannedStep,
  /** The runbook with this cutover's --var values, as its way on names it. */
  target: string,
  /** Said at the end of the hint: a value of `target` is masked (`MASKED_VAR_NOTE`). */
  note = "",
): Promise<void> {
  const undo = `the undo of step ${stop.index + 1} "${stop.id}" would turn application writes back on`;
  const kept = "nothing was undone, and writes stay STOPPED";
  // judged by file: another journal of this cutover that this one did not count may hold a commit
  const held = earlierCommitOnFleet(await readFolderJournals(dir), file);
  if (held && !("unjudged" in held)) {
    // the instances it never reached (they refused it): the one way to close its round
    const finish = earlierCommitFinish(held, loaded.runbook);
    const status = `See the fleet: syncbook status ${runbookArg(loaded)}.`;
    throw new UserError(`cannot abort from ${file}: ${earlierCommitReason(held)}; ${undo}; ${kept}`, {
      hint: finish
        ? `${status} Finish that commit where it did not arrive (writes stay stopped for it): syncbook run ${target} ${shellCommand(["--from", finish.from, "--only", finish.only.join(",")])}. If the sync was set back by hand since (the fleet IDLE, or started again), no instance holds it: turn the application's writes back on by hand.${note}`
        : `${status} Do not turn the source's writes back on: once every instance is COMMITTED, move the application to the destination. If the sync was set back by hand since (the fleet IDLE, or started again), no instance holds that commit: turn the application's writes back on by hand.`,
      exitCode: ExitCode.failed,
    });
  }
  if (held) {
    // the file set aside, as the other refusals of a journal that cannot be judged offer it
    const cmd = setAsideCommand(held, dir);
    const aside = cmd !== undefined ? loaded.redact(cmd) : undefined;
    throw new UserError(`cannot abort from ${file}: ${earlierCommitReason(held)}; ${undo}; ${kept}`, {
      hint: `See the fleet: syncbook status ${runbookArg(loaded)}. ${aside ? `If that file is no journal of this runbook, or you know no instance holds a commit of its, set it aside (it stays its run's record): ${aside}` : "Make the journal folder readable to this user"}, then call this cutover off again: syncbook run ${target} --abort; or, once you know no instance holds a commit, turn the application's writes back on by hand.${note}`,
      exitCode: ExitCode.failed,
    });
  }
}
