/**
 * What a journal says this cutover has established, for a run that continues it: `--resume`,
 * a `--from` run finishing a command one instance refused (`--from commit --only shard-c`), and
 * `--abort`. One reading, so the three never disagree on whether commit may have been sent or
 * whether writes are still stopped.
 */
import { dirname, resolve } from "node:path";
import { instanceLabel, type CarriedCommand, type RunEvent, type ServiceRefusal } from "../events.js";
import { createFleet } from "../fleet/index.js";
import { instancesOf, type Runbook, type Step } from "../runbook/types.js";
import {
  DistrustedJournal,
  earlierHookCalls,
  folderJournals,
  instanceKey,
  isNothingToResume,
  journalCutover,
  journalEventRestorer,
  lastReverse,
  readJournal,
  refusalsCounted,
  resumeStep,
  runbookJournal,
  sentAhead,
  type HookRun,
  type JournalState,
  type JournalStep,
  type RunbookIdentity,
  type RunbookJournal,
  type UnjudgedJournal,
} from "../journal/index.js";
import { isObject } from "../journal/format.js";
import { durationOr, redactedVar, type LoadedRunbook } from "../runbook/index.js";
import { varNamesIn, whenVariable } from "../runbook/interpolate.js";
import { MASK } from "../redact.js";
import { plural, shellCommand } from "../text.js";
import {
  decidedVars,
  runbookArg,
  runTarget,
  wayOnTarget,
  wayOnVars,
  wayOnVarsKept,
  MASKED_VAR_NOTE,
  MASKED_VAR_WORDS,
  ofRunbook,
  varText,
  type CutoverValuesKnown,
} from "../next-run.js";
import { bindStep, traitsOf, UNDO_TIMEOUT_MS } from "../steps/index.js";
import { CutoverFold } from "../model/fold.js";
import type { CutoverModel } from "../model/contract.js";
import { runAgainFirst } from "../model/again.js";
import {
  earlierHooksGate,
  waitOutEarlierHooks,
  type EarlierHooksGate,
  type EarlierHooksVerdict,
  type OrphanProbe,
} from "./orphans.js";
import { afterLastCommit, planSteps, startlessFrom, writeStopBefore, type PlannedStep } from "./plan.js";
import { runDefaults, type ResumePlan } from "./runner.js";
import { errorMessage, ExitCode, UserError } from "../errors.js";

/**
 * How the folder check's refusals end: true of the run it refuses, not of a run whose end quotes
 * what its `--resume` would meet (`resumeRefused`), which did send (a review).
 */
const NOTHING_SENT = "; nothing was sent";

/** Past a hook process's time limit: the grace a runner gives it between SIGTERM and SIGKILL, and a margin. */
const ORPHAN_GRACE_MS = 10_000;

/**
 * The journal a continuing run reads (src/journal/runbook-journal.ts: the one named with
 * `--resume <file>`, else the folder's), saying which newer ones it passed over; its warnings
 * said; thrown when it must not be acted on. `events`: its events as the strict read met them
 * (samples restored), the history a resume or an abort goes on from.
 */
export async function openEarlierJournal(
  dir: string,
  opts: { say: (s: string) => void; file?: string; loaded?: LoadedRunbook },
): Promise<{ file: string; state: JournalState; events: RunEvent[] }> {
  // the journal read once: what the strict reader judged is the history the run goes on from
  // (its report, its window, the notifications it owes, the spans it exports), event for event
  const events: RunEvent[] = [];
  const restore = journalEventRestorer();
  const found = await runbookJournal(dir, traitsOf, {
    ...(opts.file !== undefined ? { file: opts.file } : {}),
    onEvent: (e) => events.push(restore(e)),
  });
  for (const f of found.skipped)
    opts.say(
      `resume: passing over ${f}: its run sent nothing and ran no hook (resume it by name with --resume <file>)`,
    );
  for (const w of found.state?.warnings ?? []) opts.say(`journal: ${w}`);
  if (found.refused !== undefined && opts.loaded) throw wayOnFromRefused(found, opts.loaded);
  if (found.refused !== undefined || !found.file || !found.state) throw found.refused;
  if (found.witnessWarning) opts.say(`journal: ${found.witnessWarning}`);
  return { file: found.file, state: found.state, events };
}

/**
 * Why a continuing run must not act on the runbook's journal (`runbookJournal`'s `refused`), with
 * the commands that help next where the journal's reader could not name them: one its own run
 * marked untrusted (`untrustedRefusal`), one that cannot be trusted (`distrustedRefusal`); any
 * other refusal as it is. `--resume`, `--abort`, `--from` and `status` say the same.
 */
export function wayOnFromRefused(found: RunbookJournal, loaded: LoadedRunbook): unknown {
  if (found.untrusted && found.refused instanceof UserError)
    return untrustedRefusal(found.refused, loaded, found.state);
  if (found.refused instanceof DistrustedJournal) return distrustedRefusal(found.refused, loaded);
  return found.refused;
}

/** The refusal a journal `--resume` passes over ended with (`passedOverRefusal`), and that journal's read model. */
export interface PassedOverRefusal {
  file: string;
  /** That run's failure and its own command again, as `runAgainFirst` reads them. */
  again: NonNullable<ReturnType<typeof runAgainFirst>>;
  model: CutoverModel;
}

/**
 * The refusal the newest journal `--resume` passes over ended with (`skipped`: the journal choice's
 * `skipped`, src/journal/read.ts `chooseJournal`, newest first), where its way on is that run's own
 * command again (`runAgainFirst`: a fleet-identity refusal before it sent anything, of a `--from`
 * of this cutover or of a `--new-cutover`, another cutover), with that journal's model; undefined
 * else, or unreadable. The one rule of `status` (`passedOverAgain`) and the watch page
 * (src/watch/journal-feed.ts): an outside review saw the page, which watches the cutover
 * `--resume` continues, offer that cutover's `--resume` after a refused `--new-cutover`, where
 * status offered the refused run's command, and the `--resume` pasted committed the earlier cutover.
 */
export async function passedOverRefusal(skipped: readonly string[]): Promise<PassedOverRefusal | undefined> {
  const file = skipped[0];
  if (file === undefined) return undefined;
  const read = await readJournal(file).catch(() => undefined);
  if (!read) return undefined;
  const fold = new CutoverFold({ traits: traitsOf });
  for (const e of read.events) fold.apply(e);
  const model = fold.view();
  const again = runAgainFirst(model.steps, model.runs);
  return again ? { file, again, model } : undefined;
}

/**
 * A journal that cannot be trusted (edited, cut short of its witness), refused with the commands
 * that help next: the fleet and the writes first; then, once the fleet shows nothing it may
 * record is on the sync that runs now, the journal set aside (the folder's checks no longer read
 * it) and a new cutover; else what is missing sent by hand. Not a `--from` run of its cutover:
 * what it sent (a commit on its way) is not known.
 */
function distrustedRefusal(err: DistrustedJournal, loaded: LoadedRunbook): UserError {
  const aside = loaded.redact(shellCommand(["mv", err.journal, `${err.journal}.set-aside`]));
  const fresh = newCutoverFromStart(loaded);
  const status = `syncbook status ${runbookArg(loaded)}`;
  const next = fresh
    ? `if the fleet is IDLE (the sync never started, or was set back by hand since), set the journal aside (it stays that run's record) and start a new cutover, whose start checks the fleet is IDLE: ${aside}, then ${fresh}`
    : `if the fleet shows nothing this journal may record is on the sync that runs now (set back by hand since), set the journal aside (it stays that run's record) and start a new cutover: ${aside}, then syncbook run ${keptTarget(loaded).target} --new-cutover${keptTarget(loaded).note}`;
  return new UserError(err.message, {
    exitCode: err.exitCode,
    hint: `${err.meaning}. See the fleet and check the application's writes: ${status}; ${next}; else send what is missing by hand.`,
  });
}

/**
 * A journal its own run marked untrusted, refused with the exact way on: the run that marked it
 * said the same (unwind.ts `writesAfterJournalFailure`), a new run `--from` the write stop.
 */
function untrustedRefusal(err: UserError, loaded: LoadedRunbook, state: JournalState | undefined): UserError {
  const steps = loaded.runbook ? planSteps(loaded.runbook) : [];
  // the last write stop its runs ran (after a reverse, the new sync's), else the runbook's first;
  // named with the cutover's --var values: a run without them may stop writes somewhere else (an
  // outside review lost 3,005,067 writes through the hint of the run that marked it, which lacked them)
  const ran = state?.hooksRan.filter((h) => steps[h.stepIndex]?.bound.opensWriteStop).at(-1);
  const stop = (ran ? steps[ran.stepIndex] : undefined) ?? steps.find((s) => s.bound.opensWriteStop);
  const target = (more: string[]): string =>
    `${state ? runTarget(loaded, cutoverVars(state, loaded)) : wayOnTarget(loaded)} ${shellCommand(more)}`;
  const check = `free disk space, check the application's writes and the fleet (syncbook status ${runbookArg(loaded)})`;
  if (stop)
    return new UserError(err.message, {
      exitCode: err.exitCode,
      hint: `do not resume from it: ${check}, then run again with: syncbook run ${target(["--from", stop.id])} (it stops writes again before commit)`,
    });
  // no write stop of its own (writes stopped outside the runbook): what its run undid unrecorded
  // are the hooks the journal shows ran and not undone (it was marked before their undos, which it
  // could not record: all of them, last first); the way on runs again from the first
  const undoable = new Set(steps.filter((s) => s.bound.hookCall()?.undo !== undefined).map((s) => s.index));
  const undone =
    state?.hooksRan
      .filter((h) => h.ok !== undefined && !h.undone && !h.undoStarted && undoable.has(h.stepIndex))
      .map((h) => h.stepIndex)
      .sort((a, b) => a - b) ?? [];
  const first = undone.length ? steps[undone[0]!] : undefined;
  return new UserError(err.message, {
    exitCode: err.exitCode,
    hint: first
      ? `do not resume from it: ${check}; its run undid ${plural(undone.length, "step")} it could not record (${undone.map((i) => steps[i]!.id).join(", ")}): run again from the first: syncbook run ${target(["--from", first.id])}`
      : `do not resume from it: ${check}, then run again with --from the step to go on with: syncbook run ${target(["--from"])} <step>`,
  });
}

/**
 * Before a run reads or decides anything (every entry point: `run`, `--resume`, `--from`,
 * `--abort`): a hook process an earlier run of this cutover left (a slow undo, a daemon an undo
 * left, a hook cut off by a kill) must not change writes behind this run (src/run/orphans.ts).
 * Every journal of the runbook's folder is read, every call of each; this waits out what still
 * runs and returns the gate commit asks again right before it is sent.
 */
export async function waitOutEarlierRuns(
  loaded: LoadedRunbook,
  dir: string,
  opts: { say: (s: string) => void; signal?: AbortSignal; probe?: OrphanProbe },
): Promise<EarlierHooksVerdict & { gate: EarlierHooksGate | undefined }> {
  const { calls, unreadable } = await earlierHookCalls(dir);
  const d = runDefaults(loaded);
  const steps = loaded.runbook ? planSteps(loaded.runbook) : [];
  const verdict = await waitOutEarlierHooks(calls, {
    deadlineOf: (c) => {
      const call = steps[c.stepIndex]?.bound.hookCall();
      const limit = c.undo
        ? (steps[c.stepIndex]?.bound.undoTimeoutMs() ?? UNDO_TIMEOUT_MS)
        : durationOr(call?.timeout ?? steps[c.stepIndex]?.step.timeout, d.timeoutMs);
      // the dead runner's SIGTERM-to-SIGKILL grace (src/plugin/process.ts), and a little more
      return c.at + limit + ORPHAN_GRACE_MS;
    },
    say: opts.say,
    signal: opts.signal,
    ...(opts.probe ? { probe: opts.probe } : {}),
  });
  // a journal that cannot be read may hold a call whose process still runs
  const unknown = [
    ...verdict.unknown,
    ...unreadable.map((u) => `the hook calls of ${u.file} (it cannot be read: ${u.why})`),
  ];
  for (const u of unreadable)
    opts.say(`earlier runs: cannot read ${u.file} (${u.why}): whether its hook processes have exited cannot be told`);
  return {
    unknown,
    mayHaveActed: verdict.mayHaveActed,
    gate: calls.length || unknown.length ? earlierHooksGate(calls, unknown, opts.probe) : undefined,
  };
}

export interface CommitEvidence {
  /**
   * Commit may have reached an instance: a commit step ended ok, or some instance accepted it or
   * gave no usable answer (commit blocks until every instance has it, so one that got it may be
   * waiting in its round: turning writes back on then would let the round close with writes flowing).
   */
  sent: boolean;
  /** Some instance accepted it: the cutover happened (or is happening). */
  accepted: boolean;
  /**
   * A commit that counts as sent went past its forced `writes-stopped` interlock (`SentCommand.writesForced`,
   * or a carried one): the run's `commitWritesForced`, which keeps verify from counting it as writes stopped.
   */
  writesForced?: true;
}

/**
 * Any commit of the cutover, before a reverse too: what `--abort` and the undos go by (a write stop
 * from before a commit is never undone, whatever came after it).
 */
export function commitEvidence(state: JournalState): CommitEvidence {
  return evidenceOf(state, state.commandsSent, state.carriedCommit);
}

/**
 * The commit of the sync that runs now: a reverse that took effect starts a new sync, whose commit
 * is its own (as a run's memory after its reverse step, src/steps/lifecycle.ts); `reversedNow`: a
 * resume adopts a reverse the journal does not show ended. What the verdict (`committed`) and the
 * interlocks that count a commit go by.
 */
export function currentSyncCommit(state: JournalState, reversedNow: boolean): CommitEvidence {
  if (reversedNow) return { sent: false, accepted: false };
  const r = lastReverse(state);
  // a commit an earlier journal recorded (run.started.carried) comes before every command of this
  // one: a reverse here leaves it to the sync before
  return r
    ? evidenceOf(state, state.commandsSent.slice(r.at + 1), undefined)
    : evidenceOf(state, state.commandsSent, state.carriedCommit);
}

/**
 * The steps before `before` whose \`when\`, as this run reads it, decides otherwise than the runs
 * of the journal did (a \`when\` is read once per run, from its vars, and lint takes the steps that
 * share one variable as running together): one skipped by its \`when\` that would run now (a
 * rollback's reverse), or one that ran whose \`when\` is false now. A run that goes on with that
 * journal (\`--resume\`, \`--from\`) would act on a plan its cutover never followed: a rollback's
 * write stop on a sync that never reversed. Each said for people.
 */
export function whenDecidedOtherwise(state: JournalState, steps: readonly Step[], before: number): string[] {
  return state.steps.flatMap((j) => {
    const now = steps[j.index]?.when === false;
    // a step that started and never ended (its runner killed in it: a reverse on its way, a write
    // stop's hook) ran on its \`when\` too, where the resume goes on as well (it would skip it now)
    if (j.finished === undefined)
      return j.started && j.index <= before && now
        ? [`step ${j.index + 1} "${j.id}" started (its run ended before it did), and its \`when\` is false now`]
        : [];
    if (j.index >= before) return [];
    if (j.skippedByWhen === true && !now)
      return [`step ${j.index + 1} "${j.id}" was skipped by its \`when\`, and would run now`];
    if (j.finished !== "skipped" && now) return [`step ${j.index + 1} "${j.id}" ran, and its \`when\` is false now`];
    return [];
  });
}

/**
 * The \`--var\` values a way on carries: those the journal's runs decided its \`when\`s with, as far
 * as they tell (a step whose \`when\` names \`vars.X\` and was skipped by it says X was false; one
 * that started, ended or not, true; a variable told both ways, or decided by a \`when\` on the
 * environment, is left out), then the values its last run was given (src/next-run.ts \`wayOnVars\`).
 */
export function cutoverVars(state: JournalState, loaded: LoadedRunbook): string[] {
  return wayOnVars(whenVars(state, loaded), state);
}

/** The `--var` values the journal's runs decided its `when`s with, alone (`cutoverVars` adds the given ones). */
export function whenVars(state: JournalState, loaded: LoadedRunbook): string[] {
  // the variable each step's `when` named as its run journaled it (`run.started.steps`); a journal
  // of an earlier runner, without it, by the runbook's step at its index only where the runbook is
  // the journal's text (an outside review: a step removed, and another step's `when` was read)
  const sameText = state.hash === loaded.hash;
  return decidedVars(
    state.steps.flatMap((j) => {
      const ref = j.when !== undefined ? `vars.${j.when}` : sameText ? whenVariable(loaded.raw, j.index) : undefined;
      const name = ref?.startsWith("vars.") ? ref.slice("vars.".length) : undefined;
      // skipped by it: false; started, ended or not: it ran on its \`when\`, true
      if (name === undefined || (j.skippedByWhen !== true && !j.started)) return [];
      return [{ name, value: j.skippedByWhen !== true }];
    }),
  );
}

/**
 * The variables an owed undo would be made of with other values than its hook's call was: its
 * step's \`\${vars.*}\` (the hook's \`with\`, its \`undo:\`, or a plugin's undo made from its
 * `with`), each compared with the values of the run that called the hook (`HookRun.vars`). An
 * undo made of other values goes elsewhere (another switch, another service) and leaves the hook's
 * effect standing: writes stopped, with the operator told they are back on. A hook of a journal
 * without `vars` (an earlier runner) is not judged. Values are compared as journaled (env-derived
 * ones redacted alike on both sides).
 */
export function undoVarsDiffer(
  hooks: readonly HookRun[],
  loaded: LoadedRunbook,
): { hook: HookRun; name: string; then: string; now: string }[] {
  const steps = (loaded.raw as { steps?: unknown } | undefined)?.steps;
  return hooks.flatMap((hook) =>
    varNamesIn(withoutWhen(Array.isArray(steps) ? steps[hook.stepIndex] : undefined)).flatMap((name) => {
      // redacted as the runbook's values are now: a journal of an earlier runner held a number that
      // holds a secret in clear, which never matched its masked value (an outside review: a loop)
      const journaled = hook.vars?.[name];
      const then = journaled === undefined ? undefined : redactedVar(journaled, loaded.redact);
      const now = loaded.vars[name];
      return then !== undefined && (now === undefined || varText(then) !== varText(now))
        ? [{ hook, name, then: varText(then), now: now === undefined ? "(unset)" : varText(now) }]
        : [];
    }),
  );
}

/**
 * The variables the steps from `from` on are made of whose value differs from the journal's last
 * run (`name`, its value then, now): a resume with them goes on elsewhere than the run it
 * continues (a write stop through another switch, and a commit while the application writes):
 * the resume refuses them unless `--allow-changed-runbook` says they are meant (src/run/resume.ts;
 * an owed undo's are refused always, `undoVarsDiffer`). A commit still to run also reads the
 * `check:` of every write stop before it (`writesChecks`, src/steps/kit/writes-check.ts): the
 * variables of those stops count too (the whole step: a check's hook is given it as
 * `StepInfo.raw`), or the check of another switch says writes are stopped while the
 * application's flow, and the commit goes out.
 */
export function varsChangedSince(state: JournalState, loaded: LoadedRunbook, from: number): VarChange[] {
  const vars = state.vars;
  if (!vars) return [];
  // compared as journaled: a secret part redacted alike on both sides (`loaded.vars` is redacted)
  return varsReadFrom(loaded, from).flatMap((name) => {
    const journaled = vars[name];
    const then = journaled === undefined ? undefined : redactedVar(journaled, loaded.redact);
    const now = loaded.vars[name];
    return then !== undefined && (now === undefined || varText(then) !== varText(now))
      ? [{ name, then: varText(then), now: now === undefined ? "(unset)" : varText(now) }]
      : [];
  });
}

/**
 * The variables a run that goes on from step `from` reads (`varsChangedSince`): those of the
 * instances' and the verifier's URLs, those of the steps from there to the runbook's end (a `--to`
 * run's cutover goes on past it), and with a commit among them, those of every write stop with a
 * `check:` (the commit reads each again).
 */
function varsReadFrom(loaded: LoadedRunbook, from: number): string[] {
  const raw = (loaded.raw as { steps?: unknown } | undefined)?.steps;
  const steps: unknown[] = Array.isArray(raw) ? raw : [];
  // every step from there talks to the fleet and the verifier: made of other values, the run goes
  // on with another fleet (an outside review; reproduced: a `--from drained` without the cutover's
  // `--var` committed the default fleet, another environment's sync whose writes flowed, counting
  // this cutover's write stop)
  const later = [...fleetParts(loaded), ...steps.slice(from).map(withoutWhen)];
  // the typed steps, at the raw ones' indexes: what each kind does is its traits' to say
  const typed = loaded.runbook?.steps ?? [];
  const commitLater = typed.slice(from).some((s) => bindStep(s).command === "commit");
  // the write stops after `from` are in `later` already: their second reading changes nothing
  const read = commitLater
    ? [...later, ...typed.flatMap((t, i) => (bindStep(t).writesCheck() ? [withoutWhen(steps[i])] : []))]
    : later;
  return varNamesIn(read);
}

/** The runbook's instances and verifier, as written (their `${vars.*}` not yet interpolated). */
function fleetParts(loaded: LoadedRunbook): unknown[] {
  const top = loaded.raw as { instances?: unknown; verifier?: unknown } | undefined;
  return [top?.instances, top?.verifier];
}

/** The variables the fleet's and the verifier's URLs are made of: which services every step talks to. */
export function fleetVarNames(loaded: LoadedRunbook): string[] {
  return varNamesIn(fleetParts(loaded));
}

/**
 * The values the cutover runs with once a run goes on from step `from` (`run.started.cutoverVars`
 * and `cutoverGiven`, src/journal/state.ts): this run's for the variables it reads from there
 * (`varsReadFrom`: the same as the cutover's, or changed on purpose with `--allow-changed-runbook`),
 * the cutover's until now for the others. Taken as this run's alone, a `--from` the last step typed
 * without the `--var` made the runbook's defaults "the values the cutover ran with": a later
 * `--from` the write-on hook without them went through and turned on another environment's switch,
 * and the one typed with the cutover's was refused, offering the defaults (reproduced, 2026-12-04).
 * Undefined when the journal has no values (an earlier runner's): this run's are the cutover's.
 */
export function cutoverValuesFrom(
  state: JournalState,
  loaded: LoadedRunbook,
  from: number,
): { vars: Record<string, string | number | boolean>; given: string[] } | undefined {
  const then = state.vars;
  if (!then) return undefined;
  const read = new Set(varsReadFrom(loaded, from));
  const vars: Record<string, string | number | boolean> = {};
  const given: string[] = [];
  for (const [name, now] of Object.entries(loaded.vars)) {
    const kept = !read.has(name) && then[name] !== undefined;
    // redacted as the runbook's values are now: a journal of an earlier runner held a number that
    // holds a secret in clear, which would be copied into this run's journal (an outside review)
    vars[name] = kept ? redactedVar(then[name]!, loaded.redact) : now;
    if ((kept ? state.given : loaded.given)?.includes(name) === true) given.push(name);
  }
  return { vars, given };
}

/** A variable whose value in this run differs from the one the cutover ran with. */
export interface VarChange {
  name: string;
  then: string;
  now: string;
}

/** `varsChangedSince`'s values in words: `switch=b (the run it continues had switch=a)`. */
export const varsChangedText = (
  changed: readonly VarChange[],
  what = "the steps still to run are made of these values",
): string =>
  `this run has ${changed.map((c) => `${c.name}=${c.now} (the run it continues had ${c.name}=${c.then})`).join(", ")}: ${what}, not the ones the cutover ran with until now`;

/** The refusal of a `--resume` whose steps still to run `varsChangedSince` finds made of other values. */
export function varsChangedRefusal(
  changed: readonly VarChange[],
  state: JournalState,
  loaded: LoadedRunbook,
  file: string,
  /** `--abort` reads the fleet before its undo turns writes on, and the undo may be made of the fleet's URLs. */
  how: "--resume" | "--abort" = "--resume",
): UserError {
  const then = valuesThen(changed, state, loaded);
  const masked = then.masked ? MASKED_VAR_NOTE : "";
  return how === "--abort"
    ? new UserError(
        `cannot abort from ${file}: ${varsChangedText(changed, "the fleet it reads before writes go back on (and an undo that takes its URLs) is made of these values")}: that is another fleet; nothing was run`,
        {
          hint: `Call it off with the cutover's values${masked}: syncbook run ${then.target} --abort. Only if this cutover's fleet itself moved to the new values, add --allow-changed-runbook.`,
          exitCode: ExitCode.usage,
        },
      )
    : new UserError(`cannot resume from ${file}: ${varsChangedText(changed)}; nothing was run`, {
        hint: `Resume with the cutover's values${masked}: syncbook run ${then.target} --resume. To go on with the new values on purpose, add --allow-changed-runbook.`,
        exitCode: ExitCode.usage,
      });
}

/** A `--from` run's own range as a way on repeats it: `--from`, and its `--to` and `--only` as typed (without them it went to the runbook's end on every instance). */
export function fromRangeArgs(from: string, range: { to?: string; onlyArg?: string }): string[] {
  return [
    "--from",
    from,
    ...(range.to !== undefined ? ["--to", range.to] : []),
    ...(range.onlyArg !== undefined ? ["--only", range.onlyArg] : []),
  ];
}

/** The refusal of a `--from` run going on with the cutover whose steps from there `varsChangedSince` finds made of other values. */
function varsChangedFromRefusal(
  changed: readonly VarChange[],
  state: JournalState,
  loaded: LoadedRunbook,
  file: string,
  from: string,
  /** The run's own `--to` and `--only` as typed: the command offered keeps them (without, it went to every instance, and past `--to`). */
  range: { to?: string; onlyArg?: string } = {},
): UserError {
  const then = valuesThen(changed, state, loaded);
  const flags = fromRangeArgs(from, range);
  return new UserError(
    `cannot go on with the cutover of ${file} from ${from}: ${varsChangedText(changed)}; nothing was run`,
    {
      hint: `Run with the cutover's values${then.masked ? MASKED_VAR_NOTE : ""}: syncbook run ${then.target} ${shellCommand(flags)}. To go on with the new values on purpose, add --allow-changed-runbook.`,
      exitCode: ExitCode.usage,
    },
  );
}

/**
 * The runbook with the `--var` values the cutover ran with: `cutoverVars`, and each of `changed`
 * as it was then (a secret one, journaled as `***`, left for the operator to set: `masked`). The
 * one way on the refusals of other values offer. `moved`: an `--abort --allow-changed-runbook`
 * whose fleet moved, refused before it journaled anything: the cutover's values are its new ones,
 * with that flag (the journal's read the old fleet: an outside review).
 */
function valuesThen(
  changed: readonly { name: string; then: string }[],
  state: JournalState,
  loaded: LoadedRunbook,
  moved?: CutoverValuesKnown,
): { target: string; masked: boolean } {
  const names = new Set(changed.map((d) => d.name));
  // with the flag, a secret value kept masked: left out, the flag took the runbook's default
  const kept = moved ? wayOnVarsKept(loaded, moved) : undefined;
  const vars = [
    ...(kept ? kept.vars : cutoverVars(state, loaded)).filter((v) => !names.has(v.slice(0, v.indexOf("=")))),
    ...[...new Map(changed.map((d) => [d.name, `${d.name}=${d.then}`])).values()],
  ];
  return {
    target: `${runTarget(loaded, vars)}${moved ? " --allow-changed-runbook" : ""}`,
    masked: changed.some((d) => d.then.includes(MASK)) || kept?.masked === true,
  };
}

/**
 * The `--var` values of a way on from step `fromId` on that carries `--allow-changed-runbook` after
 * the cutover's commit, which nothing checks against the cutover's values: those its `when`s were
 * decided with and those it was given (`wayOnVarsKept`, a secret one kept masked), then every other
 * variable the steps from there read, the fleet's, those their `when`s name (`varsReadFrom`,
 * `whenNamesFrom`) and the notifiers', as the cutover had it. Left out, a value the cutover took from the runbook's old
 * default was read at the default now, another fleet (an outside review). Not only the values that
 * differ from `loaded`'s: `status` and `watch` load the runbook at the cutover's fleet values
 * (`loadAtCutoverFleet`), where an old default of the fleet shows no change. The step is found by
 * its id in `loaded`, the runbook as edited: the journal's index is the old text's (an outside
 * review: a step removed before it, and the values of another step were named).
 *
 * Each is named as `--var` gives it back (`varText`: a text that reads as a number, `"007"`). A
 * secret one (journaled `***`) is left to the runbook where its text reads the same now (not
 * given: `loaded.given`); else shown masked (`masked`), for the operator to set.
 */
export function cutoverVarsFrom(
  known: Required<CutoverValuesKnown>,
  loaded: LoadedRunbook,
  fromId: string,
): { vars: string[]; masked: boolean; note?: string } {
  const from = stepIndexOf(loaded, fromId);
  const kept = wayOnVarsKept(loaded, known);
  const named = new Set(kept.vars.map((v) => v.slice(0, v.indexOf("="))));
  const then = known.cutoverValues.vars;
  // and the runbook's notifiers: the run pages with them (an outside review: another channel paged)
  const notify = varNamesIn((loaded.raw as { notify?: unknown } | undefined)?.notify);
  const read =
    from >= 0 ? [...new Set([...varsReadFrom(loaded, from), ...whenNamesFrom(loaded, from), ...notify])] : [];
  const more = read.flatMap((name) => {
    const value = then[name];
    if (value === undefined || named.has(name)) return [];
    if (!String(value).includes(MASK)) return [`${name}=${varText(value)}`];
    // the runbook's own text reads it as the cutover had it (redacted alike): left to it
    return !loaded.given?.includes(name) && loaded.vars[name] === value ? [] : [`${name}=${String(value)}`];
  });
  // one the edited runbook no longer declares nor reads: named, it would change nothing. Redacted
  // again: journaled redacted then, a value may hold a secret the runbook knows only now
  const vars = ofRunbook(loaded, [...kept.vars, ...more]).map((v) => loaded.redact(v));
  const masked = vars.some((v) => v.slice(v.indexOf("=")).includes(MASK));
  return { vars, masked, ...(masked ? { note: MASKED_VAR_WORDS } : {}) };
}

/** The index of the step `id` in the runbook as loaded (-1: none, or a runbook that does not load). */
function stepIndexOf(loaded: LoadedRunbook, id: string): number {
  return loaded.runbook ? planSteps(loaded.runbook).findIndex((st) => st.id === id) : -1;
}

/** The variables the `when`s of the steps from `from` on name whole: a run from there decides each again. */
function whenNamesFrom(loaded: LoadedRunbook, from: number): string[] {
  const raw = (loaded.raw as { steps?: unknown } | undefined)?.steps;
  const count = Array.isArray(raw) ? raw.length : 0;
  const names: string[] = [];
  for (let i = from; i < count; i++) {
    const ref = whenVariable(loaded.raw, i);
    if (ref?.startsWith("vars.")) names.push(ref.slice("vars.".length));
  }
  return names;
}

/** The cutover's values as its journal's state has them: what `cutoverVarsFrom` keeps. */
export function cutoverValuesKnown(state: JournalState, loaded: LoadedRunbook): Required<CutoverValuesKnown> {
  return {
    decidedVars: whenVars(state, loaded),
    cutoverValues: { vars: state.vars ?? {}, given: state.given ?? [] },
  };
}

/** The runbook with `cutoverVarsFrom`'s values: what `run --from` offers after a commit of a runbook since changed. */
export function cutoverTargetFrom(
  state: JournalState,
  loaded: LoadedRunbook,
  fromId: string,
): { target: string; note?: string } {
  const r = cutoverVarsFrom(cutoverValuesKnown(state, loaded), loaded, fromId);
  return { target: runTarget(loaded, r.vars), ...(r.note !== undefined ? { note: r.note } : {}) };
}

/** A raw step without its `when`: which steps run is `whenDecidedOtherwise`'s to judge, not what they are made of. */
function withoutWhen(step: unknown): unknown {
  if (!isObject(step)) return step;
  const { when: _when, ...rest } = step;
  return rest;
}

/**
 * The refusal of a run whose owed undos `undoVarsDiffer` finds made of other values: what, and the
 * command with the hook's values. `moved`: an `--abort` whose fleet moved (`valuesThen`); where
 * the hook's values are the fleet's own variables, no one run can make that undo and read the
 * moved fleet: it is handed to a person.
 */
export function undoVarsRefusal(
  differ: ReturnType<typeof undoVarsDiffer>,
  state: JournalState,
  loaded: LoadedRunbook,
  what: string,
  args: string,
  moved?: CutoverValuesKnown,
): UserError {
  const told = differ
    .map(
      (d) =>
        `step ${d.hook.stepIndex + 1} "${d.hook.id}" ran with ${d.name}=${d.then}, this run has ${d.name}=${d.now}`,
    )
    .join("; ");
  const then = valuesThen(differ, state, loaded, moved);
  const fleet = new Set(fleetVarNames(loaded));
  const ofFleet = moved ? [...new Set(differ.map((d) => d.name).filter((n) => fleet.has(n)))] : [];
  if (ofFleet.length)
    return new UserError(
      `cannot ${what}: ${told}: the undo it owes would be made of this run's values, and go where its hook did not; nothing was run, and what the hook did still holds`,
      {
        hint: `${ofFleet.join(", ")} ${ofFleet.length === 1 ? "is a variable" : "are variables"} of the fleet too: the hook ran against the old fleet and this --abort reads the new one, so no --abort can make that undo. Once you know no commit reached either fleet (syncbook status ${runbookArg(loaded)} reads the old one, the journal's; read the new one's progress at each of its instances, GET /api/v1/progress), do by hand what the undo does, with the values its hook ran with.`,
        exitCode: ExitCode.usage,
      },
    );
  return new UserError(
    `cannot ${what}: ${told}: the undo it owes would be made of this run's values, and go where its hook did not; nothing was run, and what the hook did still holds`,
    {
      hint: then.masked
        ? `Run with the values its hook ran with${MASKED_VAR_NOTE}: syncbook run ${then.target} ${args}`
        : `Run with the values its hook ran with: syncbook run ${then.target} ${args}`,
      exitCode: ExitCode.usage,
    },
  );
}

export const whenDiffersText = (differs: readonly string[]): string =>
  `its \`when\` values differ from the runs of this cutover (${differs.join("; ")}): a \`when\` is read once, from the run's vars, and this cutover's steps were decided with the others`;

/** The refusal's hint: the command with the vars its cutover's runs decided with, where the journal tells them. */
export function whenDiffersHint(state: JournalState, loaded: LoadedRunbook, args: string): string {
  const vars = cutoverVars(state, loaded);
  return `Run with the --var values the cutover ran with${vars.length ? `: syncbook run ${runTarget(loaded, vars)} ${args}` : ""}; steps that share a \`when\` variable run together or not at all.`;
}

/**
 * The last reverse that took effect: its command's place in the journal and its step. Taken when
 * its step ended ok, as a run's memory is reset only then (src/steps/lifecycle.ts: a reverse
 * refused by part of the fleet fails its step first) and the journal's write stop with it
 * (src/journal/state.ts); one a resume adopts is the caller's to add.
 */
/**
 * The write stop an `--abort` began after and may have undone or handed to a person with nothing
 * of it journaled (`abortAfter`, src/journal/state.ts: the abort killed, or its journal failing
 * while it still told the operator to do it by hand): the latest stop hook of the sync that runs
 * now, held, not undone, no undo begun, not handed over on record (`byHand` says that itself),
 * while no commit of that sync may have been sent (the abort refuses then). It does not hold for
 * any reader: a `--from` run's interlock refuses (an outside review: 19,692 writes lost through
 * `--from commit`), `status` says writes may be stopped or back on, and a resume runs it again
 * (src/run/resume-decide.ts, by the same mark).
 */
export function stopAbortCut(state: JournalState): HookRun | undefined {
  if (currentSyncCommit(state, false).sent) return undefined;
  const reverse = lastReverse(state)?.stepIndex;
  const stop = state.hooksRan
    .filter(
      (h) =>
        traitsOf(state.steps.find((st) => st.index === h.stepIndex)?.kind).opensWriteStop &&
        (reverse === undefined || h.stepIndex > reverse),
    )
    .at(-1);
  return stop?.abortAfter && stop.ok === true && !stop.undone && stop.undoStarted !== true && !stop.byHand
    ? stop
    : undefined;
}

// the journal's reader holds it: the refusals it counts are the sync's that runs now too
export { lastReverse };

const endedOk = (state: JournalState, c: JournalState["commandsSent"][number]): boolean =>
  state.steps[c.stepIndex]?.finished === "ok";

/**
 * A reverse after the last one that took effect, whose step did not end ok, and which may have
 * reached an instance (an answer not a refusal: accepted, or none usable): the runner died with it
 * on its way, or part of the fleet refused it. The sync may run either way; only the fleet can say
 * (`--resume` reads it and adopts the reverse it shows). Its step's index.
 */
export function reverseInDoubt(state: JournalState): number | undefined {
  const after = lastReverse(state)?.at ?? -1;
  const c = state.commandsSent
    .slice(after + 1)
    .find((c) => c.op === "reverse" && !endedOk(state, c) && c.perInstance.some((p) => p.answered !== "error"));
  return c?.stepIndex;
}

/**
 * The commands a \`--from\` run would send again to an instance the journal shows they may have
 * reached: a start, commit or reverse of the sync that runs now (after the last reverse that took
 * effect) of a command the run sends to that sync (\`sends\`, \`opsToSyncNow\`: by command, so a
 * journal of another text of the runbook is read too), to an instance it targets
 * (\`--only\`: those; else every one), whose answer there was not a refusal (accepted, or none
 * usable: a reset, a timeout, a runner killed with it on its way). \`--resume\` reads the fleet and
 * adopts or completes such a command (src/journal/reconcile.ts); a \`--from\` run reads no fleet
 * for it, and the step's interlocks may not tell (a commit on its way leaves the fleet RUNNING
 * until every instance has it; a reverse on its way leaves it COMMITTED): the run is refused.
 */
export function sentAgainByFrom(
  state: JournalState,
  sends: ReadonlySet<string>,
  targets: ReadonlySet<string> | undefined,
): { stepIndex: number; op: string; instances: string[]; answers: string }[] {
  const after = lastReverse(state)?.at ?? -1;
  return state.commandsSent
    .slice(after + 1)
    .filter((c) => AT_MOST_ONCE.has(c.op) && sends.has(c.op))
    .flatMap((c) => {
      const reached = c.perInstance.filter(
        (p) => p.answered !== "error" && (targets === undefined || targets.has(p.instance)),
      );
      return reached.length
        ? [
            {
              stepIndex: c.stepIndex,
              op: c.op,
              instances: reached.map((p) => p.instance),
              answers: reached
                .map((p) => `${p.instance} ${p.answered === "ok" ? "accepted it" : "gave no usable answer"}`)
                .join(", "),
            },
          ]
        : [];
    });
}

/**
 * What `--resume` does with a start, commit or reverse that may have reached the fleet
 * (src/journal/reconcile.ts). The refusals of a `--from` run offered `--from <step> --only <their
 * names>` for instances that never received it, which this same check refuses where the journal
 * has no answer of theirs (an adversarial run went round it): the resume's refusal gives the
 * commit by hand instead.
 */
const RESUME_SENT_ONCE = (op: string): string =>
  `reads the fleet and adopts a ${op} that took effect, sends it to the instances that refused it, and where it cannot tell whether an instance received it, refuses and gives the ${op === "commit" ? "commands" : "way"} to send it by hand, to be sent only to the instances whose log shows they never did`;

/**
 * `sentAgainByFrom`'s refusal of a `--from` run (see there), for the journal `file` it read. A
 * `--new-cutover --from` run (`newCutover`) is refused by the unfinished cutover's journal all the
 * same: it counts nothing from that cutover, but a commit on its way there leaves the fleet
 * RUNNING with canCommit true, and its commit step's interlocks would pass (an adversarial run
 * sent a third commit that way).
 */
export function refuseSentAgain(
  state: JournalState,
  loaded: LoadedRunbook,
  file: string,
  from: string | undefined,
  range: SendRange,
  ended: boolean,
  /**
   * What the run is: one going on with that cutover (`--from`), a new cutover (`--new-cutover
   * --from`), or a new cutover at its first step (`--new-cutover` of a runbook that sends no start
   * first, `startlessFrom`).
   */
  run: "from" | "new cutover" | "first step" = "from",
): void {
  const sent = fromRange(loaded, from, range);
  const c = ended || !sent ? undefined : sent.flatMap((p) => sentAgainByFrom(state, p.sends, p.targets))[0];
  if (!c) return;
  const id = state.steps[c.stepIndex]?.id ?? `#${c.stepIndex + 1}`;
  const cutover = runTarget(loaded, cutoverVars(state, loaded));
  const resume = `syncbook run ${cutover} --resume`;
  const fresh = newCutoverFromStart(loaded);
  // the journal folder set aside whole: its journals, their witnesses and its lock go together
  const aside = loaded.redact(shellCommand(["mv", dirname(file), `${dirname(file)}.set-aside`]));
  const setAside = `set its folder aside (it stays that cutover's record), then run this command again: ${aside}`;
  if (run !== "from")
    throw new UserError(
      `cannot start a new cutover ${fromText(from, run)}: the last cutover's journal ${file} shows ${c.op} (step ${c.stepIndex + 1} "${id}") may have reached ${c.instances.join(", ")} (${c.answers}), and this run would send it again: --new-cutover counts nothing from that cutover, but the fleet may still hold its ${c.op}, and a ${c.op} is never sent twice to an instance${NOTHING_SENT}`,
      {
        hint: `Go on with the last cutover: ${resume} ${RESUME_SENT_ONCE(c.op)}. ${fresh ? `If the sync was set back by hand since (the fleet IDLE again), start the new cutover from its start, whose interlock checks the fleet is IDLE: ${fresh} (without --from). If it was set back and started again by hand, that journal's commands went to a sync that no longer runs: ${setAside}` : `If the sync was set back and started again by hand since, that journal's commands went to a sync that no longer runs: ${setAside}`}`,
        exitCode: ExitCode.interlock,
      },
    );
  throw new UserError(
    `cannot go on with the cutover of ${file} from ${from}: its journal shows ${c.op} (step ${c.stepIndex + 1} "${id}") may have reached ${c.instances.join(", ")} (${c.answers}), and this run would send it again: a ${c.op} is never sent twice to an instance`,
    {
      hint: `Run ${resume}: it ${RESUME_SENT_ONCE(c.op)}. ${fresh ? `If the sync was set back by hand since (the fleet IDLE again), start a new cutover from its start, whose interlock checks the fleet is IDLE: ${fresh} (without --from: a new cutover from a later step is refused by this journal too, since the ${c.op} may still be on the fleet).` : `If the sync was set back and started again by hand since, that journal's commands went to a sync that no longer runs: ${setAside}`}`,
      exitCode: ExitCode.interlock,
    },
  );
}

/**
 * The new cutover from its start a refusal offers after a sync set back by hand (the fleet IDLE
 * again), with the values this run was given: its start's `fleet-idle` interlock is what makes it
 * safe. Undefined for a runbook that sends no start first (`startlessFrom`): it has no such way.
 */
export function newCutoverFromStart(loaded: LoadedRunbook): string | undefined {
  if (!loaded.runbook || startlessFrom(planSteps(loaded.runbook)) !== undefined) return undefined;
  const kept = keptTarget(loaded);
  return `syncbook run ${kept.target} --new-cutover${kept.note}`;
}

/**
 * The runbook as a way on that nothing checks against a cutover's values names it (a new cutover,
 * `--allow-changed-runbook`): every `--var` this run was given, a secret one kept masked
 * (`wayOnVarsKept`), and the note said after the command when one is.
 */
function keptTarget(loaded: LoadedRunbook): { target: string; note: string } {
  const typed = wayOnVarsKept(loaded);
  return { target: runTarget(loaded, typed.vars), note: typed.masked ? MASKED_VAR_NOTE : "" };
}

/** Where a refused new cutover would have begun: `from commit`, or, without --from, its first step and why that counts. */
export function fromText(from: string | undefined, run: string): string {
  return run === "first step"
    ? `at its first step, "${from}" (the runbook sends no start, whose interlock would check the fleet is IDLE)`
    : `from ${from}`;
}

/**
 * A run's range: its last step (`--to`), the instances it sends to (`--only`, indexes), and the
 * step `only` applies to alone when not the whole range (`completes`: a `--resume` completing a
 * split command, whose steps after it go to the whole fleet).
 */
export interface SendRange {
  to?: string;
  only?: readonly number[];
  completes?: string;
}

/**
 * The commands a run's range sends to the sync that runs now, each set with the instances it
 * targets (`--only`; else every one): one set, or, for a resume completing a split command
 * (`completes`), that step's command to `only` and the rest of the range's to every instance (a
 * command both sends counts as sent to every one).
 */
function fromRange(
  loaded: LoadedRunbook,
  from: string | undefined,
  range: SendRange,
): { sends: Set<string>; targets: Set<string> | undefined }[] | undefined {
  // the ids the journal has: a step without one is named by its kind and place (`commit-5`)
  const steps = loaded.runbook ? planSteps(loaded.runbook) : [];
  const fromIndex = steps.findIndex((s) => s.id === from);
  if (fromIndex < 0) return undefined;
  const toIndex = range.to !== undefined ? steps.findIndex((s) => s.id === range.to) : -1;
  const slice = steps.slice(fromIndex, toIndex >= 0 ? toIndex + 1 : steps.length);
  const sends = opsToSyncNow(slice);
  const all = instancesOf(loaded.runbook!);
  const targets = range.only
    ? new Set(
        range.only.map((index) =>
          instanceKey({ index, ...(all[index]?.name !== undefined ? { name: all[index].name } : {}) }),
        ),
      )
    : undefined;
  if (range.completes === undefined || !targets) return [{ sends, targets }];
  const at = slice.findIndex((s) => s.id === range.completes);
  // not in the range: `only` is no step's, and every command goes to every instance
  // Stryker disable next-line ConditionalExpression: equivalent: at -1, before and rest below are the whole range, own none
  if (at < 0) return [{ sends, targets: undefined }];
  // the steps before it, and, unless it or one of them is a reverse (a new sync after it, whose
  // commands are its own), those after it; a command both they and it send is judged to every instance
  const before = opsToSyncNow(slice.slice(0, at));
  const own = before.has("reverse") ? new Set<string>() : opsToSyncNow(slice.slice(at, at + 1));
  const rest = before.has("reverse") || own.has("reverse") ? new Set<string>() : opsToSyncNow(slice.slice(at + 1));
  return [
    { sends: new Set([...before, ...rest]), targets: undefined },
    { sends: own, targets },
  ];
}

/** A journal of the runbook's folder, read: its cutover and its state. */
export interface ReadJournal {
  file: string;
  cutover: string;
  state: JournalState;
}

/**
 * The journals, oldest first, whose start, commit or reverse may still be on the sync that runs
 * now, of every cutover of the folder: a cutover left unfinished for a new one stays on the fleet
 * until something since says otherwise. What does: a cutover that committed (its last run finished
 * ok at the runbook's end, committed: the fleet shows the commit, and the interlocks refuse on it;
 * one that ended ok without a commit, a `--from` of the runbook's last steps, sent nothing that
 * changes what the fleet may hold, an outside review's case), and a
 * journal whose reverse or start took effect (its step ended ok: a new sync runs, and an older
 * command no longer reaches it; that journal's own commands after it still count). A cutover
 * called off with `--abort` (which is refused once a commit may have been sent) counts nothing, as
 * a `--from` run after it does (`fromJournal`).
 */
export function liveJournals(journals: readonly ReadJournal[]): ReadJournal[] {
  let live: ReadJournal[] = [];
  for (const j of journals) {
    const f = j.state.finished;
    if (f?.outcome === "ok" && f.to === undefined && f.committed) {
      live = [];
      continue;
    }
    if (f?.aborted) continue;
    if (startsNewSync(j.state)) live = [];
    live.push(j);
  }
  return live;
}

/** A journal whose run started a new sync: a reverse that took effect, or a start of its own that ended ok. */
function startsNewSync(state: JournalState): boolean {
  return (
    lastReverse(state) !== undefined ||
    state.commandsSent.some((c) => c.op === "start" && c.carried === undefined && endedOk(state, c))
  );
}

/** The folder's journals that hold a run, read, oldest first; and each that could not be judged, with why. */
export interface FolderRead {
  journals: ReadJournal[];
  unjudged: UnjudgedJournal[];
}

/**
 * Every journal of the folder that holds a run, read, oldest first (`folderJournals`). Each file on
 * its own: one that cannot be read (strictly: a damaged line may hide a command), or whose length
 * its witness does not vouch for (cut short, rewritten, its witness missing or another's:
 * witness.ts), is in `unjudged`, naming it, and every other one is read all the same
 * (`refuseSentByEarlierCutover` and `earlierCommitOnFleet` judge both). Read as the journal a run
 * continues is (runbook-journal.ts): the witness checked in the strict reader's one pass.
 */
export async function readFolderJournals(dir: string): Promise<FolderRead> {
  const { journals, unjudged } = await folderJournals(dir);
  const out: ReadJournal[] = [];
  for (const j of journals) {
    // the one witnessed read, as --resume and status read the journal they act on (a request line
    // past the witness never left: the witness is written before every effect)
    const read = await runbookJournal(dir, traitsOf, { file: j.file });
    if (!read.state) {
      unjudged.push({ file: j.file, why: `it cannot be read (${errorMessage(read.refused)})` });
      continue;
    }
    // a journal cut short may have lost a start, commit or reverse sent: taken as whole, its
    // command would be sent again, or writes turned on under its commit. One its own run marked
    // untrusted (`untrusted`: its witness emptied) is read as it is: the run marks it only in its
    // unwind, before undos it cannot record, and never once a commit may have been sent (unwind.ts);
    // those undos are hooks' and plugins', never a start, commit or reverse (no command kind has an
    // undo: src/steps); and every request's line is durable before the request leaves (journal.ts),
    // so each command it sent is in it, an answer it lost read as "may have reached". Unjudged, it
    // would refuse the way on its run printed (UNTRUSTED_WAY_ON) once a run of that way on failed
    if (read.refused !== undefined && read.untrusted !== true) {
      unjudged.push({ file: j.file, why: `it cannot be trusted (${errorMessage(read.refused)})` });
      continue;
    }
    out.push({ file: j.file, cutover: j.cutover, state: read.state });
  }
  return { journals: out, unjudged };
}

/**
 * A run's refusal by an earlier cutover's journal (`liveJournals`), other than `own`'s (the
 * cutover the run continues, or the last one, each refused by `refuseSentAgain` on its own
 * journal): a newer cutover that acted and sent no commit is the journal every later run reads,
 * and it knows nothing of a commit the earlier one left on its way. The newest such journal first.
 * Only when the run's range sends a start, commit or reverse (`opsToSyncNow`): then a journal of
 * the folder that cannot be judged refuses it too, in every mode (what it holds may be such a
 * command on its way), and a `--resume` of a cutover a newer one acted after (`resumedUnderNewer`).
 * A range that sends none goes on, the journals it could not judge said (`say`).
 */
export function refuseSentByEarlierCutover(
  folder: FolderRead,
  /**
   * The run's own cutover, and the journal of it its own check reads (`refuseSentAgain`, or the
   * journal a `--resume` continues): that file alone is passed over. Another journal of the same
   * cutover is judged like any other: its commands reach the run only when its journal counted
   * them (an outside review: a journal written for another text of the runbook is not counted, and
   * skipped by cutover id its split commit was sent again by the next `--from commit`).
   * `refused`: why a run must not act on that journal, as `--resume` says it (`wayOnFromRefused`:
   * cut short, edited): thrown in place of the folder's refusal of it as a journal it cannot judge.
   */
  own: { cutover?: string | undefined; file?: string | undefined; refused?: UserError },
  loaded: LoadedRunbook,
  dir: string,
  from: string | undefined,
  range: SendRange,
  /**
   * What the run is: a new cutover (`--new-cutover --from`), a `--from` run, a `--resume` going on
   * at `from`, or a run without `--from` of a runbook that sends no start first, a new cutover in
   * effect `--from` its first step (`startlessFrom`).
   */
  run: "new cutover" | "from" | "resume" | "first step",
  say: (s: string) => void,
): void {
  const sent = fromRange(loaded, from, range);
  const what =
    run === "new cutover" || run === "first step"
      ? `cannot start a new cutover ${fromText(from, run)}`
      : run === "from"
        ? `cannot go on with the last cutover from ${from}`
        : `cannot resume the last cutover at step "${from}"`;
  const sends = sent ? [...new Set(sent.flatMap((p) => [...p.sends]))].filter((op) => AT_MOST_ONCE.has(op)) : [];
  if (!sent || !sends.length) {
    for (const u of folder.unjudged)
      say(
        `journal: ${u.file}: ${u.why}; this run sends no start, commit or reverse, so none it may record is sent again`,
      );
    return;
  }
  const target = wayOnTarget(loaded);
  // a new cutover from its start, whose interlock checks the fleet is IDLE: none for a runbook that sends no start
  const fresh = newCutoverFromStart(loaded);
  const status = `syncbook status ${runTarget(loaded, [])}`;
  // the journal of the cutover this run goes on with: refused as --resume, --abort and status
  // refuse it, with its way on (a journal it cannot judge would offer to set it aside and go on)
  if (own.refused !== undefined && folder.unjudged.some((u) => u.file === own.file)) throw own.refused;
  const u = folder.unjudged[0];
  if (u) {
    // the folder itself: set aside whole it would take every journal's check with it
    const folderWide = u.file === dir;
    const aside = loaded.redact(shellCommand(["mv", u.file, `${u.file}.set-aside`]));
    throw new UserError(
      `${what}: ${folderWide ? "the journal folder" : "the journal"} ${u.file}: ${u.why}: whether it records a start, commit or reverse still on the fleet, which this ${run === "resume" ? "resume" : "run"} would send (${sends.join(", ")}), cannot be told${NOTHING_SENT}`,
      {
        hint: folderWide
          ? `Make the folder readable to this user (or run as the user that wrote it), then run this command again. See the fleet meanwhile: ${status}.`
          : `See the fleet: ${status}. If that file is no journal of this runbook, or the fleet shows nothing it may record is on the sync that runs now (set back by hand since), set it aside (it stays that run's record), then run this command again: ${aside}.${fresh ? ` If the sync was set back by hand, a new cutover from its start checks the fleet is IDLE: ${fresh} (without --from).` : ""}`,
        exitCode: ExitCode.interlock,
      },
    );
  }
  if (run === "resume") resumedUnderNewer(folder.journals, own.cutover, loaded, what);
  for (const j of liveJournals(folder.journals).reverse()) {
    if (j.file === own.file) continue;
    const c = sent.flatMap((p) => sentAgainByFrom(j.state, p.sends, p.targets))[0];
    if (!c) continue;
    const id = j.state.steps[c.stepIndex]?.id ?? `#${c.stepIndex + 1}`;
    // the instances it never reached, alone: a --from run (of the last cutover, or a new one) of its
    // step (a new one's --new-cutover is harmless when no cutover is unfinished); a commit from the
    // write stop before it, whose run counts a write stop of its own (`restopFor`)
    // a new cutover's checked against no cutover's values: every --var kept (a secret masked)
    const anew = run === "new cutover" || run === "first step" ? keptTarget(loaded) : undefined;
    const only = `syncbook run ${anew?.target ?? target}${anew ? " --new-cutover" : ""} --from ${(c.op === "commit" && restopFor(loaded.runbook!, from)) || id} --only <the instances it did not reach>${anew?.note ?? ""}`;
    const aside = loaded.redact(shellCommand(["mv", dir, `${dir}.set-aside`]));
    // another journal of the run's own cutover (a --from run after a run that left its commit in
    // doubt): an earlier run of this cutover, not "an earlier cutover" a newer one left (a review)
    const ours = own.cutover !== undefined && j.cutover === own.cutover;
    const whose = ours
      ? `the journal ${j.file} of an earlier run of this cutover, ${j.cutover},`
      : `the journal ${j.file} of an earlier cutover, ${j.cutover},`;
    const since = ours ? "" : "a newer cutover of this runbook left it unfinished and sent none since, and ";
    throw new UserError(
      `${what}: ${whose} shows ${c.op} (step ${c.stepIndex + 1} "${id}") may have reached ${c.instances.join(", ")} (${c.answers}), and this ${run === "resume" ? "resume" : "run"} would send it again: ${since}the fleet may still hold it: a ${c.op} is never sent twice to an instance${NOTHING_SENT}`,
      {
        hint: `See the fleet: ${status}. If it shows the ${c.op} never reached some instances (they refused it), send it only to those: ${only}. ${fresh ? `If the sync was set back by hand since (the fleet IDLE again), start a new cutover from its start, whose interlock checks the fleet is IDLE: ${fresh} (without --from). If it was set back and started again by hand, that` : "If the sync was set back and started again by hand since, that"} cutover's commands went to a sync that no longer runs: set the runbook's journal folder aside (it stays those cutovers' record), then run this command again: ${aside}`,
        exitCode: ExitCode.interlock,
      },
    );
  }
}

/**
 * The stopWrites step a way on that sends the commit of the range from `from` to part of the fleet
 * begins at (`writeStopBefore`, src/run/plan.ts), when the runbook has one: without a write stop of
 * its own, the way on is refused by the commit's `writes-stopped` interlock wherever the journal it
 * counts holds none (a new cutover; a cutover none of whose runs stopped writes), and that
 * refusal's `--from` the write stop, sent to every instance, came back here (a terminal trial's loop).
 */
function restopFor(runbook: Runbook, from: string | undefined): string | undefined {
  const steps = planSteps(runbook);
  const at = steps.findIndex((s) => s.id === from);
  // a step the runbook no longer has (edited since): no stop before it can be named
  if (at < 0) return undefined;
  const commit = steps.slice(at).find((s) => s.bound.command === "commit" && s.step.when !== false);
  return commit && writeStopBefore(runbook, steps, commit.index);
}

/**
 * A `--resume` of a cutover (`own`) whose journal a journal of another cutover follows (its first
 * run later) that sent a start, commit or reverse that may have reached the fleet: refused. The
 * folder's journals are ordered by their first run (`folderJournals`), so a command this resume
 * sends would be judged as before that newer cutover's, and `liveJournals` would drop it from the
 * check of every later run when that cutover started a new sync (an older journal resumed after a
 * newer cutover's start: its commit left out, and sent again by the next `--from commit`).
 * Refused rather than judged by event time: the times are the runners' clocks, and a clock stepped
 * back between the runs would date the resume's commit before the newer start and drop it all the
 * same; this refusal reads no clock but the first runs' order the check already goes by, and sends
 * nothing. A cutover called off with `--abort` is passed over, as `liveJournals` passes it over.
 */
function resumedUnderNewer(
  journals: readonly ReadJournal[],
  own: string | undefined,
  loaded: LoadedRunbook,
  what: string,
): void {
  // no journal of its cutover (an id that could not be read): nothing to place
  const first = journals.findIndex((j) => j.cutover === own);
  if (first < 0) return;
  for (const j of journals.slice(first + 1)) {
    if (j.cutover === own || j.state.finished?.aborted) continue;
    const c = j.state.commandsSent.find(
      (c) => AT_MOST_ONCE.has(c.op) && c.carried === undefined && c.perInstance.some((p) => p.answered !== "error"),
    );
    if (!c) continue;
    const id = j.state.steps[c.stepIndex]?.id ?? `#${c.stepIndex + 1}`;
    const fresh = newCutoverFromStart(loaded);
    throw new UserError(
      `${what}: its cutover ${own} is older than cutover ${j.cutover}, whose journal ${j.file} shows ${c.op} (step ${c.stepIndex + 1} "${id}") sent since: the folder's journals are ordered by their first run, so what this resume sends would be judged as sent before it, and left out of the check that keeps a start, commit or reverse from being sent twice${NOTHING_SENT}`,
      {
        hint: `See the fleet: syncbook status ${runTarget(loaded, [])}. Go on with the newer cutover, which the fleet follows now: syncbook run ${runTarget(loaded, cutoverVars(j.state, loaded))} --resume (without a journal file).${fresh ? ` If the sync was set back by hand since (the fleet IDLE again), start a new cutover from its start, whose interlock checks the fleet is IDLE: ${fresh}.` : ""}`,
        exitCode: ExitCode.interlock,
      },
    );
  }
}

/** An earlier cutover's commit that may still take effect on the fleet, or why that cannot be told. */
export type EarlierCommit =
  | {
      journal: ReadJournal;
      /** Its commit's sends that may have reached an instance (undefined: its evidence alone says sent). */
      sent: { stepIndex: number; op: string; instances: string[]; answers: string } | undefined;
      /** Its commit step's id, as that journal names it. */
      id: string | undefined;
      /** Every instance (key) any commit of its sync may have reached: `sent`'s, and a later completion's. */
      reached: string[];
    }
  | { unjudged: UnjudgedJournal[] };

/**
 * A commit of another journal of the folder (the run's own, `ownFile`, excluded; another journal of
 * its own cutover is judged too: one it counted gave the run its commit already) that may still take effect: a live
 * journal's (`liveJournals`) whose current sync's commit was sent (`currentSyncCommit`), the
 * newest first; else the journals that could not be judged (one may hold such a commit: the reading
 * that fails safe); else undefined. What the fleet read before an undo of a write stop cannot show
 * (an instance holding a commit in its round shows RUNNING until every instance has it): asked by
 * `--abort` (abort.ts) and by every run's unwind (unwind.ts, through `earlierCommitReason`).
 */
export function earlierCommitOnFleet(folder: FolderRead, ownFile: string | undefined): EarlierCommit | undefined {
  for (const j of liveJournals(folder.journals).reverse()) {
    if (j.file === ownFile || !currentSyncCommit(j.state, false).sent) continue;
    const all = sentAgainByFrom(j.state, new Set(["commit"]), undefined);
    const sent = all[0];
    const id = sent ? (j.state.steps[sent.stepIndex]?.id ?? `#${sent.stepIndex + 1}`) : undefined;
    // a resume's completion sent to the rest, its answer lost, may hold there too (an outside review)
    return { journal: j, sent, id, reached: [...new Set(all.flatMap((s) => s.instances))] };
  }
  // the run's own start (or reverse) that took effect is a new sync: nothing a journal it cannot
  // place in time may hold is on it (an outside review: one stray file kept every run's writes
  // stopped on a failure, even after its own start passed fleet-idle)
  const own = folder.journals.find((j) => j.file === ownFile);
  const unjudged = folder.unjudged.filter((u) => u.file !== ownFile);
  return unjudged.length && !(own && startsNewSync(own.state)) ? { unjudged } : undefined;
}

/**
 * A run's question before an undo of its write stop (`RunContext.earlierCommit`): the folder's
 * journals read when it is asked, its own (`journalFile`) among them, so that its own start that
 * took effect since (a new sync: `liveJournals`) clears what an earlier cutover left; its own file
 * is never held against it. Never throws: a folder that cannot be read keeps writes stopped.
 */
export function earlierCommitAsked(
  dir: string,
  journalFile: string,
  /**
   * Journals the run was told it must not act on (cut short of their witness, edited: the
   * runbook's unfinished cutover a `--new-cutover` left): the folder's plain read would take what is
   * left of them as whole, and a commit in their lost lines would not be seen.
   */
  distrusted: readonly UnjudgedJournal[] = [],
): () => Promise<string | undefined> {
  return async () => {
    try {
      const read = await readFolderJournals(dir);
      const out = new Set(distrusted.map((d) => d.file));
      const folder: FolderRead = {
        journals: read.journals.filter((j) => !out.has(j.file)),
        unjudged: [...read.unjudged.filter((u) => !out.has(u.file)), ...distrusted],
      };
      return earlierCommitReason(earlierCommitOnFleet(folder, journalFile));
    } catch (err) {
      return `the journal folder ${dir} could not be read (${errorMessage(err)}): whether an earlier cutover's commit may still take effect on the fleet cannot be told`;
    }
  };
}

/**
 * The one way to close an earlier cutover's commit round (`earlierCommitOnFleet`): its commit step
 * (`commit`) sent again to the runbook's instances it never reached (`only`), which refused it, by
 * a `--from` run of the write stop before it (`from`, as `refuseSentByEarlierCutover` names it: the
 * commit's `writes-stopped` interlock counts no write stop a journal that holds none gives it; the
 * stop runs again, writes stay stopped), else of the commit itself; undefined when no instance is
 * left or its step cannot be named. Offered by `--abort`'s refusal (abort.ts) and by `status`
 * (status.ts), so that every command names the same way.
 */
export function earlierCommitFinish(
  held: EarlierCommit,
  runbook: Runbook | undefined,
): { from: string; commit: string; only: string[] } | undefined {
  if ("unjudged" in held || !held.sent || held.id === undefined || !runbook) return undefined;
  // its step gone from the runbook as edited since: a --from of it is refused
  if (!planSteps(runbook).some((s) => s.id === held.id)) return undefined;
  const reached = new Set(held.reached);
  const only = instancesOf(runbook)
    .map((inst, index) => instanceKey({ index, ...(inst.name !== undefined ? { name: inst.name } : {}) }))
    .filter((k) => !reached.has(k));
  return only.length ? { from: restopFor(runbook, held.id) ?? held.id, commit: held.id, only } : undefined;
}

/**
 * `earlierCommitOnFleet` as `status` and the watch page say it (undefined: none): a commit that may
 * still take effect, or the journals that cannot be judged (one may hold such a commit).
 */
export function earlierCommitWords(held: EarlierCommit | undefined): string | undefined {
  const why = earlierCommitReason(held);
  return why === undefined || !held || "unjudged" in held
    ? why
    : `an earlier cutover's commit may still take effect: ${why}`;
}

/**
 * The runbook as `--resume`'s reconciliation knows it (src/journal/reconcile.ts): its text's hash,
 * each step's id, kind and command, and the runbook as the commands its hints name (status's
 * argument; run's with the cutover's `--var` values). One for the resume and the readers that ask
 * its refusals.
 */
export function resumeIdentity(loaded: LoadedRunbook, state: JournalState): RunbookIdentity {
  return {
    hash: loaded.hash,
    steps: (loaded.runbook ? planSteps(loaded.runbook) : []).map((s) => ({
      id: s.id,
      kind: s.kind,
      command: s.bound.command,
    })),
    args: { status: runTarget(loaded, []), run: runTarget(loaded, cutoverVars(state, loaded)) },
  };
}

/**
 * The refusal a `--resume` of the journal `file` (its `state`) meets on that journal alone,
 * whatever the fleet shows: a start, commit or reverse of a step after the one it goes on at that
 * may have reached an instance (`sentAhead`, src/journal/reconcile.ts: a `--from` run that stopped
 * before its cutover's commit in doubt carried it), in the resume's own words. Undefined else.
 */
export function resumeRefusedByOwn(
  state: JournalState,
  loaded: LoadedRunbook,
  file: string,
): { message: string; hint: string } | undefined {
  const r = sentAhead(state, resumeIdentity(loaded, state), resumeStep(state).at);
  return r && { message: `cannot resume from ${file}: ${r.message}`, hint: r.hint };
}

/**
 * Whether the `--resume` of this run's journal `file`, going on at step `at`, would be refused, in
 * the order the resume asks: its own journal's command in doubt ahead of it (`resumeRefusedByOwn`,
 * the reconciliation's), then the folder's other journals (`refuseSentByEarlierCutover`, what the
 * resume itself asks: an earlier cutover's commit that may still take effect, a journal that cannot
 * be judged, a newer cutover that acted): that refusal's words, or undefined. Asked only of a run
 * whose own journal that resume continues (one that acted: `chooseJournal` passes over a journal
 * that sent nothing and ran no hook), so that the end's words are the resume's, not a second
 * reading of them (an outside review: a reading of its own claimed a refusal for a resume that went
 * on with the earlier cutover, and missed one by a journal that cannot be read; a second: the end
 * of a `--from stop-writes --to stop-writes` under its own cutover's commit in doubt named the
 * other journals' refusal, calling its own cutover an earlier one, where the resume refuses on its
 * own journal). Undefined when the folder cannot be read (the resume reads it again).
 */
export async function resumeRefused(
  loaded: LoadedRunbook,
  file: string,
  at: string,
): Promise<{ message: string; hint?: string } | undefined> {
  // the folder read only where the resume's range sends a start, commit or reverse (neither check
  // refuses anything else): a failed run's end is not delayed by a read of every journal
  const steps = loaded.runbook ? planSteps(loaded.runbook) : [];
  const k = steps.findIndex((s) => s.id === at);
  if (k < 0 || ![...opsToSyncNow(steps.slice(k))].some((op) => AT_MOST_ONCE.has(op))) return undefined;
  try {
    const own = await journalCutover(file).then(
      (j) => j.cutover,
      () => undefined,
    );
    const dir = dirname(file);
    const folder = await readFolderJournals(dir);
    // its own journal as the folder's read took it (each read as the journal a run continues)
    const mine = folder.journals.find((j) => resolve(j.file) === resolve(file));
    const first = mine && resumeRefusedByOwn(mine.state, loaded, file);
    if (first) return first;
    refuseSentByEarlierCutover(folder, { cutover: own, file }, loaded, dir, at, {}, "resume", () => undefined);
    return undefined;
  } catch (err) {
    if (!(err instanceof UserError)) return undefined;
    const message = err.message.endsWith(NOTHING_SENT) ? err.message.slice(0, -NOTHING_SENT.length) : err.message;
    return { message, ...(err.hint ? { hint: err.hint } : {}) };
  }
}

/**
 * The URLs (as that journal wrote them, redacted) of the instances `held`'s commits may have
 * reached: by URL, not by name, since a runbook edited since may name them otherwise
 * (`urlsAt`, src/model/readiness.ts, finds them in the fleet read now); none where that cannot be
 * told (a journal that cannot be judged, or one that names no instance).
 */
export function earlierCommitReached(held: EarlierCommit | undefined): string[] {
  if (!held || "unjudged" in held) return [];
  const urls = new Map((held.journal.state.instances ?? []).map((i) => [i.key, i.url]));
  return held.reached.flatMap((k) => urls.get(k) ?? []);
}

/**
 * An earlier cutover's commit that may still take effect, as `status` and the watch page say it:
 * why (`earlierCommitWords`), and the instances it may have reached (`earlierCommitReached`). One
 * shape, so the two never say it differently.
 */
export interface EarlierCommitSaid {
  why: string;
  reached: string[];
}

/** `earlierCommitOnFleet` as `status` and the watch page say it; undefined: none. */
export function earlierCommitSaid(held: EarlierCommit | undefined): EarlierCommitSaid | undefined {
  const why = earlierCommitWords(held);
  return why === undefined ? undefined : { why, reached: earlierCommitReached(held) };
}

/** The command that sets aside the first journal of `held` that cannot be judged, when it is a file (not the folder `dir`). */
export function setAsideCommand(held: EarlierCommit | undefined, dir: string): string | undefined {
  const u = held && "unjudged" in held ? held.unjudged[0] : undefined;
  return u && u.file !== dir ? shellCommand(["mv", u.file, `${u.file}.set-aside`]) : undefined;
}

/** `earlierCommitOnFleet` as the reason an undo of a write stop is not run (undefined: none). */
export function earlierCommitReason(held: EarlierCommit | undefined): string | undefined {
  if (!held) return undefined;
  if ("unjudged" in held)
    return `${held.unjudged.map((u) => `${u.file}: ${u.why}`).join("; ")}: whether an earlier cutover's commit may still take effect on the fleet cannot be told`;
  const { journal: j, sent, id } = held;
  return `the journal ${j.file} of an earlier cutover, ${j.cutover}, shows ${sent && id !== undefined ? `commit (step ${sent.stepIndex + 1} "${id}") may have reached ${sent.instances.join(", ")} (${sent.answers})` : "its commit may have reached the fleet"}, and it may still take effect (an instance holding it waits in commit's round, RUNNING, until every instance has it): writes at the source then would be lost once that round closes`;
}

/**
 * The commands the steps of a run's range send to the sync that runs now: each command step's
 * (one its `when` skips sends nothing), up to and including the first reverse (after it, a new
 * sync, whose commands are its own). By command, not by step id: an edited runbook (a commit step
 * renamed, or given no id: `commit-7`) sent the commit its journal showed on its way again.
 */
export function opsToSyncNow(steps: readonly PlannedStep[]): Set<string> {
  const ops = new Set<string>();
  for (const s of steps) {
    const op = s.bound.command;
    if (op === undefined || s.step.when === false) continue;
    ops.add(op);
    if (op === "reverse") break;
  }
  return ops;
}

/** The commands the service takes once per sync: sent twice, the second may reach it too. */
const AT_MOST_ONCE = new Set(["start", "commit", "reverse"]);

/** The run's memory of a commit let through past a forced `writes-stopped` interlock: carried by a `--from` run, as a resume does. */
function forcedOf(commit: CommitEvidence): { commitWritesForced?: true } {
  return commit.writesForced ? { commitWritesForced: true } : {};
}

function evidenceOf(
  state: JournalState,
  commands: JournalState["commandsSent"],
  carried: CommitEvidence | undefined,
): CommitEvidence {
  const commits = commands.filter((c) => c.op === "commit");
  const sent = (c: JournalState["commandsSent"][number]): boolean =>
    endedOk(state, c) || c.perInstance.some((p) => p.answered !== "error");
  const forced = carried?.writesForced === true || commits.some((c) => c.writesForced === true && sent(c));
  return {
    sent: carried?.sent === true || commits.some(sent),
    accepted:
      carried?.accepted === true ||
      commits.some((c) => endedOk(state, c) || c.perInstance.some((p) => p.answered === "ok")),
    ...(forced ? { writesForced: true as const } : {}),
  };
}

/**
 * A `--from` run of a step after the runbook's (last) commit, when the journal's last run finished
 * ok and committed: a `verify` that failed under `continueOnError`, run again. Such a cutover is
 * over for a new start, but the steps after its commit are still its own, and they need what it
 * established (its write stop for the verifier's writesOff, its commit for the verdict, its
 * verifier check): without it `--from verify` was refused for want of a write stop, and its hint
 * sent the operator to stop writes again and wait for canCommit on a COMMITTED fleet. A `--from`
 * at or before the commit is a new cutover's, as ever.
 */
export function afterItsCommit(
  state: JournalState,
  loaded: LoadedRunbook,
  from: string | undefined,
  /** `--allow-changed-runbook`: the operator says a journal of another text is this cutover's (a verify's timeout raised). */
  allowChangedRunbook = false,
): boolean {
  const f = state.finished;
  if (!f || f.outcome !== "ok" || f.to !== undefined || f.aborted || !f.committed) return false;
  if (state.hash !== loaded.hash && !allowChangedRunbook) return false;
  return loaded.runbook !== undefined && afterLastCommit(loaded.runbook, from);
}

/**
 * The journal's step to run again with `--from` (`afterItsCommit`): its last run finished ok at the
 * runbook's end and committed, past a step after the runbook's last commit that failed
 * (`continueOnError`). The journal's reading of src/model/again.ts `runAgainAfterCommit`, for
 * `--resume`'s and `--abort`'s refusals, which read the journal, not the read model.
 */
export function stepToRunAgain(state: JournalState, runbook: Runbook | undefined): JournalStep | undefined {
  const f = state.finished;
  if (!runbook || !f || f.outcome !== "ok" || f.to !== undefined || !f.committed) return undefined;
  return state.steps.find((s) => s.finished === "failed" && afterLastCommit(runbook, s.id));
}

/**
 * Before a `--from` run goes on with a cutover that committed (`afterItsCommit`): the fleet must
 * still show that commit, every instance COMMITTED. One reversed or restarted since (RUNNING the
 * other way, IDLE) no longer holds it, and continuing said "committed · verified" on it; one that
 * does not answer cannot be told. What stands in the way, per instance, or undefined.
 */
export async function commitNoLongerHolds(loaded: LoadedRunbook, signal?: AbortSignal): Promise<string | undefined> {
  if (!loaded.runbook) return undefined;
  const fleet = createFleet({
    instances: instancesOf(loaded.runbook),
    requestTimeoutMs: runDefaults(loaded).requestTimeoutMs,
    redact: loaded.redact,
  });
  try {
    const snap = await fleet.progress(signal);
    const off = snap.instances
      .filter((i) => i.progress?.state !== "COMMITTED")
      .map(
        (i) =>
          `${instanceLabel(i.ref)} ${i.progress ? `is ${i.progress.state}` : `does not answer (${i.error?.message ?? "no answer"})`}`,
      );
    return off.length ? off.join("; ") : undefined;
  } finally {
    await fleet.close().catch(() => undefined);
  }
}

/**
 * The cutover a `--from` run after its commit continues (`afterItsCommit`): its id and journal, by
 * the one answer `--resume` and `status` ask (src/journal/runbook-journal.ts).
 */
export async function committedCutover(
  loaded: LoadedRunbook,
  dir: string,
  from: string | undefined,
  allowChangedRunbook = false,
): Promise<{ cutover: string; journal: string } | { changedText: string } | undefined> {
  const found = await runbookJournal(dir, traitsOf);
  if (found.refused !== undefined || !found.file || !found.state) return undefined;
  if (!afterItsCommit(found.state, loaded, from, allowChangedRunbook))
    // the same, but for the runbook's text: said, with the flag that continues it
    return afterItsCommit(found.state, loaded, from, true) ? { changedText: found.file } : undefined;
  const { cutover } = await journalCutover(found.file);
  return cutover ? { cutover, journal: found.file } : undefined;
}

/**
 * The hooks whose effect may still hold: each step's latest call that started (finished or cut
 * off: a hook killed half-way may have done part of its work) and whose undo has not succeeded
 * (an undo that failed or was cut off is owed again). `--abort` runs their undos, last first.
 */
export function openHooks(state: JournalState): HookRun[] {
  const latest = new Map<number, HookRun>();
  for (const h of state.hooksRan) latest.set(h.stepIndex, h);
  return [...latest.values()].filter((h) => !h.undone);
}

/**
 * A `--from` run continues the cutover its folder's journal records (`--from commit --only
 * shard-c` after one instance refused commit): what that journal established counts for the
 * interlocks, so a write stop that held is not asked for again, and a commit that may have been
 * sent is never followed by an undo. Only a journal of this very runbook text whose run did not
 * finish ok counts (a finished cutover's write stop says nothing about the next one); without one
 * the run starts knowing nothing, and commit's writes-stopped interlock refuses until a
 * stopWrites runs. Its own journal is a new file: undos the earlier one owes stay with `--abort`.
 */
export async function fromJournal(
  loaded: LoadedRunbook,
  dir: string,
  say: (s: string) => void,
  /** An earlier run's hook process was alive when this run began (waitOutEarlierRuns): the stop it records may be undone. */
  mayHaveActed = false,
  /**
   * This run continues the cutover that journal records (src/journal/cutover.ts, the run's own
   * answer): only then is its verifier check this run's. A cutover called off with --abort, or one
   * left for --new-cutover, is not continued, and its check is not adopted.
   */
  sameCutover = false,
  /** The `--from` step's id: after the commit of a committed cutover, its journal counts (`afterItsCommit`). */
  from?: string,
  allowChangedRunbook = false,
  /** The run's last step (`--to`) and the instances it sends to (`--only`: indexes, and as typed), when given. */
  range: { to?: string; only?: readonly number[]; onlyArg?: string } = {},
): Promise<ResumePlan | undefined> {
  let found: { file: string; state: JournalState };
  try {
    found = await openEarlierJournal(dir, { say, loaded });
  } catch (err) {
    // no journal yet: a first run from a step, nothing to count
    if (isNothingToResume(err)) return undefined;
    // one it must not act on (cut short of its witness, marked untrusted): the commit what is left
    // of it shows is a lower bound of what the fleet holds, and a commit is never undone: counted
    // nothing, the run ended "not committed" on a COMMITTED fleet (an outside review, 2026-12-01)
    const shown = sameCutover ? await runbookJournal(dir, traitsOf).catch(() => undefined) : undefined;
    // its steps from --from made of other --var values than the cutover's: refused as below, where
    // the journal's state can still be read (a second review: after a journal failure, the one
    // journal left untrusted, `--from` the stop without the --var went through unrefused)
    const at = loaded.runbook ? planSteps(loaded.runbook).findIndex((s) => s.id === from) : -1;
    if (shown?.state && shown.file) {
      const changed = at >= 0 ? varsChangedSince(shown.state, loaded, at) : [];
      if (changed.length && !allowChangedRunbook)
        throw varsChangedFromRefusal(changed, shown.state, loaded, shown.file, from ?? "", range);
      // on purpose: said, as below
      if (changed.length) say(`from ${from ?? ""}: ${varsChangedText(changed)} (--allow-changed-runbook)`);
    }
    const commit =
      shown?.state && shown.file
        ? { file: shown.file, state: shown.state, ...currentSyncCommit(shown.state, false) }
        : undefined;
    // the refusals what is left of it shows, a lower bound as its commit is: counted nothing, a split
    // start completed before a journal failure committed in the --from its way on offers without
    // --force=no-errors (a review of the refusals a --from run counts)
    const refusals = shown?.state ? refusalsCounted(shown.state) : [];
    if (commit?.sent) {
      say(
        `journal: the latest journal cannot be acted on (${errorMessage(err)}): this run counts nothing from it but the commit it shows, which ${commit.accepted ? "an instance accepted" : "may have reached an instance"} (a commit is never undone: it is not sent again, and no write stop is undone under it)${refusalsWords(refusals)}; what its lost lines held is not known`,
      );
      return commitOnly(commit.file, commit.state, loaded, commit, refusals, at);
    }
    if (refusals.length && shown?.state && shown.file) {
      say(
        `journal: the latest journal cannot be acted on (${errorMessage(err)}): this run counts nothing from it but${refusalsWords(refusals).replace(/^; and/, "")}; what its lost lines held is not known`,
      );
      return refusalsOnly(shown.file, refusals, at >= 0 ? cutoverValuesFrom(shown.state, loaded, at) : undefined);
    }
    say(`journal: the latest journal cannot be read (${errorMessage(err)}): this run counts nothing from it`);
    return undefined;
  }
  const { file, state } = found;
  // a check that run sent is not this run's either: said now, before a commit, not at verify
  const check = state.verifier?.check
    ? "; nor the verifier's check it sent: this run's verify adopts a running check only while it is still in generation 0, and refuses it past that (a verifier restarted with --clean, or on a new metadata database, takes this run's own check)"
    : "";
  const ignored = (why: string): undefined => {
    say(`journal: ${file} ${why}: this run counts nothing from it (commit needs a stopWrites in this run)${check}`);
    return undefined;
  };
  // a command is never sent twice to an instance: one the journal shows may have reached it is
  // --resume's to adopt or complete, from what the fleet shows. Read before the journal's text is
  // judged (an edited runbook's --from would send it again all the same); not after a cutover that
  // ended (the fleet shows its commands: the interlocks refuse), nor one called off for a new one
  const ended = state.finished?.outcome === "ok" && state.finished.to === undefined;
  // the steps before --from as this run's vars decide them, against what the cutover's runs did
  // by the ids the journal and --from have (a step without one: `commit-5`)
  const fromIndex = loaded.runbook ? planSteps(loaded.runbook).findIndex((s) => s.id === from) : -1;
  const whenCheck = (): void => {
    const differs =
      loaded.runbook && fromIndex >= 0 ? whenDecidedOtherwise(state, loaded.runbook.steps, fromIndex) : [];
    if (differs.length)
      throw new UserError(`cannot go on with the cutover of ${file} from ${from}: ${whenDiffersText(differs)}`, {
        hint: whenDiffersHint(state, loaded, shellCommand(fromRangeArgs(from ?? "", range))),
        exitCode: ExitCode.usage,
      });
  };
  // a journal of this very text that counts: its `when`s first, the truer reason (a rollback's
  // commit after a reverse the cutover skipped is a second commit too, and said so otherwise)
  if (state.hash === loaded.hash && !ended && !state.finished?.aborted) whenCheck();
  // A reverse that may have reached the fleet and did not end ok: which sync runs now only the
  // fleet can say, and this run reads none for it. Refused: counting nothing, a run past the reverse
  // met the reversed sync, stopped writes, had its commit refused, and kept them stopped saying "a
  // commit was sent outside this run"; one before it acts on a sync that may no longer run (an
  // adversarial run)
  const doubt = reverseInDoubt(state);
  if (doubt !== undefined && !ended && !(state.finished?.aborted && !sameCutover))
    throw new UserError(
      `cannot go on with the cutover of ${file} from ${from}: its journal shows a reverse (step ${doubt + 1} "${state.steps[doubt]?.id ?? "?"}") that may have reached the fleet and whose step did not end ok: the sync may run either way, and a --from run reads no fleet for it`,
      {
        hint: `Run syncbook run ${runTarget(loaded, cutoverVars(state, loaded))} --resume: it reads the fleet, adopts the reverse if the fleet shows it (and goes on with the rollback), or refuses, saying what it saw.`,
        exitCode: ExitCode.interlock,
      },
    );
  if (!(state.finished?.aborted && !sameCutover)) refuseSentAgain(state, loaded, file, from, range, ended);
  // a step after the commit of a cutover that committed (a verify run again) continues it, of
  // another text too when the operator says so (--allow-changed-runbook: a verify's timeout raised)
  const afterCommit = sameCutover && afterItsCommit(state, loaded, from, allowChangedRunbook);
  if (state.hash !== loaded.hash && !afterCommit) {
    // its commit is the fleet's whatever the runbook's text: counted nothing, it ended "not
    // committed" on a COMMITTED fleet, and so said status and the run's report (a helper's reading
    // of 2026-12-01), which the bridge takes as writes may go back on the source. The commit alone
    // is counted (never sent again, no write stop undone under it, the end says committed when an
    // instance accepted it); the write stop and the verification stay another text's
    const commit = sameCutover ? currentSyncCommit(state, false) : undefined;
    // the flag given where it does nothing: said, not passed over in silence
    const flag = allowChangedRunbook
      ? " (--allow-changed-runbook counts such a journal only for a --from step after the runbook's last commit, of a cutover whose last run finished ok and committed: not so here)"
      : "";
    // still this cutover's values (an outside review, 2026-12-04: after an edit, `--from
    // stop-writes` without the cutover's --var stopped the default switch, and its commit, counting
    // that stop, went out while the cutover's source wrote); by name, whatever the edit moved
    const changed = sameCutover && fromIndex >= 0 ? varsChangedSince(state, loaded, fromIndex) : [];
    if (changed.length && !allowChangedRunbook)
      throw varsChangedFromRefusal(changed, state, loaded, file, from ?? "", range);
    if (changed.length) say(`from ${from ?? ""}: ${varsChangedText(changed)} (--allow-changed-runbook)`);
    // the refusals of the cutover are the fleet's too, whatever the runbook's text: counted nothing,
    // a split start completed by `--from start --only`, then the runbook edited, committed in a
    // `--from stop-writes` without --force=no-errors (a review of the refusals a --from run counts)
    const refusals = sameCutover ? refusalsCounted(state) : [];
    if (!commit?.sent) {
      if (!refusals.length) return ignored(`was written for another text of the runbook${flag}`);
      say(
        `journal: ${file} was written for another text of the runbook${flag}: this run counts nothing from it but${refusalsWords(refusals).replace(/^; and/, "")} (commit needs a stopWrites in this run)${check}`,
      );
      return refusalsOnly(file, refusals, fromIndex >= 0 ? cutoverValuesFrom(state, loaded, fromIndex) : undefined);
    }
    say(
      `journal: ${file} was written for another text of the runbook${flag}: this run counts nothing from it but its commit, which ${commit.accepted ? "an instance accepted" : "may have reached an instance"} (a commit is the fleet's whatever the runbook says now: it is not sent again, and no write stop is undone under it)${refusalsWords(refusals)}; not its write stop, nor its verification${check}`,
    );
    return commitOnly(file, state, loaded, commit, refusals, fromIndex);
  }
  // a run stopped by --to before the runbook's end leaves its cutover open: this run continues it
  if (state.finished?.outcome === "ok" && state.finished.to === undefined && !afterCommit)
    return ignored("records a run that finished ok (its cutover ended with it)");
  if (afterCommit)
    say(
      `journal: ${file} records this cutover committed (its last run finished ok): --from ${from} comes after its commit, which counts (${currentSyncCommit(state, false).writesForced ? "its writes-stopped interlock was forced: writes are not known stopped for the verifier" : "writes were stopped for it: the verifier may be told so"})`,
    );
  // the operator called that cutover off: a --from run after it is a new cutover (its own id), and
  // says so, or its journal lines below would read as going on with the one called off
  if (state.finished?.aborted && !sameCutover)
    return ignored("records a cutover called off with --abort: this run starts a new cutover");
  whenCheck();
  // the steps from --from made of other --var values than the cutover's, as --resume refuses them
  // (an outside review: a --from the write stop without the cutover's --var stopped another
  // environment's writes, the commit interlock counted it, and the commit went through while the
  // real source wrote)
  // after a commit too: the write-on hook run again with other values turns on another switch (an
  // environment's the cutover never stopped) and says the application's writes are back on
  const changed = fromIndex >= 0 ? varsChangedSince(state, loaded, fromIndex) : [];
  if (changed.length && !allowChangedRunbook)
    throw varsChangedFromRefusal(changed, state, loaded, file, from ?? "", range);
  // on purpose: said, as a resume says it (the runbook as it runs is changed)
  if (changed.length) say(`from ${from ?? ""}: ${varsChangedText(changed)} (--allow-changed-runbook)`);
  // the sync that runs now, as --resume and the run's own memory count it (a reverse starts a new one)
  const commit = currentSyncCommit(state, false);
  const cut = stopAbortCut(state);
  const stopped = state.stopWritesSucceeded && !mayHaveActed && cut === undefined;
  // after the commit, the write stop is the commit's to vouch for (said above): not said twice
  if (!afterCommit)
    say(
      stopped
        ? `journal: ${file} shows this cutover's writes stopped (a stopWrites held, not undone): commit's writes-stopped interlock counts it`
        : cut
          ? `journal: ${file} shows this cutover's writes stopped by step ${cut.stepIndex + 1} "${cut.id}", then an --abort began and the journal does not show what became of them (undone, or handed to a person to turn back on by hand): commit's writes-stopped interlock refuses until a stopWrites runs in this run`
          : state.stopWritesSucceeded
            ? `journal: ${file} shows this cutover's writes stopped, but a hook process of an earlier run was still running when this run began and may have turned them back on: commit's writes-stopped interlock refuses until a stopWrites runs in this run`
            : `journal: ${file} shows no stopWrites that held (none ran, one failed, its undo ran, or an --abort handed it to a person): commit's writes-stopped interlock refuses until one runs`,
    );
  const carry = sameCutover && state.verifier !== undefined && Object.keys(state.verifier).length > 0;
  if (carry && state.verifier?.check)
    say(
      `journal: ${file} shows this cutover's verifier check (${state.verifier.check.answered === "ok" ? "accepted" : state.verifier.check.answered === "error" ? "refused" : "sent, its answer lost"}): this run's verify goes on from it, as --resume would`,
    );
  const values = fromIndex >= 0 ? cutoverValuesFrom(state, loaded, fromIndex) : undefined;
  return {
    done: new Map(),
    carriedFrom: file,
    ...carriedAtMostOnce(state, loaded),
    memory: {
      writesStopped: stopped,
      commitSent: commit.sent,
      commitAccepted: commit.accepted,
      ...forcedOf(commit),
      // the cutover's refusals, as --resume counts them (`refusalsCounted`): counting none, a split
      // start completed by `--from start --only` committed in that same run without
      // --force=no-errors, which its own targeted start's question said it would need
      serviceErrors: refusalsCounted(state),
      // the cutover's check and writesOff, as --resume carries them (src/run/resume.ts): without
      // them this run's verify refused the check this very cutover started before the commit, and
      // the documented way to finish a split commit (`--from commit --only`) ended committed and
      // not verifiable without a new verification from generation 0
      ...(carry ? { verifier: state.verifier } : {}),
    },
    ...(carry ? { verifierFrom: file } : {}),
    // the ways on this run prints (a --from the write stop after its commit is refused, a journal
    // failure) carry the cutover's values, not only this run's: printed with this run's, the next
    // run was refused by the check above (a second review). With the values the cutover runs with
    // from here (`cutoverValues`), those given come from them (src/next-run.ts `wayOnVarsAfter`):
    // the journal's given ones came first, and a value changed under --allow-changed-runbook was
    // offered as it was, which the next run was refused with
    ...(values
      ? { decidedVars: whenVars(state, loaded), cutoverValues: values }
      : { decidedVars: cutoverVars(state, loaded) }),
  };
}

/**
 * The refusals a `--from` run counts of a journal it counts nothing else from but a commit (another
 * text of the runbook, one it must not act on), in words after the commit: `; and the refusals …`.
 */
function refusalsWords(refusals: readonly ServiceRefusal[]): string {
  if (!refusals.length) return "";
  return `; and the ${refusals.length === 1 ? "refusal" : `${refusals.length} refusals`} it shows (${[...new Set(refusals.map((r) => `${r.op} by ${r.instance}`))].join(", ")}), which the commit's no-errors interlock counts (a command refused and taken later too)`;
}

/**
 * A `--from` run's plan that counts nothing of a journal of its cutover but its commit (never sent
 * again, no write stop undone under it) and its refusals: a journal of another text of the
 * runbook, or one it must not act on. `at`: the `--from` step's place, -1 when not found.
 */
function commitOnly(
  file: string,
  state: JournalState,
  loaded: LoadedRunbook,
  commit: ReturnType<typeof currentSyncCommit>,
  refusals: ServiceRefusal[],
  at: number,
): ResumePlan {
  return {
    done: new Map(),
    carriedFrom: file,
    ...carriedAtMostOnce(state, loaded),
    memory: {
      writesStopped: false,
      commitSent: true,
      commitAccepted: commit.accepted,
      ...forcedOf(commit),
      ...(refusals.length ? { serviceErrors: refusals } : {}),
    },
    ...(at >= 0 ? cutoverValuesOf(cutoverValuesFrom(state, loaded, at)) : {}),
  };
}

/** A `--from` run's plan that counts nothing of a journal of its cutover but its refusals (`refusalsWords`). */
function refusalsOnly(
  file: string,
  refusals: ServiceRefusal[],
  values: ReturnType<typeof cutoverValuesFrom> | undefined,
): ResumePlan {
  return {
    done: new Map(),
    carriedFrom: file,
    memory: { writesStopped: false, commitSent: false, commitAccepted: false, serviceErrors: refusals },
    ...(values ? cutoverValuesOf(values) : {}),
  };
}

/** `cutoverValuesFrom`'s answer as a plan's field (`ResumePlan.cutoverValues`): none when it has none. */
export const cutoverValuesOf = (
  values: ReturnType<typeof cutoverValuesFrom>,
): { cutoverValues?: NonNullable<ResumePlan["cutoverValues"]> } => (values ? { cutoverValues: values } : {});

/**
 * The current sync's one-shot commands a journal shows, per instance (`fromJournal`): a --resume of
 * the run's journal, or a later --from, reads only that journal, and must never send one again where
 * it may have arrived.
 */
function carriedAtMostOnce(state: JournalState, loaded: LoadedRunbook): { carriedCommands?: CarriedCommand[] } {
  const ids = loaded.runbook ? planSteps(loaded.runbook).map((s) => s.id) : [];
  const carriedCommands: CarriedCommand[] = state.commandsSent
    .slice((lastReverse(state)?.at ?? -1) + 1)
    .filter((c) => AT_MOST_ONCE.has(c.op))
    .map((c) => {
      const id = state.steps[c.stepIndex]?.id ?? `#${c.stepIndex + 1}`;
      const here = ids.indexOf(id);
      return {
        op: c.op,
        stepIndex: here >= 0 ? here : c.stepIndex,
        id,
        answers: c.perInstance.map((p) => ({ instance: p.instance, answered: p.answered })),
      };
    });
  return carriedCommands.length ? { carriedCommands } : {};
}
