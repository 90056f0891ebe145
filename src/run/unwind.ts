/**
 * The undo: before commit, a failed or interrupted run undoes every hook that ran, last first;
 * and what is said of writes after a forced exit, a journal that failed, or `--abort`.
 */
import { opensWriteStop, type RunContext, type RunMemory } from "../steps/index.js";
import type { UndoStack } from "../plugin/index.js";
import { hookWatch } from "../steps/hook.js";
import { withProcessWatch } from "../plugin/process.js";
import type { PlannedStep } from "./plan.js";

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
): string[] {
  const lines: string[] = [];
  const open = undo.unfinished();
  const name = (i: number): string => `step ${i + 1} "${steps[i]?.id ?? "?"}"`;
  for (const u of open)
    lines.push(
      `the undo of ${name(u.entry.step.index)} (${u.entry.use}) ${u.running ? "was running and was killed with its processes" : "did not run"}`,
    );
  const stops = steps.filter((s) => s.bound.opensWriteStop).map((s) => s.index);
  const stopOpen = open.find((u) => opensWriteStop(u.entry.step.kind));
  if (memory.commitSent)
    lines.push("writes: commit was sent, so nothing is undone: writes stay as they are (stopped, if a stopWrites ran)");
  else if (stopOpen)
    lines.push(
      `writes may still be stopped, or partly back on: the undo of ${name(stopOpen.entry.step.index)} did not finish. Check the application's writers, then turn them back on by hand or run again with --resume`,
    );
  else if (stops.some((i) => undoneOk.has(i)))
    lines.push(`writes are back on: the undo of ${name(stops.find((i) => undoneOk.has(i))!)} finished`);
  else if (memory.writesStopped) lines.push("writes are stopped (a stopWrites step ran) and no undo of it was pending");
  else lines.push("writes: no stopWrites step ran in this run, so none was stopped by it");
  if (open.length === 0) lines.unshift("no undo was left to run");
  return lines;
}

/**
 * After the journal failed before commit, the undo ran without a line in the journal (the disk is
 * full): the journal still says writes are stopped. Say where writes are, and the way on that
 * does not trust the journal's word on it.
 */
export function writesAfterJournalFailure(
  failure: { message: string; hint?: string },
  memory: RunMemory,
  undoneOk: ReadonlySet<number>,
  steps: readonly PlannedStep[],
): { message: string; hint?: string; rerunWith?: string } {
  if (memory.commitSent || !memory.writesStopped) return failure;
  const stops = steps.filter((s) => s.bound.opensWriteStop);
  const undone = stops.find((s) => undoneOk.has(s.index));
  const name = (s: PlannedStep): string => `step ${s.index + 1} "${s.id}"`;
  if (undone)
    return {
      message: `${failure.message}; writes are back on: the undo of ${name(undone)} ran, but the journal could not record it and still says writes are stopped`,
      hint: `Do not --resume this journal: it would go on as if writes were stopped. Free disk space, then run again with --from ${undone.id} (not --resume): writes are stopped again before commit.`,
      rerunWith: `--from ${undone.id}`,
    };
  const stop = stops.at(-1);
  return {
    message: `${failure.message}; application writes are STILL STOPPED: ${stop ? `the undo of ${name(stop)}` : "the undo"} did not run or failed`,
    hint: "Turn the application's writes back on by hand now, or free disk space and run again with --resume (the journal says writes are stopped, which is true).",
  };
}

export async function unwind(run: RunContext, signal: AbortSignal, undoneOk: Set<number>): Promise<void> {
  const { undo } = run.plugins;
  if (run.memory.commitSent) {
    run.say("decision", {
      kind: "undo",
      ok: true,
      reason: run.memory.split
        ? `${run.memory.split}: nothing is undone, writes stay stopped (the instances that have the commit must not see writes); complete it with --resume`
        : run.memory.commitAccepted
          ? "commit was sent: nothing is undone"
          : "commit was sent and no instance accepted it (nothing took effect): nothing is undone, writes stay stopped until you resume or undo by hand",
    });
    return;
  }
  if (undo.size === 0) return;
  run.say("decision", {
    kind: "undo",
    ok: true,
    reason: `the run stopped before commit: undoing ${undo.size} hook(s), last first`,
  });
  // each undo's processes are marked and journaled: a resume after a kill waits out one still running
  const watch = hookWatch(run);
  await withProcessWatch(watch, () =>
    undo.unwind(
      {
        started: (e) =>
          watch.begin(
            {
              index: e.step.index,
              id: e.step.id,
              use: e.use,
              undo: true,
              ...(e.command !== undefined ? { command: e.command } : {}),
            },
            run.say,
          ),
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
    ),
  );
}

/** What `--abort` did, for the run's end: which undos ran, which failed, and what that means for writes. */
export function abortMessage(
  owed: readonly { index: number; id: string; kind: string }[],
  failed: readonly { index: number; id: string; kind: string }[],
  steps: readonly PlannedStep[],
): string {
  const name = (st: { index: number; id: string }): string => `step ${st.index + 1} "${st.id}"`;
  if (owed.length === 0)
    return "aborted by the operator (--abort): the journal shows no hook whose undo was still owed: nothing was undone, nothing was sent";
  const stop = owed.find((st) => opensWriteStop(st.kind));
  const stopFailed = failed.find((st) => opensWriteStop(st.kind));
  const writes = stopFailed
    ? `writes may still be stopped: the undo of ${name(stopFailed)} failed`
    : stop
      ? `writes are back on (the undo of ${name(stop)} succeeded)`
      : steps.some((st) => st.bound.opensWriteStop)
        ? "no stopWrites was open"
        : "the runbook stops no writes";
  return failed.length
    ? `aborted by the operator (--abort), but ${failed.length} of ${owed.length} undo(s) failed (${failed.map(name).join(", ")}): ${writes}`
    : `aborted by the operator (--abort): ${owed.length} undo(s) ran (${owed.map(name).join(", ")}): ${writes}; nothing was sent to the service`;
}
