/**
 * The runner: steps in order against the whole fleet, every step with its time limit and the
 * run's AbortSignal, interlocks before commands, undo of hooks when the run fails or is
 * interrupted before commit. It only emits events; the UI, journal, notifiers and reports listen.
 * It composes the run's assembly (`assemble.ts`), one step (`run-step.ts`) and the undo (`unwind.ts`).
 */
import { hostname, userInfo } from "node:os";
import { ExitCode, errorMessage } from "../errors.js";
import { firstStartRequest, realRunOr, whileWatching, type Prompter } from "../steps/index.js";
import type { Place } from "../text.js";
import type { Outcome } from "../events.js";
import type { DrainResult } from "../plugin/index.js";
import { SYNCBOOK_VERSION } from "../version.js";
import { verification } from "../steps/index.js";
import { canWriteInstance, destinationWrites } from "../runbook/can-write.js";
import { earlierWindows, type StoppedInCommit } from "../fleet/index.js";
import { windowBoundOf } from "../writes-words.js";
import { whenVariable } from "../runbook/interpolate.js";
import { instanceKey } from "../journal/index.js";
import { assembleRun, type ResumePlan, type RunOptions } from "./assemble.js";
import { flushPolls, runStep } from "./run-step.js";
import { runbookArg } from "../next-run.js";
import {
  abortMessage,
  handOver,
  unwind,
  writesAfterJournalFailure,
  writesMayGoBackOn,
  type WritesKeptOff,
} from "./unwind.js";
import type { PlannedStep } from "./plan.js";

export { cutoverId, runDefaults, WINDOW_POLL_MS, type ResumePlan, type RunOptions } from "./assemble.js";

export interface RunResult {
  outcome: Outcome;
  exitCode: number;
  /** Commit was sent in this run (or an earlier one, on resume). */
  commitSent: boolean;
  /** Commit was accepted by at least one instance: the cutover happened (or is happening). */
  committed: boolean;
  /** Not committed, and a commit sent may have reached an instance (`run.finished.commitInDoubt`). */
  commitInDoubt?: true;
  /** Not committed, and a reverse (its step id) took effect: the commit before it was the other sync's (`run.finished.reversed`). */
  reversed?: string;
  /** A `verify` step passed on this cutover's result (src/steps/kit/earned.ts); `unverified`: why not. */
  verified: boolean;
  unverified?: string;
  /** Verified with the check's filter (JSON): only the documents it matches. */
  verifiedFilter?: string;
  /** A command that reached part of the fleet and was refused by the rest (`--resume` completes it). */
  split?: string;
  /** `--abort` ended it: no step ran, the open undos did. */
  aborted?: boolean;
  /** `--abort`: a write stop owed its undo whose step has no `undo:` (its id): writes stay stopped until turned on by hand. */
  stopUndoless?: string;
  /** Steps that failed and the run went on past (`continueOnError`), in order. */
  wentPast?: string[];
  /**
   * The write stop an earlier `--abort` handed to a person (its step id), this run ending before it
   * stopped writes again: writes may be stopped (src/fleet/window.ts `handedToPerson`).
   */
  handedToPerson?: string;
  /** The fleet ruled out the undo of a write stop (a commit took effect, or it could not be read): writes stay stopped. */
  writesKeptOff?: WritesKeptOff;
  /**
   * An instance seen stopped during the cutover's commit before the destination took writes
   * (src/fleet/window.ts): the run's end says it again, whatever its outcome (an adversarial run:
   * a runbook with no writes-on hook ended "ok · committed", the warning lines above).
   */
  stoppedInCommit?: StoppedInCommit;
  /** The interlock check whose refusal stopped the run (exit 3), e.g. `writes-stopped`. */
  refused?: string;
  message?: string;
  hint?: string;
  /** That hint is to be done before the `--resume` that runs the step again (`StepFailure.beforeResume`). */
  hintBeforeResume?: true;
  /** The flags that `--resume` needs once that hint is done (`StepFailure.resumeFlags`). */
  resumeFlags?: readonly string[];
  /** The way on is this run's own command again, with these arguments after the runbook (`StepFailure.againArgs`). */
  againArgs?: readonly string[];
  failedStep?: string;
  /** Where the failed step is in the runbook. */
  place?: Place;
  /** The way on is not `--resume` but a new run with these flags (`--from stop-writes`): the journal is wrong about writes. */
  rerunWith?: string;
  durationMs: number;
  /** The notifications of this run: how many were delivered, which were not, and whether a Ctrl-C ended their wait. */
  notifications?: DrainResult;
}

export async function runRunbook(opts: RunOptions): Promise<RunResult> {
  const {
    started,
    loaded,
    runbook,
    steps,
    from,
    to,
    only,
    mode,
    signal,
    emitter,
    say,
    fleet,
    verifier,
    cutover,
    cutoverStart,
    notifier,
    memory,
    undo,
    undoAbort,
    undoneOk,
    undoStarted,
    undoless,
    run,
    journalError,
    refused,
    verifyFailed,
  } = assembleRun(opts);

  say("run.started", {
    runbook: runbook.name,
    file: loaded.file,
    ...(loaded.journalDir !== undefined ? { journalDir: loaded.journalDir } : {}),
    hash: loaded.hash,
    cutover,
    by: whoRuns(),
    syncbook: SYNCBOOK_VERSION,
    format: runbook.runbook,
    ...(runbook.serviceVersion !== undefined ? { serviceVersion: runbook.serviceVersion } : {}),
    instances: fleet.refs,
    destinationWrites: destinationWrites(runbook, firstStartRequest(runbook)?.body),
    ...(canWriteInstance(runbook) !== undefined ? { canWriteFrom: canWriteInstance(runbook) } : {}),
    ...(runbook.verifier ? { verifier: loaded.redact(runbook.verifier) } : {}),
    mode,
    ...(opts.abort === true ? { abort: true as const } : {}),
    ...(opts.resume?.carriedFrom !== undefined
      ? {
          carried: {
            from: opts.resume.carriedFrom,
            writesStopped: opts.resume.memory.writesStopped === true,
            commitSent: opts.resume.memory.commitSent === true,
            // a --resume of this run reads only its journal: the forced commit it counted stays so
            ...(opts.resume.memory.commitWritesForced === true ? { commitWritesForced: true } : {}),
            commitAccepted: opts.resume.memory.commitAccepted === true,
            ...(opts.resume.carriedCommands?.length ? { commands: [...opts.resume.carriedCommands] } : {}),
            // a --resume of this run reads only its journal: the refusals it counted count there too
            ...(opts.resume.memory.serviceErrors?.length ? { refusals: [...opts.resume.memory.serviceErrors] } : {}),
          },
        }
      : {}),
    steps: steps.map((s) => {
      const when = whenVariable(loaded.raw, s.index);
      return {
        index: s.index,
        id: s.id,
        kind: s.kind,
        title: loaded.redact(s.title),
        ...(when?.startsWith("vars.") ? { when: when.slice("vars.".length) } : {}),
        ...(s.bound.hookCall()?.writesOn === true ? { writesOn: true as const } : {}),
      };
    }),
    vars: loaded.vars,
    ...(loaded.given?.length ? { given: [...loaded.given] } : {}),
    ...(opts.resume?.cutoverValues
      ? {
          cutoverVars: { ...opts.resume.cutoverValues.vars },
          cutoverGiven: [...opts.resume.cutoverValues.given],
        }
      : {}),
    deliveries: true,
    traced: true,
  });
  // what a --from run goes on from, in its own journal before anything is sent (a --resume of
  // this run reads only that journal: src/journal/verifier.ts)
  if (opts.resume?.verifierFrom !== undefined && Object.keys(memory.verifier).length > 0)
    say("verifier.carried", { memory: memory.verifier, from: opts.resume.verifierFrom });
  for (const f of run.force)
    say("decision", {
      kind: "force",
      ok: true,
      check: f,
      reason: `--force=${f}: this interlock will be skipped if it refuses`,
    });

  let outcome: Outcome = "ok";
  const wentPast: string[] = [];
  let failure:
    | {
        message: string;
        hint?: string;
        step: string;
        interlock?: boolean;
        place?: Place;
        rerunWith?: string;
        hintBeforeResume?: true;
        resumeFlags?: readonly string[];
        againArgs?: readonly string[];
      }
    | undefined;
  let askEachStep = opts.stepMode === true;
  // time the operator spent answering --step prompts since the last step started
  let promptMs = 0;

  // its hint is the run's end's (unwind.ts `writesAfterJournalFailure`): one way on, said once
  const journalFailure = (step: string): NonNullable<typeof failure> => ({
    message: `the journal could not be written (${errorMessage(journalError())}): the run stopped before sending anything more`,
    step,
  });
  let handed: typeof undoless = [];
  let keptOffFirst: WritesKeptOff | undefined;
  if (opts.abort) {
    outcome = "failed";
    failure = { message: "aborted by the operator (--abort)", step: "" };
    say("decision", {
      kind: "undo",
      ok: true,
      check: "abort",
      reason: "--abort: the operator called the cutover off: no step runs and nothing is sent to the service",
    });
    // a hook owed an undo its step does not give: handed to a person, on record, so that every
    // later run counts its effect as possibly reverted (src/journal/state.ts `byHand`); a write
    // stop only once the fleet shows writes may go back on, as before an undo (an outside review:
    // "undo it by hand" was said over a commit sent by hand, which the journal does not show)
    const stop = undoless.find((st) => steps[st.index]?.bound.opensWriteStop);
    keptOffFirst = stop ? await writesMayGoBackOn(run, undoAbort.signal, stop) : undefined;
    handed = handOver(
      run.emit,
      emitter.tell,
      keptOffFirst ? undoless.filter((st) => !steps[st.index]?.bound.opensWriteStop) : undoless,
    );
  }
  for (const s of opts.abort ? [] : steps) {
    if (journalError()) {
      outcome = "failed";
      failure = journalFailure(s.id);
      break;
    }
    const skip = skipReason(s, { from, to, resume: opts.resume });
    if (skip) {
      const adopted = opts.resume?.adopted?.has(s.index) === true;
      const pastTo = s.index > to;
      say("step.skipped", {
        index: s.index,
        id: s.id,
        reason: skip,
        ...(adopted ? { adopted } : {}),
        ...(pastTo ? { pastTo } : {}),
      });
      continue;
    }
    if (signal.aborted) {
      outcome = "interrupted";
      break;
    }
    if (askEachStep && opts.prompt) {
      let choice: Awaited<ReturnType<Prompter["stepChoice"]>>;
      const asked = Date.now();
      const prompt = opts.prompt;
      const question = {
        index: s.index,
        id: s.id,
        kind: s.kind,
        title: s.title,
        ...(s.bound.command === "commit"
          ? {
              pointOfNoReturn: pointOfNoReturn(
                opts.resume?.complete?.stepIndex === s.index
                  ? opts.resume.complete.only.length
                  : (only?.length ?? run.fleet.refs.length),
              ),
            }
          : {}),
      };
      try {
        // the fleet is read while the question waits: the screen shows it as it is now (issue 39, point 3)
        choice = await whileWatching(run, signal, () => prompt.stepChoice(question, signal));
      } catch {
        outcome = "interrupted";
        break;
      } finally {
        promptMs += Date.now() - asked;
      }
      if (choice === "skip") {
        say("step.skipped", { index: s.index, id: s.id, reason: "skipped by the operator (--step)" });
        continue;
      }
      if (choice === "abort") {
        outcome = "failed";
        failure = { message: `aborted by the operator before step ${s.id}`, step: s.id };
        say("decision", {
          index: s.index,
          id: s.id,
          kind: "interlock",
          ok: false,
          check: "step",
          reason: "the operator chose abort",
        });
        break;
      }
      if (choice === "rest") askEachStep = false;
    }
    const completing = opts.resume?.complete?.stepIndex === s.index ? opts.resume.complete : undefined;
    const targets = completing
      ? { only: completing.only, why: completing.why, forgive: completing.forgive }
      : only && s.bound.command !== undefined
        ? // as typed, a password in an instance's URL too: redacted, as every output (the question shows it)
          {
            only,
            why: `--only ${loaded.redact(opts.only?.join(",") ?? "")}`,
            // a targeted commit completes a split one (src/steps/kit/targets.ts): the refusals of the
            // instances it goes to that an earlier journal shows are the reason for it, as a
            // --resume's completion forgives them, not a bar to it (src/steps/commit.ts `no-errors`)
            forgive: fleet.refs.filter((r) => only.includes(r.index)).map(instanceKey),
          }
        : undefined;
    const result = await runStep(run, s, signal, targets, promptMs);
    promptMs = 0;
    if (journalError()) {
      outcome = "failed";
      failure = journalFailure(s.id);
      break;
    }
    if (result === "ok") continue;
    if (result === "interrupted") {
      outcome = "interrupted";
      failure = { message: `interrupted during step ${s.id}`, step: s.id };
      break;
    }
    // lint refuses the flag where a failure must end the run (a library caller is not linted):
    // never past a refused interlock, a start, a commit, a reverse or a write stop
    const stops = result.interlock ? "it was refused by a safety interlock" : s.bound.failureStopsRun;
    if (s.step.continueOnError && stops === undefined) {
      wentPast.push(s.id);
      say("log", {
        level: "warn",
        index: s.index,
        // the step's hint may say --resume, which speaks of a run that stops there; a rehearsal's
        // says "rehearse again", which runs it again
        message: `step ${s.id} failed; continueOnError lets the run go on${realRunOr(run, " (--resume would not run this step again)", "")}`,
      });
      continue;
    }
    if (s.step.continueOnError)
      say("log", {
        level: "warn",
        index: s.index,
        message: `step ${s.id} failed; continueOnError does not apply: ${stops}`,
      });
    outcome = "failed";
    failure = {
      message: `step ${s.id} failed: ${result.message}`,
      step: s.id,
      place: result.place,
      ...(result.hint ? { hint: result.hint } : {}),
      ...(result.interlock ? { interlock: true } : {}),
      ...(result.hintBeforeResume ? { hintBeforeResume: true as const } : {}),
      ...(result.resumeFlags ? { resumeFlags: result.resumeFlags } : {}),
      ...(result.againArgs ? { againArgs: result.againArgs } : {}),
    };
    break;
  }

  const owed = undo.unfinished().map((u) => u.entry.step);
  const unwound =
    outcome !== "ok"
      ? await unwind(
          run,
          undoAbort.signal,
          undoneOk,
          {
            failed: () => journalError() !== undefined,
            ...(opts.distrustJournal ? { distrust: opts.distrustJournal } : {}),
          },
          undoStarted,
        )
      : undefined;
  const keptOff = unwound?.keptOff ?? keptOffFirst;
  flushPolls(run);
  if (journalError() && failure && !keptOff)
    failure = {
      ...failure,
      ...writesAfterJournalFailure(
        failure,
        memory,
        { ok: undoneOk, started: unwound?.started ?? new Set(), distrusted: unwound?.distrusted === true },
        steps,
        runbookArg(loaded),
        run.target,
        run.window.current()?.open ? run.window.current()?.openedBy : undefined,
      ),
    };
  // an --abort whose journal failed: never "turn writes back on by hand" (a later run would not
  // know, and count the stop), but abort again once the journal can be written (an outside review)
  if (opts.abort && journalError() && failure && !keptOff)
    failure.hint =
      "Free disk space (or fix the journal folder), then run --abort again: it undoes or hands over, on record, what is still owed. Until then leave the application's writes as they are: a write stop turned off by hand that the journal does not show would be counted by a later run.";
  // an `--abort` ends clean (exit 0) only when every hook owed an undo was undone: one whose step
  // has no runbook `undo:` (a stopWrites lint warned of) is left as it is, writes stopped with it
  // (another hook with no `undo:` is said at the abort's start, and journaled, but ends nothing:
  // the exit code says whether writes are back on)
  const stopsUndoless = opts.abort ? undoless.filter((st) => steps[st.index]?.bound.opensWriteStop) : [];
  const abortFailed = opts.abort ? [...owed.filter((st) => !undoneOk.has(st.index)), ...stopsUndoless] : [];
  if (opts.abort && failure) failure.message = abortMessage(owed, abortFailed, steps, stopsUndoless, handed);
  // by hand only where the hand-off is on record (a full disk: nothing was handed over)
  const stopUndoless = stopsUndoless.find((st) => handed.includes(st));
  // the fleet ruled the undo of the write stop out: writes stay stopped, and the way on is its
  if (keptOff) {
    const base = opts.abort ? "aborted by the operator (--abort), but nothing was undone" : failure?.message;
    failure = {
      ...(failure ?? { step: "" }),
      message: base ? `${base}; ${keptOff.reason}` : keptOff.reason,
      hint: keptOff.hint,
    };
    delete failure.rerunWith;
  }

  const exitCode =
    outcome === "ok" || (opts.abort && abortFailed.length === 0)
      ? ExitCode.ok
      : outcome === "interrupted"
        ? ExitCode.interrupted
        : failure?.interlock
          ? ExitCode.interlock
          : ExitCode.failed;
  const ended = Date.now();
  const durationMs = ended - started;
  const checked = verification({
    passed: memory.verifier.verified !== undefined,
    kinds: steps.map((s) => s.kind),
    reversed: memory.verifier.reversed,
    stopped: run.window.stoppedInCommit(),
    filter: memory.verifier.filter,
    failed: verifyFailed(),
  });
  // the cutover, not only this run: its time across runs, its write-stop window (folded from the
  // earlier runs' events and this run's), and writes left stopped, said in words by every output
  const window = run.window.current(ended);
  const before = run.window.windows(ended).slice(0, -1);
  const writes = run.window.writesLeft();
  const handedTo = run.window.handedToPerson();
  // sent, not accepted, not refused by all it reached: the commit may hold (answers lost)
  const inDoubt = memory.commitSent && !memory.commitAccepted && memory.commitRefused !== true;
  const reason = signal.reason as { signal?: unknown; terminal?: unknown } | undefined;
  const by = reason?.signal;
  say("run.finished", {
    outcome,
    exitCode,
    ...(outcome === "interrupted" && typeof by === "string" && /^SIG[A-Z]+$/.test(by)
      ? { interruptedBy: by, ...(reason?.terminal === false ? { noTerminal: true as const } : {}) }
      : {}),
    committed: memory.commitAccepted,
    ...(inDoubt ? { commitInDoubt: true as const } : {}),
    ...(steps.every((s) => s.bound.command !== "commit") ? { commitless: true as const } : {}),
    ...(!memory.commitAccepted && memory.reversed !== undefined ? { reversed: memory.reversed } : {}),
    ...(memory.reverseInDoubt !== undefined ? { reverseInDoubt: memory.reverseInDoubt } : {}),
    verified: checked.verified,
    ...(checked.verified
      ? checked.filter !== undefined
        ? { verifiedFilter: checked.filter }
        : {}
      : { unverified: checked.why }),
    durationMs,
    ...(failure ? { message: failure.message } : {}),
    ...(memory.split ? { split: memory.split } : {}),
    ...(opts.abort ? { aborted: true } : {}),
    ...(keptOff ? { undoKeptOff: true as const } : {}),
    ...(stopUndoless ? { undoByHand: stopUndoless.id } : handedTo !== undefined ? { undoByHand: handedTo } : {}),
    // stopped at --to before the runbook's end: the cutover goes on later (--resume)
    ...(!opts.abort && to < steps.length - 1 ? { to: steps[to]!.id } : {}),
    ...(cutoverStart.runsBefore
      ? { cutover: { runs: cutoverStart.runsBefore + 1, durationMs: ended - cutoverStart.at } }
      : {}),
    ...(window
      ? {
          window: {
            durationMs: window.durationMs ?? window.measuredMs,
            open: window.open,
            ...(windowBoundOf(window).atLeast ? { atLeast: true } : {}),
            ...(window.unseenMs !== undefined ? { unseenMs: window.unseenMs } : {}),
            ...(window.closedBy === "undone" ? { undone: true as const } : {}),
            ...(window.closedBy === "by-hand" ? { byHand: true as const } : {}),
            ...(before.length ? { earlier: earlierWindows(before) } : {}),
          },
        }
      : {}),
    ...(writes ? { writes } : {}),
  });
  // one bound for every notification still queued (src/plugin/deliveries.ts); Ctrl-C ends it at once
  const drained = await notifier.drain({
    ...(opts.drainSignal ? { signal: opts.drainSignal } : {}),
    ...(opts.onDrain ? { waiting: opts.onDrain } : {}),
  });
  await emitter.settle();
  // the fleet's own keep-alive connections (an injected fleet is its owner's to close)
  if (!opts.fleet) await fleet.close().catch(() => undefined);
  if (!opts.verifier) await verifier?.close().catch(() => undefined);
  return {
    outcome,
    exitCode,
    commitSent: memory.commitSent,
    committed: memory.commitAccepted,
    ...(inDoubt ? { commitInDoubt: true as const } : {}),
    ...(!memory.commitAccepted && memory.reversed !== undefined ? { reversed: memory.reversed } : {}),
    verified: checked.verified,
    ...(checked.verified
      ? checked.filter !== undefined
        ? { verifiedFilter: checked.filter }
        : {}
      : { unverified: checked.why }),
    ...(memory.split ? { split: memory.split } : {}),
    ...(opts.abort ? { aborted: true } : {}),
    ...(stopUndoless ? { stopUndoless: stopUndoless.id } : {}),
    ...(handedTo !== undefined && !opts.abort ? { handedToPerson: handedTo } : {}),
    ...(wentPast.length ? { wentPast } : {}),
    ...(keptOff ? { writesKeptOff: keptOff } : {}),
    ...(run.window.stoppedInCommit() ? { stoppedInCommit: run.window.stoppedInCommit()! } : {}),
    durationMs,
    notifications: drained,
    ...(failure
      ? {
          ...(failure.interlock && refused() ? { refused: refused() } : {}),
          message: failure.message,
          failedStep: failure.step,
          ...(failure.hint ? { hint: failure.hint } : {}),
          ...(failure.hintBeforeResume ? { hintBeforeResume: true as const } : {}),
          ...(failure.resumeFlags ? { resumeFlags: failure.resumeFlags } : {}),
          ...(failure.againArgs ? { againArgs: failure.againArgs } : {}),
          ...(failure.place ? { place: failure.place } : {}),
          ...(failure.rerunWith ? { rerunWith: failure.rerunWith } : {}),
        }
      : {}),
  };
}

/** What sending commit does, said where --step asks about it. */
function pointOfNoReturn(instances: number): string {
  return `this step sends commit to ${instances === 1 ? "1 instance" : `${instances} instances`}; once sent nothing is undone: the write stop's undo is disarmed, and the application writes to the destination once it takes writes (canWrite true on the first process, or every instance COMMITTED)`;
}

function skipReason(
  s: PlannedStep,
  o: { from: number; to: number; resume: ResumePlan | undefined },
): string | undefined {
  const done = o.resume?.done.get(s.index);
  if (done) return done;
  if (s.index < o.from) return "before --from";
  if (s.index > o.to) return "after --to";
  if (s.step.when === false) return "when: false";
  return undefined;
}

/** For the record: who runs this (an OS user may have no name in a container: then the environment's, else the uid). */
function whoRuns(): { user: string; host: string; pid: number } {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = undefined;
  }
  user ||= process.env.USER ?? process.env.USERNAME ?? process.env.LOGNAME ?? `uid ${process.getuid?.() ?? "?"}`;
  return { user, host: hostname(), pid: process.pid };
}
