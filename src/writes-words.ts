/**
 * The one wording of application writes left stopped when a run ends, for every output that says
 * it: the notifiers' messages (src/plugin/events.ts), the run's summary (src/ui/format.ts). Said
 * in words, never only by a colour or an exit code: on the bridge call at 3 a.m. the application
 * being down is the news. Which state holds is folded from the events (src/fleet/window.ts
 * `writesLeft`): `stopped` when the write-stop window is open at the end (a failed undo, an
 * interrupt after the stop, a split commit); `may-be-stopped` when a stop hook itself failed
 * part-way and no undo of it succeeded (what it did is not known).
 */
import type { RunEventMap } from "./events.js";
import { formatDuration } from "./runbook/duration.js";

export type WritesLeft = "stopped" | "may-be-stopped";

/**
 * A write-stop window's length in words, a bound said as one and rounded outwards, the one rule of
 * every reader (the run's lines and end, its notifications, the report, \`status\`, the watch page,
 * which inlines this function with its own \`format\`): "at least 12s" when it opened before what
 * the events show (\`atLeast\`: its stop hook's success unknown; less any time no runner read the
 * fleet before its end was seen), "at most 4m 31s" when its end was seen only after such a time
 * (\`unseenMs\`), else the length.
 */
export function windowLength(
  ms: number,
  bound: { atLeast?: boolean | undefined; unseenMs?: number | undefined },
  format: (ms: number, round?: "nearest" | "up" | "down") => string = formatDuration,
): string {
  if (bound.atLeast) return "at least " + format(Math.max(0, ms - (bound.unseenMs ?? 0)), "down");
  if (bound.unseenMs !== undefined) return "at most " + format(ms, "up");
  return format(ms);
}

/**
 * The bound a measured window's length is (`WriteStopWindow`, src/fleet/window.ts), for
 * `windowLength`: the least when its start is before the events seen or its end was handed to a
 * person (`by-hand`: writes stay stopped until they turn them back on, which no event shows); the
 * most when its end was seen only after a time no runner read the fleet (`unseenMs`).
 */
export function windowBoundOf(w: {
  openedAt?: number | undefined;
  closedBy?: string | undefined;
  unseenMs?: number | undefined;
}): {
  atLeast: boolean;
  unseenMs: number | undefined;
} {
  return { atLeast: w.openedAt === undefined || w.closedBy === "by-hand", unseenMs: w.unseenMs };
}

/**
 * The write-stop window at a run's end in words: "writes stopped 110ms (and 9.7s in an earlier
 * window)", "writes stopped at most 4m 30s (no runner read the fleet for 3m 26s of it)". The earlier windows of the cutover (a stop undone, then stopped again) were the
 * application's downtime too: the last window alone undersold it.
 */
export function windowLengthWords(
  w: NonNullable<RunEventMap["run.finished"]["window"]>,
  openWords = " so far",
): string {
  const e = w.earlier;
  // the least they lasted where one of them is a bound (src/fleet/window.ts `earlierWindows`)
  const earlier = e
    ? ` (and ${e.atLeast ? "at least " : ""}${formatDuration(e.durationMs, e.atLeast ? "down" : "nearest")} in ${e.count === 1 ? "an earlier window" : `${e.count} earlier windows`})`
    : "";
  // its end seen only after a span no runner read the fleet in: the most it lasted, not its length
  const unseen = w.unseenMs !== undefined ? ` (no runner read the fleet for ${formatDuration(w.unseenMs)} of it)` : "";
  // closed by the undo: back on the source, which a bare length would let a reader take for the cutover's end
  const undone = w.undone ? ", until the undo turned them back on" : "";
  // handed over: stopped until a person turns them back on, which no event shows
  const byHand = w.byHand ? ", then handed to a person to turn back on by hand" : "";
  return `writes stopped ${windowLength(w.durationMs, w)}${w.open ? openWords : ""}${undone}${byHand}${unseen}${earlier}`;
}

/**
 * A writesOn hook that started and did not succeed (cut off with its run, or failed part-way):
 * writes "may be back on", what it did is not known. `status` and the watch page say it alike (an
 * adversarial run: a forced resume killed inside it, the application writing, and status said
 * stopped; the page could not tell the writes-on hook from another).
 */
export const writesOnInDoubtWords = (h: { step: number; id: string; failed?: true | undefined }): string =>
  `may be back on: the writesOn hook of step ${h.step} ${h.id} ${h.failed ? "failed part-way" : "started and its run ended before it did"} (what it did is not known: see the application)`;

/** The headline words: "writes are STILL STOPPED", "writes may be stopped". */
export const WRITES_LEFT_WORDS: Readonly<Record<WritesLeft, string>> = {
  stopped: "writes are STILL STOPPED",
  "may-be-stopped": "writes may be stopped",
};

/** One sentence, for a notification or a run's last line. */
export function writesLeftSentence(
  w: WritesLeft,
  committed: boolean,
  commitInDoubt = false,
  /** An `--abort` could not undo this write stop (its step id: no `undo:`): by hand, not `--abort` again. */
  undoByHand?: string,
  /**
   * A rehearsal's (its job summary): no way on of a real run (`syncbook status`, `--resume`,
   * `--abort`), which pasted act on the runbook's real fleet (an outside review); its writes are
   * the simulator's, unless `--keep-hooks` ran the runbook's own stop hook.
   */
  rehearsal = false,
): string {
  const way = (real: string, rehearsed = ""): string => (rehearsal ? rehearsed : real);
  // never "turned back on" after a commit: writes back on the source then are lost to the
  // destination (an adversarial run: a committed run's notification said so)
  return w === "stopped"
    ? undoByHand !== undefined && !committed && !commitInDoubt
      ? `application ${WRITES_LEFT_WORDS.stopped}: the runbook gives step ${undoByHand} no \`undo:\`, ${way("so --abort cannot undo it: turn writes back on by hand, then --resume goes on with the cutover (it stops them again before its commit)", `so nothing undoes it${REHEARSAL_WRITERS}`)}`
      : commitInDoubt && !committed
        ? `application ${WRITES_LEFT_WORDS.stopped}: a commit was sent and may hold, so writes must not go back on the source; ${way("the fleet tells whether it took effect (syncbook status, or --resume, which reads it first)", `the rehearsal's verdict says whether it took effect${REHEARSAL_WRITERS}`)}`
        : committed
          ? `application ${WRITES_LEFT_WORDS.stopped}: the application cannot write until it writes to the destination once it takes writes (committed: never back on the source)`
          : `application ${WRITES_LEFT_WORDS.stopped}: the application cannot write until the cutover completes, or the stop is undone while no commit may have been sent${way(" (--abort judges that)", REHEARSAL_WRITERS)}`
    : undoByHand !== undefined && !committed
      ? `application ${WRITES_LEFT_WORDS["may-be-stopped"]}: an --abort handed the write stop of step ${undoByHand} to a person to turn back on by hand (the runbook gives it no \`undo:\`), and no event shows they did; check the application's writers${way(": --resume stops them again before its commit")}`
      : `application ${WRITES_LEFT_WORDS["may-be-stopped"]}: the stop hook failed part-way and no undo of it succeeded; check the application's writers`;
}

/** Whose writes a rehearsal stopped: the simulator's, unless `--keep-hooks` ran the runbook's own stop hook. */
const REHEARSAL_WRITERS =
  " (a rehearsal's writes are the simulator's, unless --keep-hooks ran the runbook's own stop hook: then check the real application's writers)";

/**
 * What ended the write-stop window (`window.closed`'s reason), in the words every output uses:
 * the first process's canWrite (the cutover page: the others' "is not valid"), every instance
 * COMMITTED (no first process declared), the stop's undo, or an `--abort`'s hand-off of a stop
 * with no `undo:` to a person.
 */
export function windowEndWords(end: RunEventMap["window.closed"]["reason"] | undefined): string {
  return end === "committed"
    ? "COMMITTED on every instance"
    : end === "undone"
      ? "writes back on by the undo"
      : end === "by-hand"
        ? "handed to a person by --abort: its step has no `undo:`"
        : "canWrite on the first process";
}

/**
 * An `--abort` run's end in one headline (the job summary, the report's title and banner): called
 * off, every owed undo done; nothing undone, since the fleet ruled the undo of the write stop out
 * (a commit took effect or may: writes stay stopped on purpose); or an undo that failed or could
 * not run. A review found "an undo failed" said of the second, where writes must stay stopped.
 */
export function abortWords(e: Pick<RunEventMap["run.finished"], "exitCode" | "undoKeptOff">): string {
  return e.exitCode === 0
    ? "ABORTED"
    : e.undoKeptOff
      ? "ABORTED, NOTHING UNDONE: WRITES STAY STOPPED"
      : "ABORTED, NOT EVERYTHING UNDONE";
}

/**
 * How a run of the cutover ended, in the words of every line that names its runs (the report's
 * runs, the watch page's runner): "called off (--abort)"; an `--abort` that did not undo
 * everything in its own headline (`abortWords`: the runs said "ended failed" of it, as if a step
 * had failed); else its outcome.
 */
export function runEndWords(r: {
  ended?: string | undefined;
  outcome: string;
  abort?: true | undefined;
  exitCode?: number | undefined;
  undoKeptOff?: true | undefined;
}): string {
  if (r.ended === "called-off") return "called off (--abort)";
  if (r.abort && r.outcome === "failed")
    return abortWords({ exitCode: r.exitCode ?? 1, ...(r.undoKeptOff ? { undoKeptOff: true } : {}) });
  return r.outcome;
}

/**
 * An `--abort` that called the cutover off: every undo it owed ran (exit 0) and writes are not left
 * stopped (`writesOpen`: the window still open at its end, as a journal of an earlier version
 * shows after an abort that could not undo a write stop with no `undo:`). The one rule of the read
 * model's runs (`ended: "called-off"`: the report, the watch page, `status`) and the JUnit file.
 */
export function calledOff(
  e: Pick<RunEventMap["run.finished"], "aborted" | "exitCode" | "undoKeptOff" | "writes">,
  writesOpen: boolean,
): boolean {
  return e.aborted === true && e.exitCode === 0 && e.undoKeptOff !== true && e.writes !== "stopped" && !writesOpen;
}

/** A commit sent that may hold, in the words every reader says it with (`commitWords`, the report, the watch page). */
export const COMMIT_IN_DOUBT_WORDS = "commit in doubt: sent, not known to have taken effect";

/**
 * Whether this run's cutover committed, in words: "committed", "commit in doubt" (sent, and no
 * answer or read tells whether it took effect: "not committed" would send writes back to the
 * source), "not committed", "not committed since the reverse" (the sync that runs now), or, for a
 * runbook with no commit step, "no commit in this runbook" (its fleet may be COMMITTED by another
 * runbook or by hand: "not committed" would say otherwise). A reverse in doubt is said after it:
 * "committed" alone would tell the bridge the destination takes writes, which a reverse that
 * reached the fleet has ended.
 */
export function commitWords(
  e: Pick<RunEventMap["run.finished"], "committed" | "commitInDoubt" | "commitless" | "reversed" | "reverseInDoubt">,
): string {
  // a runbook with no commit reversing a fleet another committed: said as such, never "not committed"
  if (e.reverseInDoubt !== undefined)
    return `${e.committed ? "committed; " : e.commitless ? "no commit in this runbook; " : ""}${reverseInDoubtWords(e.reverseInDoubt)}`;
  if (e.committed) return "committed";
  if (e.commitInDoubt) return COMMIT_IN_DOUBT_WORDS;
  // the cutover committed before the reverse: "not committed" alone would say it never did
  if (e.reversed !== undefined) return `not committed since the reverse (step ${e.reversed})`;
  return e.commitless ? "no commit in this runbook" : "not committed";
}

/**
 * A reverse whose step did not end ok and that may have reached the fleet, in the words every reader
 * says it with (`status` from the journal, the watch page and the report from the read model): the
 * commit before it no longer tells which sync runs.
 */
export function reverseInDoubtWords(step: string): string {
  // a reverse is only sent to a COMMITTED fleet: "after it was committed" is true for every reader,
  // a run that committed or one that reverses a fleet another committed ("since" said nothing there)
  return `a reverse (step ${step}) may have reached the fleet after it was committed (its step did not end ok): the sync may run the other way now, its destination taking writes only after its own commit`;
}
