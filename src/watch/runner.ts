/**
 * Is the runner alive, and if not, what did it leave? `syncbook watch` says it at once when the
 * cutover is unfinished and its runner is gone (the folder's lock names a process that no longer
 * runs on this host, or no lock is held while the last run never said its end) or silent (no
 * journal line for longer than its current step's time limit allows), with the state it left in
 * words ("writes stopped 3m 05s ago, commit not sent") and the command that continues it.
 *
 * A lock held from another host cannot be checked from here (src/journal/lock.ts): only silence
 * tells then. A pid is taken at its word (pids are reused: a live one is "running").
 */
import { instanceLabel } from "../events.js";
import type { CutoverModel } from "../model/contract.js";
import { COMMITTED_OFF_RECORD_WORDS, CUT_OFF_WORDS, commitInDoubtFor, cutOff, syncCommits } from "../model/fold.js";
import {
  lastAttempted,
  resumedRun,
  resumeFirst,
  runAgainAfterCommit,
  runAgainFirst,
  stopAgainBefore,
  stoppedInCommitAhead,
} from "../model/again.js";
import { shellCommand } from "../text.js";
import { traitsOf } from "../steps/index.js";
import { stoppedInCommitWords } from "../fleet/index.js";
import { formatDuration } from "../runbook/duration.js";
import {
  COMMIT_IN_DOUBT_WORDS,
  WRITES_LEFT_WORDS,
  writesOnInDoubtWords,
  reverseInDoubtWords,
  runEndWords,
  windowLength,
} from "../writes-words.js";
import {
  CALLED_OFF_RESUME,
  nextAfterFailedUndo,
  PASSED_OVER_AGAIN,
  passedOverWhy,
  RUNBOOK_CHANGED_NOTE,
  runbookArg,
  STOPPED_IN_COMMIT_AHEAD,
  RESTOP_DOES,
  abortDoes,
  STOPPED_IN_COMMIT_NOTE,
  STOPPED_IN_COMMIT_RESTART,
  STOPPED_IN_COMMIT_RESUME,
  varArgs,
  type CutoverValuesKnown,
} from "../next-run.js";
import { MASK } from "../redact.js";
import type { PassedOverRefusal } from "../run/earlier.js";
import type { LockHolder } from "./journal-feed.js";

/** A step without a time limit of its own: the schema's `defaults.timeout` (30m). */
const DEFAULT_STEP_LIMIT_MS = 30 * 60_000;
/** Time past a step's limit before its runner counts as silent: its own failure takes a moment to journal. */
const SILENCE_GRACE_MS = 30_000;

export type RunnerState = "no-run" | "running" | "silent" | "dead" | "finished";

export interface RunnerVerdict {
  state: RunnerState;
  /** True when people must be told: the cutover is unfinished and no runner is seen working on it. */
  alarm: boolean;
  /** One line for the page's top and the notifiers: what happened. */
  headline: string;
  /** What it left: writes, the commit, the step. */
  left: string[];
  /**
   * The sync that runs now is not committed and a commit sent may hold: the model's
   * `cutover.commitInDoubt`, or, its runner gone, a commit request still unanswered (the page's
   * cutover line says COMMIT IN DOUBT by it).
   */
  commitInDoubt?: true;
  /** The command that helps next, when there is one. */
  next?: string;
  /** Its last journal line (epoch ms). */
  lastLineAt?: number;
}

export interface RunnerInput {
  model: CutoverModel;
  lock: LockHolder | undefined;
  now: number;
  host: string;
  isAlive: (pid: number) => boolean;
  /** How to name the runbook in the command (its path, when watch was given it). */
  runbook?: string;
  /** The `--journal-dir` watch was given with it, as typed: the command repeats it (src/next-run.ts `runbookArgs`). */
  journalDir?: string;
  /** That runbook's hash as it reads now: another than its journal's makes `--resume` refuse it. */
  runbookHash?: string;
  /**
   * The `--var` values of a `--from` of that runbook, changed since, under `--allow-changed-runbook`,
   * which checks none against the cutover's (src/run/earlier.ts `cutoverVarsFrom`, given the runbook
   * by `syncbook watch`): every value the steps from `from` on read, as the cutover had it, a secret
   * one masked.
   */
  goOnVars?: (known: Required<CutoverValuesKnown>, fromId: string) => { vars: string[]; note?: string };
  /**
   * A commit of another journal of the folder that may still take effect, or a journal that cannot
   * be judged, in `status`'s words (src/run/earlier.ts `earlierCommitWords`), read by the journal
   * feed while no runner is seen working: `status` names the way on.
   */
  earlierCommit?: string;
  /**
   * The `--resume` of the journal it would continue is refused on that journal alone: a start,
   * commit or reverse sent by an earlier run is in doubt ahead of where it goes on (the journal
   * feed's `resumeRefusedOwn`, src/journal/reconcile.ts `sentAhead`): `status` names the way on.
   */
  resumeRefused?: true;
  /**
   * The newest journal `--resume` passes over ended refused before its run sent anything, its way
   * on that run's own command again (the journal feed's `passedOver`, src/run/earlier.ts
   * `passedOverRefusal`, the rule of `status`'s `passedOverAgain`): a refused `--new-cutover` is
   * another cutover than the one watched.
   */
  passedOver?: PassedOverRefusal;
}

export function runnerVerdict(i: RunnerInput): RunnerVerdict {
  const m = i.model;
  const run = m.runs.at(-1);
  if (!run)
    return { state: "no-run", alarm: false, headline: "no run of this cutover yet: waiting for its journal", left: [] };
  const lastLineAt = run.lastAt;
  // what it left, with whether its runner is gone: an unanswered commit of a live runner is on its way
  // an earlier cutover's commit that may still hold, where this cutover sent none: a --resume that
  // sends a commit and an --abort that turns writes on are refused while it may; status names the
  // command that finishes it (a review: the page offered the refused --resume)
  // (none of its own sent: a commit fanned out or requested since the last reverse, as status's
  // `commitSent` judges it)
  const own = syncCommits(m);
  const earlier =
    i.earlierCommit !== undefined &&
    !m.cutover.committed &&
    own.commits.length === 0 &&
    own.requested === undefined &&
    !m.cutover.reverseInDoubt
      ? i.earlierCommit
      : undefined;
  const left = (gone: boolean): Pick<RunnerVerdict, "left" | "commitInDoubt"> => ({
    left: [...stateLeft(m, i.now, gone), ...(earlier !== undefined && gone ? [earlier] : [])],
    ...(commitInDoubtNow(m, gone) ? { commitInDoubt: true as const } : {}),
  });
  // the runbook as a command names it: with the --journal-dir its journal is in, else the default
  // folder is read, and the journal's interlocks count nothing (src/next-run.ts `runbookArgs`)
  // (watch given the runbook: its own --journal-dir, the folder it reads; given the journal folder:
  // the one its last run was given, as journaled)
  const file = i.runbook ?? m.cutover.file;
  const journalDir = i.runbook !== undefined ? i.journalDir : m.cutover.journalDir;
  const rb = file === undefined ? "<runbook.yaml>" : runbookArg({ file, journalDir });
  // the way on carries the --var values its runs decided their `when`s with (a run with others is
  // refused), and says when the runbook is no longer the text its journal ran
  const vars = varArgs([...m.whenVars, ...m.givenVars]);
  const changed = i.runbookHash !== undefined && m.cutover.hash !== undefined && i.runbookHash !== m.cutover.hash;
  // --resume passes over the journals whose runs neither sent nor ran a hook (`acted`): it takes
  // the journal of the last run that acted, written last with its last run's text; after a --from
  // run of an edited runbook that sent nothing, that is the text before the edit
  const acted = m.runs.filter((r) => r.acted === true).at(-1);
  const resumedHash =
    (acted?.journal !== undefined ? m.runs.filter((r) => r.journal === acted.journal).at(-1)?.hash : undefined) ??
    m.cutover.hash;
  // and the failure whose hint and flags its way on needs is that journal's last run's, as status
  // reads it, not a later run's it passes over (a review: after a --from x --to x that sent
  // nothing, the page offered a plain --resume, refused again)
  const resumed = resumedRun(m.runs);
  const resumeChanged = i.runbookHash !== undefined && resumedHash !== undefined && i.runbookHash !== resumedHash;
  // a --var given with a secret, which a way on that checks no value against the cutover's cannot
  // name without the runbook (watching a journal folder): said to add (a review: left out, the run
  // read the runbook's default, another fleet)
  const secretLeftOut = (of: CutoverModel = m): string[] => {
    const left = (of.cutoverValues?.given ?? []).filter((n) => String(of.cutoverValues?.vars[n] ?? "").includes(MASK));
    return left.length
      ? [
          `add ${left.map((n) => `--var ${n}`).join(", ")} as its runs were given ${left.length === 1 ? "it" : "them"}: ${left.length === 1 ? "it holds" : "they hold"} a secret, not shown`,
        ]
      : [];
  };
  const resumeWith = (flags: readonly string[], at?: string, ...why: string[]): string => {
    // --allow-changed-runbook checks no value against the cutover's: the values the steps from
    // there read, as the cutover had them, as status names them (a review: a secret --var left
    // out, and the run read its default, another verifier)
    const kept =
      at !== undefined && flags.includes("--allow-changed-runbook") && i.goOnVars && m.cutoverValues
        ? i.goOnVars({ decidedVars: m.whenVars, cutoverValues: m.cutoverValues }, at)
        : undefined;
    const notes = [
      ...(resumeChanged ? [RUNBOOK_CHANGED_NOTE] : []),
      ...why,
      ...(kept?.note !== undefined ? [kept.note] : []),
      ...(!kept && flags.includes("--allow-changed-runbook") ? secretLeftOut() : []),
    ];
    return `syncbook run ${rb} ${["--resume", ...flags].join(" ")}${kept ? varArgs(kept.vars) : vars}${notes.length ? `   (${notes.join("; ")})` : ""}`;
  };
  // the writes-on hook refused: an instance stopped during the commit (src/steps/hook.ts). A plain
  // --resume is refused again: the forced one, for one who knows, and what to do instead
  const sic = m.window?.stoppedInCommit;
  // a step that asks the interlock still ahead of a plain --resume (the one rule, as status says it)
  const refusesAhead = stoppedInCommitAhead(m.steps, traitsOf, m.cutoverValues?.vars);
  const sicRefused = sic !== undefined && refusesAhead && m.decisions.some((d) => d.check === "stopped-in-commit");
  const first = resumeFirst(m.steps, resumed);
  // the restart is a new cutover, which checks no value against the cutover's: every one its steps
  // read from the first, as the cutover had it, a secret one masked (`goOnVars`); watching a journal
  // folder without the runbook, a secret one it cannot name is said (a review: left out, the new
  // cutover read the runbook's default, another fleet)
  const restartKept =
    sicRefused && i.goOnVars && m.cutoverValues && m.steps[0]
      ? i.goOnVars({ decidedVars: m.whenVars, cutoverValues: m.cutoverValues }, m.steps[0].id)
      : undefined;
  const restartNotes = [
    `${STOPPED_IN_COMMIT_NOTE}: ${STOPPED_IN_COMMIT_RESTART.does}`,
    ...(restartKept?.note !== undefined ? [restartKept.note] : []),
    ...(restartKept ? [] : secretLeftOut()),
  ];
  // the failed run's own command again, where its failure says so (a fleet-identity refusal before
  // it acted): as its end and status name it, not the --resume that refuses a corrected list or
  // passes that run over (a review)
  const ownAgain = runAgainFirst(m.steps, m.runs);
  const againNotes = ownAgain
    ? [
        "the failed run's command again, as its end named it: a plain --resume would refuse a corrected `instances:` list, or pass that run over",
        ...secretLeftOut(),
        `first, as step ${ownAgain.number} ${ownAgain.id}'s failure said: ${ownAgain.hint}`,
      ]
    : [];
  const resume = sicRefused
    ? `syncbook run ${rb} ${STOPPED_IN_COMMIT_RESTART.args}${restartKept ? varArgs(restartKept.vars) : vars}   (${restartNotes.join("; ")}); or syncbook run ${rb} ${STOPPED_IN_COMMIT_RESUME.args}${vars}   (${[...(resumeChanged ? [RUNBOOK_CHANGED_NOTE] : []), STOPPED_IN_COMMIT_RESUME.does].join("; ")})`
    : ownAgain
      ? `syncbook run ${rb}${ownAgain.args.length ? ` ${shellCommand(ownAgain.args)}` : ""}${vars}   (${againNotes.join("; ")})`
      : resumeWith(
          // the flags its failure needs once its hint is done (a runbook edit: --allow-changed-runbook)
          first?.flags ?? [],
          first?.id,
          ...(sic !== undefined && refusesAhead ? [STOPPED_IN_COMMIT_AHEAD] : []),
          // what to do first, as the failed step said (status says it too): a plain --resume meets the
          // same failure (a trial: a verify refused the earlier cutover's check, and the page offered it)
          ...(first ? [`first, as step ${first.number} ${first.id}'s failure said: ${first.hint}`] : []),
        );
  // with the runbook changed, --allow-changed-runbook: the values it reads named, as the cutover had
  // them; the journal's given ones alone left out a secret one and an old default, which the flag
  // read at the runbook's value now, another fleet (an outside review)
  const from = (step: { id: string; index: number }, why: string): string => {
    const kept =
      changed && i.goOnVars && m.cutoverValues
        ? i.goOnVars({ decidedVars: m.whenVars, cutoverValues: m.cutoverValues }, step.id)
        : undefined;
    const tail = kept ? varArgs(kept.vars) : vars;
    const notes = [why, ...(kept?.note !== undefined ? [kept.note] : [])];
    return `syncbook run ${rb} --from ${step.id}${changed ? " --allow-changed-runbook" : ""}${tail}   (${notes.join("; ")})`;
  };
  // an undo of a write stop that failed, or was cut off with its runner, none after it, and no
  // commit: --abort retries it, as the run's end and status offer it first (`nextAfterFailedUndo`);
  // the page offered --resume alone, which stops writes again and goes on to commit (an
  // adversarial run: two ways on, contradicting each other, in the bad hours)
  const stopHook = m.hooks
    .filter((h) => {
      const kind = m.steps.find((s) => s.index === h.index)?.kind;
      return kind !== undefined && traitsOf(kind).opensWriteStop;
    })
    .at(-1);
  const undoOwed =
    stopHook?.undo === true && stopHook.ok !== true && !m.cutover.committed && !m.cutover.commitInDoubt
      ? nextAfterFailedUndo({ number: stopHook.index + 1, id: stopHook.id })
      : undefined;
  // the last run's commit refused for want of a write stop (its `writes-stopped` interlock, a
  // stopWrites check that said writes flow): --resume meets the same refusal; the stop again, or
  // called off, as the run's end and status offer them (the page offered a plain --resume)
  const refusal = m.decisions.filter((d) => d.run === run.n && d.kind === "interlock" && !d.ok).at(-1);
  const restop =
    refusal?.check === "writes-stopped" && refusal.index !== undefined
      ? stopAgainBefore(m.steps, traitsOf, refusal.index)
      : undefined;
  const noCommit = !m.cutover.committed && !m.cutover.commitInDoubt && m.cutover.commitAccepted !== true;
  // (not where a commit may be on the fleet: a split commit's way on is its own, as the run's end
  // says it; a review followed both offers there into refusals)
  const restopFirst =
    restop && noCommit
      ? `syncbook run ${rb} --from ${restop.id}${vars}   (${RESTOP_DOES}); or syncbook run ${rb} --abort${vars}   (${abortDoes(undefined)})`
      : undefined;
  // a --resume refused on its journal alone, whatever the fleet shows (a start, commit or reverse
  // in doubt ahead of where it goes on, carried by a --from run that stopped before it: the rule
  // the run's end and status ask; a review: the page offered that --resume after a --to run)
  const statusFirst =
    earlier !== undefined
      ? `syncbook status ${rb}   (it names the way on while an earlier cutover's commit may hold, as said above: a --resume that sends a commit, or an --abort that turns writes back on, is refused meanwhile)`
      : i.resumeRefused
        ? `syncbook status ${rb}   (a --resume is refused on its journal, whatever the fleet shows: a start, commit or reverse sent by an earlier run is in doubt ahead of where it goes on; status says the refusal and the way on)`
        : undefined;
  // the newest run --resume passes over refused before it sent anything, its way on its own command
  // again (`passedOverRefusal`, status's `passedOverAgain`): that command, with that run's --var
  // values, not the --resume of the cutover watched here (an outside review: after a refused
  // --new-cutover, another cutover, the page offered this one's --resume, and pasted, it committed
  // this one); and --abort beside it where no commit was sent, as status offers them: after a
  // refused --resume and a failed undo of a write stop, before the rest
  const po = i.passedOver;
  // --abort beside it where no commit of the sync that runs now was sent, refused or not, as status
  // has it (its `commitSent`; an outside review: after a commit every instance refused, the page
  // offered an --abort status did not)
  const sentNow = syncCommits(m);
  const abortBeside =
    noCommit && sentNow.commits.length === 0 && sentNow.requested === undefined && !m.cutover.reverseInDoubt;
  const passedOverFirst = po
    ? `syncbook run ${rb}${po.again.args.length ? ` ${shellCommand(po.again.args)}` : ""}${varArgs([...po.model.whenVars, ...po.model.givenVars])}   (${[
        `${PASSED_OVER_AGAIN}: ${passedOverWhy(po.file)}`,
        ...secretLeftOut(po.model),
        `first, as step ${po.again.number} ${po.again.id}'s failure said: ${po.again.hint}`,
      ].join("; ")})${abortBeside ? `; or syncbook run ${rb} --abort${vars}   (${abortDoes(undefined)})` : ""}`
    : undefined;
  const abortFirst =
    statusFirst ??
    (undoOwed
      ? `syncbook run ${rb} --abort${vars}   (${undoOwed.runs[0]!.does}; or --resume: ${undoOwed.runs[1]!.does})`
      : (passedOverFirst ?? restopFirst));
  if (run.finishedAt !== undefined) {
    const how =
      run.ended === "called-off"
        ? runEndWords(run)
        : `ended ${runEndWords(run)}${run.to !== undefined ? ` at --to ${run.to}, before the runbook's end` : ""}`;
    const alarm = m.writesLeft !== undefined && !m.cutover.committed;
    const again = runAgainAfterCommit(m, traitsOf);
    return {
      state: "finished",
      alarm,
      headline: `run ${run.n} ${how}${run.message ? `: ${run.message}` : ""}`,
      ...left(true),
      // a run stopped at --to left its cutover open: --resume goes on with the next step, as it
      // does after a run that failed, before its commit or after it (as status offers it); a step
      // after the commit that failed (continueOnError) runs again in the cutover with --from
      // called off (every undo --abort owed ran): --resume goes on with it later, as the abort's end says
      ...(run.ended === "called-off"
        ? { next: statusFirst ?? passedOverFirst ?? resumeWith([], undefined, CALLED_OFF_RESUME) }
        : run.outcome !== "ok" || run.to !== undefined
          ? { next: abortFirst ?? resume }
          : passedOverFirst !== undefined
            ? { next: passedOverFirst }
            : again
              ? // by its id, as the run's end names it: the journal's number is the old text's where the
                // runbook was edited since (an outside review: a step removed before it)
                { next: from(again, `step ${again.id} failed, and the run went on past it`) }
              : {}),
      lastLineAt,
    };
  }
  const ago = formatDuration(Math.max(0, i.now - lastLineAt));
  const holder = i.lock;
  const sameHost = holder !== undefined && holder.host === i.host;
  const dead = holder === undefined || (sameHost && !i.isAlive(holder.pid));
  if (dead) {
    const who = holder
      ? `its process (pid ${holder.pid} on ${holder.host}) no longer runs`
      : "no process holds the journal folder's lock";
    // a --from run that continued its committed cutover after it finished ok (a step after the
    // commit run again) and died before it sent anything or ran a hook: --resume passes its journal
    // over (src/journal/read.ts) for that finished run, which has nothing to resume; the same
    // --from runs it again. Any other dead run: --resume (an unfinished run before it goes on)
    const before = m.runs.at(-2);
    const afterFinished =
      before?.outcome === "ok" && before.committed === true && before.to === undefined && !before.aborted;
    const again =
      run.continues && !run.acted && afterFinished
        ? m.steps.find((s) => s.attempts.some((a) => a.run === run.n))
        : undefined;
    return {
      state: "dead",
      alarm: true,
      headline: `THE RUNNER IS GONE: ${who}; its last journal line was ${ago} ago, and the cutover is unfinished`,
      ...left(true),
      next: again
        ? from(again, "the run that died sent nothing and ran no hook: --resume would pass it over")
        : (abortFirst ?? resume),
      lastLineAt,
    };
  }
  const step = m.current !== undefined ? m.steps.find((s) => s.index === m.current) : undefined;
  const limit = step?.timeoutMs ?? DEFAULT_STEP_LIMIT_MS;
  if (i.now - lastLineAt > limit + SILENCE_GRACE_MS)
    return {
      state: "silent",
      alarm: true,
      headline: `THE RUNNER IS SILENT: no journal line for ${ago}, longer than ${step ? `step ${step.index + 1} ${step.id}'s` : "a step's"} time limit of ${formatDuration(limit)}${sameHost ? "" : ` (its lock is held on ${holder.host}: this machine cannot check that process)`}`,
      ...left(true),
      next: statusFirst ?? `syncbook status ${rb}   (then, if its process is gone: syncbook run ${rb} --resume${vars})`,
      lastLineAt,
    };
  return {
    state: "running",
    alarm: false,
    headline: `run ${run.n} running (pid ${holder.pid} on ${holder.host}${sameHost ? "" : ", another host: seen by its journal lines"}); last journal line ${ago} ago`,
    ...left(false),
    lastLineAt,
  };
}

/** Not committed, and a commit sent may hold (src/model/fold.ts `commitInDoubtFor`). */
const commitInDoubtNow = (m: CutoverModel, runnerGone: boolean): boolean =>
  commitInDoubtFor(m, runnerGone) !== undefined;

/**
 * The state a run leaves, in words: the application's writes, the commit, the step it was in.
 * `runnerGone`: its runner ended, died or is silent (an unanswered commit request is then no
 * longer on its way).
 */
export function stateLeft(m: CutoverModel, now: number, runnerGone = true): string[] {
  const out: string[] = [];
  const w = m.window;
  if (m.cutover.committed) {
    out.push(m.cutover.committedOffRecord ? COMMITTED_OFF_RECORD_WORDS : "committed");
    // taken by part of the fleet: what every commit of this sync reached, not only the last (a split
    // commit finished with --from commit --only <the rest> reached all: a trial saw "1 of 3");
    // the others' commit, if any, was not this cutover's (an earlier cutover's, or by hand)
    // (and every instance that accepted a request: a split's first fan-out journals no commit.sent,
    // and its completion by a later run reached only the rest: a review)
    const { commits } = syncCommits(m);
    const to = new Set([...commits.flatMap((c) => c.instances), ...(m.cutover.commitAcceptedBy ?? [])]);
    const c = commits.at(-1);
    const rest = m.instances.map(instanceLabel).filter((l) => !to.has(l));
    if (c && rest.length)
      out.push(
        `commit sent to ${m.instances.length - rest.length} of ${m.instances.length} instances (${formatDuration(Math.max(0, now - c.at))} ago); not by this cutover to ${rest.join(", ")}`,
      );
  }
  // after the commit, a reverse on its way: which sync runs only the fleet can say (status says the same)
  const doubt = m.cutover.reverseInDoubt;
  if (doubt) out.push(`${reverseInDoubtWords(doubt.id)} (sent to ${doubt.instances.join(", ")})`);
  if (w?.open && w.closedBy === undefined) {
    const at = w.openedAt ?? w.measuredFrom;
    out.push(`writes stopped ${windowLength(Math.max(0, now - at), { atLeast: w.openedAt === undefined })} ago`);
  } else if (m.writesLeft) out.push(WRITES_LEFT_WORDS[m.writesLeft]);
  else if (runnerGone && w?.writesOnAt === undefined) {
    // a writes-on hook (as its run said, `steps[].writesOn`) that started and did not succeed, its
    // runner gone: writes may be back on, as status says it (the page could not tell it from another hook)
    const on = m.hooks.filter((h) => !h.undo && m.steps.find((s) => s.index === h.index)?.writesOn === true).at(-1);
    if (on && on.ok !== true)
      out.push(
        `writes ${writesOnInDoubtWords({ step: on.index + 1, id: on.id, ...(on.ok === false ? { failed: true as const } : {}) })}`,
      );
  }
  if (!m.cutover.committed) {
    // after a reverse, the sync that runs now is the one it started: the commits before it were the other's
    if (m.cutover.reversed) out.push(`reversed (step ${m.cutover.reversed.id})`);
    // requests journaled after the last fan-out that ended: a commit on its way, or whose answers were lost
    const r = syncCommits(m).requested;
    const all = m.instances.length;
    const doubt = m.cutover.commitInDoubt;
    if (r) {
      const sent = `commit sent${r.instances.length < all ? ` to ${r.instances.length} of ${all} instances` : ""} ${formatDuration(Math.max(0, now - r.at))} ago`;
      // its run ended: the fan-out did too, and what its answers said is known
      const ended = m.runs.find((x) => x.n === r.run)?.finishedAt !== undefined;
      const answers = Object.entries(r.answers);
      const of = (...which: string[]): string[] => answers.filter(([, a]) => which.includes(a)).map(([i]) => i);
      out.push(
        of("unknown", "pending").length === 0
          ? `${sent}, refused by every instance it reached: it took no effect`
          : !ended && !runnerGone
            ? `${sent}, on its way: ${of("pending").join(", ") || "no instance"} not answered yet (commit blocks until every instance has it)${of("unknown").length ? `; ${of("unknown").join(", ")} gave no usable answer` : ""}`
            : ended
              ? `${sent}, in doubt: ${of("unknown", "pending").join(", ")} gave no usable answer and no read has shown it taking effect`
              : `${sent}, its fan-out never ended (its runner died with it on its way): it may have taken effect`,
      );
    } else if (doubt) out.push(`${COMMIT_IN_DOUBT_WORDS} (a run of this cutover said so at its end)`);
    // a fan-out that ended is a commit taken (`cutover.committed`): none of this sync's, then
    else out.push("commit not sent");
  }
  // an instance stopped during the commit: the migration must be restarted to be verified
  if (w?.stoppedInCommit) out.push(stoppedInCommitWords(w.stoppedInCommit));
  const step = m.current !== undefined ? m.steps.find((s) => s.index === m.current) : undefined;
  if (step) out.push(`in step ${step.index + 1} ${step.id} (${step.kind})`);
  else {
    // of the runs --resume goes on from, as status says it (not a later run it passes over)
    const last = lastAttempted(m.steps, resumedRun(m.runs));
    // a step its run ended in without its end is no running step (it said "running" after an --abort)
    if (last) out.push(`last step: ${last.index + 1} ${last.id}, ${cutOff(m, last) ? CUT_OFF_WORDS : last.outcome}`);
  }
  return out;
}
