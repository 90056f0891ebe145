/**
 * The undo: before commit, a failed or interrupted run undoes every hook that ran, last first;
 * and what is said of writes after a forced exit, a journal that failed, or `--abort`.
 */
import {
  byHand,
  opensWriteStop,
  realRunOr,
  writesOnVerdict,
  type RunContext,
  type RunMemory,
  type WritesOnVerdict,
} from "../steps/index.js";
import type { UndoStack } from "../plugin/index.js";
import type { Emit } from "../events.js";
import { hookWatch } from "../steps/hook.js";
import { withProcessWatch } from "../plugin/process.js";
import type { PlannedStep } from "./plan.js";
import { runbookArg } from "../next-run.js";
import { shellCommand } from "../text.js";

/**
 * A rehearsal's forced exit, in place of a run's way on for writes: its `--abort` and `--resume`
 * have no journal, and pasted act on the runbook's real fleet. Its writes are the simulator's,
 * unless it ran the runbook's own hooks, whose stop acted on the real application.
 */
const REHEARSAL_WRITES =
  "These writes are the rehearsal's simulated application's, stopped with it, unless the rehearsal ran the runbook's own hooks (--keep-hooks): then check the application's writers, and turn them back on by hand where its stop left them off. Then rehearse again.";

/** Before commit, a failed or interrupted run undoes every hook that ran, last first. */
/**
 * What a forced exit leaves behind: the undos that did not finish (the running one is killed)
 * and what that means for application writes. Steps are numbered from 1, as in the task list.
 */
export function forcedReport(
  undo: UndoStack,
  memory: RunMemory,
  undoneOk: ReadonlySet<number>,
  steps: readonly PlannedStep[],
  /**
   * The run's mode, and the runbook as `syncbook run` names it with the run's `--var` values
   * (`runTarget`): a rehearsal's lines name no real run's way on (`REHEARSAL_WRITES`).
   */
  way: Pick<RunContext, "mode" | "target">,
  /** The steps whose undo started in this run (`unwind`'s): one started, not running and not ok failed. */
  undoStarted: ReadonlySet<number> = new Set(),
): string[] {
  const lines: string[] = [];
  const target = way.target;
  const open = undo.unfinished();
  const name = (i: number): string => `step ${i + 1} "${steps[i]?.id ?? "?"}"`;
  for (const u of open)
    lines.push(
      `the undo of ${name(u.entry.step.index)} (${u.entry.use}) ${u.running ? "was running and was killed with its processes" : "did not run"}`,
    );
  const stops = steps.filter((s) => s.bound.opensWriteStop).map((s) => s.index);
  const stopOpen = open.find((u) => opensWriteStop(u.entry.step.kind));
  const failed = stops.find((i) => undoStarted.has(i) && !undoneOk.has(i));
  if (memory.commitSent)
    // with the command that goes on (an adversarial run: a forced exit after the commit printed none)
    lines.push(
      `writes: commit was sent, so nothing is undone: writes stay as they are (stopped, if a stopWrites ran). ${realRunOr(way, `syncbook run ${target} --resume goes on with the cutover: it reads the fleet and never sends the commit twice`, REHEARSAL_WRITES)}`,
    );
  else if (stopOpen?.running)
    // its undo's start is journaled: --resume runs the stop again, whatever the writers are now
    lines.push(
      `writes may still be stopped, or partly back on: the undo of ${name(stopOpen.entry.step.index)} was killed part-way. ${realRunOr(way, `Check the application's writers, then run syncbook run ${target} --abort (it runs that undo again) or syncbook run ${target} --resume (it runs the stop again before its commit), or turn them back on by hand`, REHEARSAL_WRITES)}`,
    );
  else if (failed !== undefined)
    // its undo ran and failed (a later hook's undo was then cut off; another entry of the same stop,
    // a resume's owed one, may still wait): its start is journaled, so --resume runs the stop again,
    // and --abort runs that undo again; the writers are as the failed undo left them (it said "no
    // undo of it was pending")
    lines.push(
      `writes may still be stopped, or partly back on: the undo of ${name(failed)} failed. ${realRunOr(way, `Check the application's writers, then run syncbook run ${target} --abort (it runs that undo again) or syncbook run ${target} --resume (it runs the stop again before its commit), or turn them back on by hand`, REHEARSAL_WRITES)}`,
    );
  else if (stopOpen && !memory.writesStopped)
    // the stop hook failed, or its writes were not seen stopped: the journal does not count it, and
    // --resume runs it again (a second review: this was said "still stopped")
    lines.push(
      `writes may be stopped: the stop of ${name(stopOpen.entry.step.index)} did not hold (it failed, or its writes were not seen stopped), and its undo did not run. ${realRunOr(way, "Check the application's writers; --abort runs the undos still owed, --resume runs the stop again before its commit", REHEARSAL_WRITES)}`,
    );
  else if (stopOpen)
    // its undo never started: the journal counts the stop, and a --resume would too (an outside
    // review turned writes on by hand as this line said, and the --resume committed while they flowed)
    lines.push(
      `writes are still stopped: the undo of ${name(stopOpen.entry.step.index)} did not run. ${realRunOr(way, `--abort runs the undos still owed (writes back on, on record); --resume goes on with the cutover. ${byHandThenFrom(target, stopOpen.entry.step)}`, REHEARSAL_WRITES)}`,
    );
  else if (stops.some((i) => undoneOk.has(i)))
    lines.push(`writes are back on: the undo of ${name(stops.find((i) => undoneOk.has(i))!)} finished`);
  else if (memory.writesStopped) lines.push("writes are stopped (a stopWrites step ran) and no undo of it was pending");
  else lines.push("writes: no stopWrites step ran in this run, so none was stopped by it");
  if (open.length === 0) lines.unshift("no undo was left to run");
  return lines;
}

/**
 * After the journal failed, what is said of writes and the one way on, the same in the run's
 * message, its hint and the CLI's last line (issue 42: every hint says the same thing):
 * - no undo ran since (none was owed, or commit was sent): the journal holds everything its run
 *   did, and a request whose line it could not write never left: `--resume` once space is freed;
 * - an undo ran (or started) that the journal could not record: the journal was marked untrusted
 *   first (`distrusted`: its witness emptied), `--resume` refuses it, and the way on is a new run
 *   `--from` the write stop, which stops writes again before commit.
 */
export function writesAfterJournalFailure(
  failure: { message: string; hint?: string; step?: string },
  memory: RunMemory,
  undo: { ok: ReadonlySet<number>; started: ReadonlySet<number>; distrusted: boolean },
  steps: readonly PlannedStep[],
  /** The runbook as a command names it (src/next-run.ts `runbookArg`). */
  named: string,
  /**
   * The runbook as `syncbook run` names it, with the cutover's `--var` values (`runTarget`): a run
   * without them may stop writes somewhere else (an outside review: 3,005,067 writes lost).
   */
  target: string,
  /** The write stop in force: the open window's (`WriteStopWindow.openedBy`), if known. */
  inForce?: { id: string },
): { message: string; hint?: string; rerunWith?: string } {
  const status = `syncbook status ${named}`;
  const name = (s: PlannedStep): string => `step ${s.index + 1} "${s.id}"`;
  const resume =
    "Free disk space (or fix the journal folder), then run again with --resume: the journal holds every command this run sent (a request whose line it could not write never left).";
  // an undo started after the journal failed, which could not be marked untrusted: it still says
  // writes are stopped where they may be back on (never "no undo ran": a --resume would count the stop)
  const unrecorded = steps.filter((s) => undo.started.has(s.index));
  if (!undo.distrusted && unrecorded.length > 0 && !memory.commitSent) {
    const stop = unrecorded.find((s) => s.bound.opensWriteStop) ?? lastStopBefore(steps, failure.step);
    return {
      message: `${failure.message}; application writes may be back on: the undo of ${unrecorded.map(name).join(", ")} started, and the journal could record it neither as done nor as untrusted: it still says writes are stopped`,
      hint: `Do not --resume from that journal (it would count a write stop that may have been undone). Free disk space, check the application's writes and the fleet (${status}), then run again: ${stop ? `syncbook run ${target} ${shellCommand(["--from", stop.id])} (it stops writes again before commit)` : `syncbook run ${target} --from <the step to go on with>`}.`,
      ...(stop ? { rerunWith: shellCommand(["--from", stop.id]) } : {}),
    };
  }
  if (!undo.distrusted) {
    if (memory.commitSent || !memory.writesStopped) return { message: failure.message, hint: resume };
    return {
      message: `${failure.message}; application writes are STILL STOPPED (no undo ran, and the journal says so)`,
      hint: stillStoppedHint(target, inForce ?? lastStopBefore(steps, failure.step)),
    };
  }
  const started = steps.filter((s) => undo.started.has(s.index));
  const stop = started.find((s) => s.bound.opensWriteStop) ?? started[0];
  const from = stop ? `--from ${stop.id}` : undefined;
  const untrusted = `the journal could not record ${started.length === 1 ? "it" : "them"} and was marked untrusted first (--resume refuses it)`;
  const wayOn = from
    ? `Free disk space, check the application's writes and the fleet (${status}), then run again with ${from} (not --resume): ${stop?.bound.opensWriteStop ? "writes are stopped again before commit" : "it runs that step again"}.`
    : `Free disk space, check the application's writes and the fleet (${status}), then start the run again from the step you need with --from (not --resume).`;
  const stopDone = started.find((s) => s.bound.opensWriteStop && undo.ok.has(s.index));
  const stopFailed = started.find((s) => s.bound.opensWriteStop && !undo.ok.has(s.index));
  const writes = stopFailed
    ? `application writes may be STILL STOPPED, or partly back on: the undo of ${name(stopFailed)} failed`
    : stopDone
      ? `writes are back on: the undo of ${name(stopDone)} ran`
      : `the undo of ${started.map(name).join(", ")} ran`;
  return {
    message: `${failure.message}; ${writes}, but ${untrusted}`,
    hint: stopFailed
      ? `Check the application's writers and turn them back on by hand if they are off. ${wayOn}`
      : wayOn,
    ...(from ? { rerunWith: from } : {}),
  };
}

/** Of a run that failed at `failedStep`, the last step before it (or at it) that stops writes. */
function lastStopBefore(steps: readonly PlannedStep[], failedStep: string | undefined): PlannedStep | undefined {
  const at = steps.findIndex((s) => s.id === failedStep);
  return steps.filter((s) => s.bound.opensWriteStop && (at < 0 || s.index <= at)).at(-1);
}

/**
 * Writes turned back on by hand where the journal still says a write stop holds (it could not
 * record an undo): a later `--resume` would count that stop and commit while writes flow, so the
 * way on after it is a new run from the stop, which stops them again (an earlier hint said only
 * "or turn the application's writes back on by hand").
 */
export function byHandThenFrom(target: string, stop: { id: string } | undefined): string {
  const from = `syncbook run ${target} ${stop ? shellCommand(["--from", stop.id]) : "--from <the write stop's step>"}`;
  return `If writes cannot wait for that, turn them back on by hand; the journal will still say they are stopped, so go on later only with ${from} (it stops them again before its commit), never --resume, which would commit while they flow.`;
}

/**
 * After the journal failed with no undo run since, writes stopped as it says: `--resume` once
 * space is freed, and by hand only with a run `--from` the stop (`byHandThenFrom`). A rehearsal
 * journals nothing: a run's alone.
 */
function stillStoppedHint(target: string, stop: { id: string } | undefined): string {
  return `Free disk space, then run again with --resume (the journal says writes are stopped, which is true): syncbook run ${target} --resume. ${byHandThenFrom(target, stop)}`;
}

/** Why an unwind did not turn writes back on: what the fleet showed, and the way on. */
export interface WritesKeptOff {
  reason: string;
  hint: string;
  /** A commit took effect on some instance: the cutover happened. */
  committed: boolean;
}

/**
 * The run's journal as the unwind needs it: whether it failed, and how to mark it untrusted
 * before an undo it cannot record runs (src/journal/journal.ts `distrust`).
 */
export interface UnwindJournal {
  failed(): boolean;
  /** Marks the journal untrusted; returns why it could not (undefined: marked). */
  distrust?(): string | undefined;
}

/** Said when the journal cannot record the undos and was marked untrusted first (a rehearsal journals nothing). */
const JOURNAL_DISTRUSTED =
  "the journal cannot record the undos: it is marked untrusted (its witness emptied), so --resume will refuse it; the way on is a new run --from the write stop";

export async function unwind(
  run: RunContext,
  signal: AbortSignal,
  undoneOk: Set<number>,
  journal: UnwindJournal = { failed: () => false },
  /** Filled with the steps whose undo started (the run's own set: a forced exit reads it, `forcedReport`). */
  started: Set<number> = new Set<number>(),
): Promise<{ keptOff?: WritesKeptOff; distrusted?: boolean; started: Set<number> }> {
  const { undo } = run.plugins;
  if (run.memory.commitSent) {
    run.say("decision", {
      kind: "undo",
      ok: true,
      // a rehearsal's way on is its run's end's (rehearse again): it has no journal to resume or
      // abort, and its fleet, the simulator, is read by no `status`
      reason: run.memory.split
        ? `${run.memory.split}: nothing is undone, writes stay stopped (the instances that have the commit must not see writes)${realRunOr(run, "; complete it with --resume", "")}`
        : run.memory.commitAccepted
          ? "commit was sent: nothing is undone"
          : run.memory.commitRefused
            ? `commit was sent and every instance refused it: nothing is undone here, writes stay stopped${realRunOr(run, " until you resume, or --abort (it judges whether the write stop's undo may run)", "")}`
            : // never "undo by hand": writes back on the source while the commit may hold are lost to
              // the destination (an adversarial run: the job summary said "must not", this said "may")
              `commit was sent and no instance said it accepted it (some gave no usable answer: one may be holding it): nothing is undone, and writes must stay stopped, since back on the source they are lost if the commit holds; the fleet tells whether it took effect (${realRunOr(run, "syncbook status, or --resume, which reads it first", "the rehearsal's verdict below says whether it did")})`,
    });
    return { started };
  }
  if (undo.size === 0) return { started };
  // an undo of a write stop turns application writes back on: never while a commit may have
  // reached any instance, which the fleet shows even when this cutover's journal does not (a
  // commit sent by hand, or by another runner): read it first (src/steps/kit/writes-on.ts)
  const stops = undo.unfinished().filter((u) => opensWriteStop(u.entry.step.kind));
  if (stops.length) {
    const keptOff = await writesMayGoBackOn(run, signal, stops[0]!.entry.step);
    if (keptOff) return { keptOff, started };
  }
  // an undo the journal cannot record (it failed: a full disk) leaves a journal that says writes
  // are stopped while they are back on: it is marked untrusted first, with no disk space needed;
  // a journal that cannot be marked either keeps its word true instead: nothing is undone
  let distrusted = false;
  if (journal.failed()) {
    const why = journal.distrust ? journal.distrust() : "no way to mark it";
    if (why !== undefined) {
      // the cutover's values (this process's, and the earlier ones its steps do not read): a run
      // without them may stop writes somewhere else
      const target = run.target;
      const keptOff: WritesKeptOff = {
        committed: false,
        reason: `the undos were not run, so application writes stay STOPPED: the journal cannot record them, and it could not be marked untrusted either (${why}): an undo it does not know of would leave it saying writes are stopped while they are on`,
        hint: stillStoppedHint(target, stops.at(-1)!.entry.step),
      };
      run.say("decision", { kind: "undo", ok: false, check: "journal", reason: keptOff.reason });
      return { keptOff, started };
    }
    distrusted = true;
    run.say("decision", {
      kind: "undo",
      ok: true,
      check: "journal",
      reason: JOURNAL_DISTRUSTED,
    });
  }
  run.say("decision", {
    kind: "undo",
    ok: true,
    reason: `the run stopped before commit: undoing ${undo.size} hook(s), last first`,
  });
  // each undo's processes are marked and journaled: a resume after a kill waits out one still running.
  // Each undo its own watch: with one for all, a process an undo started late (from a timer, after
  // its call settled) carried the next undo's token and was journaled as its (an outside review)
  let watch = hookWatch(run);
  await undo.unwind(
    {
      started: (e) => {
        started.add(e.step.index);
        watch = hookWatch(run);
        watch.begin(
          {
            index: e.step.index,
            id: e.step.id,
            use: e.use,
            undo: true,
            ...(e.command !== undefined ? { command: e.command } : {}),
          },
          run.say,
        );
        // the journal failed after the check above (a background flush, this undo's own line): the
        // undo may turn writes on that it cannot record, so it is marked untrusted now, before the
        // undo acts (a second review: its start unrecorded, --resume counted the stop)
        if (!distrusted && journal.failed()) distrusted = journal.distrust?.() === undefined;
      },
      // the watch `started` began for this undo, held by the call and every process it starts
      around: (_e, call) => withProcessWatch(watch, call),
      finished: (e, o) => {
        if (o.ok) undoneOk.add(e.step.index);
        run.say("hook.finished", {
          index: e.step.index,
          id: e.step.id,
          use: e.use,
          undo: true,
          ok: o.ok,
          durationMs: o.durationMs,
          ...(o.ok ? {} : { error: o.error }),
        });
      },
    },
    signal,
  );
  return { started, distrusted };
}

/** What is said when the fleet rules out the undo of a write stop: what it showed, what that leaves, the way on. */
/**
 * Whether application writes may go back on the source, read from the fleet before an undo turns
 * them on or an `--abort` hands a write stop to a person to do it (`handOver`): never while a
 * commit may have reached any instance, which the fleet shows even when this cutover's journal
 * does not (a commit sent by hand, or by another runner), nor while an earlier cutover's commit
 * may still take effect. The verdict is journaled (a `decision` of check `fleet-state`); where it
 * rules them out, what keeps them off.
 */
export async function writesMayGoBackOn(
  run: RunContext,
  signal: AbortSignal,
  stop: { index: number; id: string },
): Promise<WritesKeptOff | undefined> {
  // an earlier cutover's commit that may still take effect: no read of the fleet rules it out
  const earlier = run.earlierCommit ? await run.earlierCommit() : undefined;
  const verdict =
    earlier !== undefined
      ? { ok: false as const, reason: earlier, committed: false, earlier: true as const }
      : await writesOnVerdict(run, signal);
  if (!verdict.ok) {
    const keptOff = writesKeptOff(run, verdict, stop);
    run.say("decision", { kind: "undo", ok: false, check: "fleet-state", reason: keptOff.reason });
    return keptOff;
  }
  run.say("decision", {
    kind: "undo",
    ok: true,
    check: "fleet-state",
    reason: `no commit has taken effect (${verdict.detail}): application writes may go back on`,
  });
  return undefined;
}

/**
 * What keeps writes off, and the way on: a run's commands, or a rehearsal's simulator (`byHand`),
 * whose `run --abort` or `--resume` pasted acts on the runbook's real fleet, and whose `status`
 * reads it.
 */
function writesKeptOff(
  run: RunContext,
  verdict: Extract<WritesOnVerdict, { ok: false }> & { earlier?: true },
  stop: { index: number; id: string },
): WritesKeptOff {
  // status reads the cutover's values from its journal; a run takes them as typed: with the
  // runbook alone, the --abort and --resume offered of a --var fleet were refused (an outside review)
  const named = runbookArg(run.loaded);
  const target = run.target;
  const step = `step ${stop.index + 1} "${stop.id}"`;
  // an earlier cutover's commit, which no fleet read can rule out while it is held in its round
  if (verdict.earlier)
    return {
      committed: false,
      reason: `the undo of ${step} was not run, so application writes stay STOPPED: ${verdict.reason}`,
      hint: byHand(
        run,
        "fleet",
        `Do not turn the source's writes back on while that commit may take effect. See the fleet: syncbook status ${named}. Then: syncbook run ${target} --abort: it reads that cutover's journal again, and refused while the commit may still take effect it names the command that finishes it (its instances that did not take it); if the sync was set back by hand since, no instance holds it: turn the application's writes back on by hand.`,
      ),
    };
  if (verdict.committed)
    return {
      committed: true,
      reason: `the undo of ${step} was not run, so application writes stay STOPPED: a commit has taken effect on the fleet (${verdict.reason}), sent outside this run (by hand, or by another runner): writes turned back on at the source now would be lost`,
      hint: byHand(
        run,
        "fleet",
        `Do not turn the source's writes back on. See where the fleet is (syncbook status ${named}); once the destination takes writes (canWrite true on the first process, which the runbook marks startedFirst: another process's canWrite is not valid; else every instance COMMITTED), move the application to the destination.`,
      ),
    };
  return {
    committed: false,
    reason: `the undo of ${step} was not run, so application writes stay STOPPED: the fleet could not be read as a whole before commit (${verdict.reason}), and a commit may have reached it outside this run`,
    hint: byHand(
      run,
      "fleet",
      `Once every instance answers (syncbook status ${named}), and if none is COMMITTING or COMMITTED, turn writes back on with: syncbook run ${target} --abort (it reads the fleet again first); or go on with the cutover: syncbook run ${target} --resume.`,
    ),
  };
}

/** A hook an `--abort` owes an undo its step does not give (no runbook `undo:`). */
export interface Undoless {
  index: number;
  id: string;
  kind: string;
}

/**
 * `--abort` hands the undo of each hook whose step gives no `undo:` to a person, on record: a
 * `decision` of check `by-hand` that every later run reads (src/journal/state.ts `byHand`), said
 * only once journaled (`record` throws where the journal cannot take it). Where it cannot be
 * journaled (a full disk), nothing is handed over: the operator is told to leave it as it is and
 * abort again once the journal can be written, never "do it by hand" (a later run would not know,
 * and count a write stop turned off by hand). Returns the hooks handed over.
 */
export function handOver<T extends Undoless>(record: Emit, tell: Emit, undoless: readonly T[]): T[] {
  const handed: T[] = [];
  for (const st of undoless) {
    const stop = opensWriteStop(st.kind);
    const what = `step ${st.index + 1} "${st.id}" has no \`undo:\` in the runbook, so it cannot be undone from here`;
    const payload = { index: st.index, id: st.id, kind: "undo" as const, ok: false };
    try {
      record("decision", {
        ...payload,
        check: "by-hand",
        reason: `${what}: undo what it did by hand${stop ? " (writes stay stopped until then)" : ""}`,
      });
      handed.push(st);
    } catch {
      tell("decision", {
        ...payload,
        check: "not-handed-over",
        reason: `${what}, and the journal could not record its hand-off to a person: leave what it did as it is${stop ? " (writes stay stopped)" : ""}, and once the journal can be written (free space, or --journal-dir) run --abort again, which hands it over on record`,
      });
    }
  }
  return handed;
}

/**
 * What `--abort` did, for the run's end: which undos ran, which failed, which hooks owed one have
 * none in the runbook (`undoless`, counted in `failed` too), and what that means for writes.
 */
export function abortMessage(
  owed: readonly { index: number; id: string; kind: string }[],
  failed: readonly { index: number; id: string; kind: string }[],
  steps: readonly PlannedStep[],
  undoless: readonly { index: number; id: string; kind: string }[] = [],
  /** Of `undoless`, those handed to a person on record (`handOver`); by default all of them. */
  handed: readonly { index: number }[] = undoless,
): string {
  const name = (st: { index: number; id: string }): string => `step ${st.index + 1} "${st.id}"`;
  const names = (list: readonly { index: number; id: string }[]): string => list.map(name).join(", ");
  if (owed.length === 0 && undoless.length === 0)
    return "aborted by the operator (--abort): the journal shows no hook whose undo was still owed: nothing was undone, nothing was sent";
  const stop = owed.find((st) => opensWriteStop(st.kind));
  const stopFailed = failed.find((st) => opensWriteStop(st.kind) && !undoless.includes(st));
  const stopUndoless = undoless.filter((st) => opensWriteStop(st.kind));
  const writes = stopUndoless.some((st) => !handed.some((h) => h.index === st.index))
    ? "writes stay stopped: the journal could not record their hand-off to a person, so leave them stopped and run --abort again once it can be written"
    : stopUndoless.length
      ? "writes stay stopped until a person turns them back on: do it by hand"
      : stopFailed
        ? `writes may still be stopped: the undo of ${name(stopFailed)} failed`
        : stop
          ? `writes are back on (the undo of ${name(stop)} succeeded)`
          : steps.some((st) => st.bound.opensWriteStop)
            ? "no stopWrites was open"
            : "the runbook stops no writes";
  const undoFailed = failed.filter((st) => !undoless.includes(st));
  const why = [
    ...(undoFailed.length ? [`${undoFailed.length} of ${owed.length} undo(s) failed (${names(undoFailed)})`] : []),
    ...(undoless.length
      ? [
          `${names(undoless)} ${undoless.length === 1 ? "has" : "have"} no \`undo:\` in the runbook, so nothing undid it`,
        ]
      : []),
  ];
  return why.length
    ? `aborted by the operator (--abort), but ${why.join("; ")}: ${writes}`
    : `aborted by the operator (--abort): ${owed.length} undo(s) ran (${names(owed)}): ${writes}; nothing was sent to the service`;
}
