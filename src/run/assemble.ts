/**
 * The run's assembly: from the options, everything a run needs before its first event (the
 * plan of steps, the event stream with the journal's failure noted and the write-stop window
 * folded in, the fleet and verifier clients, the plugins' context and notifiers, the memory and
 * undos a resume carries, the forced exit's report). The runner composes it with its steps.
 */
import { dirname } from "node:path";
import { commandTookEffect, type VerifierClient } from "../api/index.js";
import { ExitCode, UserError } from "../errors.js";
import {
  createFleet,
  createPollRecorder,
  createVerifier,
  stoppedInCommitWords,
  WindowTracker,
  type Fleet,
} from "../fleet/index.js";
import {
  createFleetTracker,
  createNotifierListener,
  pluginStepTitle,
  stepInfo,
  undoFor,
  UndoStack,
  forcedStop,
  type NotifierListener,
  type PluginRegistry,
  type PluginRunContext,
  type StepInfo,
} from "../plugin/index.js";
import { durationOr, type LoadedRunbook } from "../runbook/index.js";
import { instancesOf, type Runbook } from "../runbook/types.js";
import {
  newIdentityMemory,
  observeIdentity,
  traitsOf,
  UNDO_TIMEOUT_MS,
  type Defaults,
  type Prompter,
  type RunContext,
  type RunMemory,
  type WritesProbe,
  type EarlierHooks,
} from "../steps/index.js";
import { createEmitter, type Emitter } from "./emitter.js";
import { VerifyFailedTracker, type VerifyFailed } from "../model/verify-failed.js";
import {
  actsOn,
  type CarriedCommand,
  type CriticalListener,
  type Emit,
  type RunEvent,
  type RunEventOf,
  type RunListener,
} from "../events.js";
import { directionBefore, instanceTargets, planSteps, stepRange, type PlannedStep } from "./plan.js";
import { forcedReport } from "./unwind.js";
import { cutoverId, cutoverOfRun, newCutoverId } from "../journal/cutover.js";
import {
  lintCommand,
  MASKED_VAR_NOTE,
  runTarget,
  wayOnTarget,
  wayOnVarsKept,
  type CutoverValuesKnown,
} from "../next-run.js";

export { cutoverId };

export interface ResumePlan {
  /** Steps already done (by the journal, or adopted from the fleet's state): not run again. */
  done: ReadonlyMap<number, string>;
  /**
   * Of those, the command steps adopted: the fleet shows their command took effect. Journaled as
   * such (`step.skipped` with `adopted`), so that a later resume counts the command done.
   */
  adopted?: ReadonlySet<number>;
  /** What the earlier run established (writes stopped, start or commit sent). */
  memory: Partial<
    Pick<
      RunMemory,
      | "writesStopped"
      | "commitSent"
      | "commitWritesForced"
      | "commitAccepted"
      | "serviceErrors"
      | "split"
      | "reversed"
      | "reverseInDoubt"
      | "verifier"
    >
  >;
  /** Steps whose hook ran in the interrupted run and was not undone: their runbook `undo` is registered again. */
  undoSteps?: readonly number[];
  /**
   * A command the interrupted run sent to part of the fleet, to complete: its step runs again,
   * sending only to these instance indexes (kit/targets.ts), after the operator confirms.
   */
  complete?: { stepIndex: number; only: readonly number[]; why: string; forgive: readonly string[] };
  /**
   * A `--from` run that continues its cutover: the journal whose verifier memory `memory` carries.
   * The run journals it (`verifier.carried`): its own journal, which `--resume` reads, is whole.
   */
  verifierFrom?: string;
  /**
   * A `--from` run that counts what an earlier journal of its cutover established (src/run/earlier.ts
   * `fromJournal`): that journal. The run journals what it counted (`run.started.carried`), so that
   * a `--resume` of it, or a later `--from`, which read only its journal, count it too.
   */
  carriedFrom?: string;
  /** What that journal shows of the current sync's start, commit and reverse, per instance: journaled with it. */
  carriedCommands?: readonly CarriedCommand[];
  /**
   * The `--var` values the journal's runs decided their `when`s with (`--resume`; an `--abort` adds
   * those its last run that ran steps was given, `cutoverVars`): the run's end offers them, whatever
   * this run was given (an `--abort` without them is accepted).
   */
  decidedVars?: readonly string[];
  /**
   * The values the cutover runs with once this run begins (`cutoverValuesFrom`, src/run/earlier.ts):
   * journaled in `run.started` (`cutoverVars`, `cutoverGiven`). Absent: this run's own.
   */
  cutoverValues?: NonNullable<CutoverValuesKnown["cutoverValues"]>;
}

export interface RunOptions {
  loaded: LoadedRunbook;
  mode?: "run" | "rehearse" | "resume";
  registry: PluginRegistry;
  listeners?: RunListener[];
  /** Listeners that must record every event (the journal): if one throws, the run stops before the next request. */
  critical?: CriticalListener[];
  signal?: AbortSignal;
  prompt?: Prompter;
  /** Answer every confirm with yes (never lifts an interlock). */
  yes?: boolean;
  /** Ask before each step: run / skip / run the rest / abort. */
  stepMode?: boolean;
  from?: string;
  to?: string;
  /**
   * This run's own command again, as the arguments after `syncbook run <runbook>` (src/model/again.ts
   * `ownCommandArgs`): a failure whose way on it is journals it (`RunContext.again`).
   */
  againArgs?: readonly string[];
  /** Interlock checks to skip, by name. */
  force?: readonly string[];
  /**
   * `--only`: the command steps send to these instances only (names, URLs as written, or `#2`),
   * to complete a command the others have (kit/targets.ts). Needs `from`.
   */
  only?: readonly string[];
  resume?: ResumePlan;
  /**
   * `--abort`: the operator calls the cutover off. No step runs and nothing is sent to the
   * service: the undos of `resume.undoSteps` run, last first, and the run ends aborted (exit 0
   * when every undo succeeded, else 1). The caller refuses it once commit may have been sent.
   */
  abort?: boolean;
  /**
   * The events of the earlier runs of this cutover (a resumed journal's), oldest first: the run
   * knows from them when writes were stopped (the write-stop window spans runs).
   */
  history?: readonly RunEvent[];
  /**
   * Every run of this cutover before this one, in the order they started: those in other journals
   * (the runs a `--from` run continued) and `history`'s, joined as the report joins them
   * (`joinJournals`; src/cli/run.ts `cutoverRunsBefore`). The write-stop window and the cutover's
   * time are measured across them. Absent when no other journal holds a run: `history` is all.
   */
  earlierRuns?: readonly RunEvent[];
  /**
   * The id of the cutover this run continues when no history carries it (a `--from` run after an
   * unfinished one: src/journal/cutover.ts); a pager keeps one incident, a trace one trace id.
   */
  cutover?: string;
  /** Injected in tests; otherwise made from the runbook. */
  fleet?: Fleet;
  verifier?: VerifierClient;
  /** Where notify steps and console notifiers print. */
  print?: (line: string) => void;
  /** Given the run's recorder once its stream exists: the trace export journals what its collector acknowledged. */
  onRecord?: (record: Emit) => void;
  /** The `traceparent` hooks get (the trace listener's current span), when the run exports a trace. */
  traceparent?: () => string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
  /** Simulated seconds per wall second (rehearsals): the runbook's waits shrink with it. */
  timeScale?: number;
  /** Where the application's writes can be seen (a rehearsal): a stopWrites step passes only once they stopped. */
  writesProbe?: WritesProbe;
  /**
   * Marks the run's journal untrusted (src/journal/journal.ts `distrust`) before an undo runs that
   * the failed journal cannot record; returns why it could not. Without it such an undo does not run.
   */
  distrustJournal?: () => string | undefined;
  /** The hook processes earlier runs of this cutover left, asked by commit (src/run/orphans.ts `earlierHooksGate`). */
  earlierHooks?: EarlierHooks;
  /** Why no undo of a write stop may turn writes on, asked when one is due (src/steps/kit/context.ts `RunContext.earlierCommit`). */
  earlierCommit?: () => Promise<string | undefined>;
  /**
   * Aborted on a forced exit (a second Ctrl-C): the undo running is killed with its process
   * group, the rest do not run, and `onForceStop` gets (synchronously, before the process exits)
   * which undos did not finish and what state writes may be in; it is journaled too.
   */
  forceSignal?: AbortSignal;
  onForceStop?: (lines: string[]) => void;
  /** Ends the wait for notifications after the run at once (a Ctrl-C then); `onDrain` is told first how many wait. */
  drainSignal?: AbortSignal;
  onDrain?: (pending: number) => void;
}

/** Inside the write-stop window: every second of it is the application's downtime. */
export const WINDOW_POLL_MS = 100;

export function runDefaults(loaded: LoadedRunbook, timeScale = 1): Defaults {
  const d = loaded.runbook?.defaults ?? {};
  const scale = (ms: number): number => (timeScale === 1 ? ms : Math.max(20, ms / timeScale));
  return {
    pollMs: scale(durationOr(d.pollInterval, 2000)),
    timeoutMs: scale(durationOr(d.timeout, 30 * 60_000)),
    runbookTimeoutMs: durationOr(d.timeout, 30 * 60_000),
    requestTimeoutMs: durationOr(d.requestTimeout, 10_000),
    slowAfterMs: scale(durationOr(d.slowAfter, 5 * 60_000)),
    progressGiveUpMs: scale(durationOr(d.retry?.giveUpAfter, 180_000)),
    windowPollMs: scale(durationOr(d.windowPollInterval, WINDOW_POLL_MS)),
    scale,
  };
}

/** A run, assembled: its context, and what the runner needs to end it. */
export interface AssembledRun {
  started: number;
  loaded: LoadedRunbook;
  runbook: Runbook;
  steps: PlannedStep[];
  from: number;
  to: number;
  only: number[] | undefined;
  mode: NonNullable<RunOptions["mode"]>;
  signal: AbortSignal;
  emitter: Emitter;
  say: Emit;
  fleet: Fleet;
  verifier: VerifierClient | undefined;
  cutover: string;
  /** When the cutover's first run started, and how many runs it had before this one. */
  cutoverStart: { at: number; runsBefore: number };
  notifier: NotifierListener;
  memory: RunMemory;
  undo: UndoStack;
  undoAbort: AbortController;
  undoneOk: Set<number>;
  /** Steps whose undo started in this run (ok, failed or cut off): `unwind` fills it, a forced exit reads it. */
  undoStarted: Set<number>;
  /** Steps whose hook is owed an undo (`resume.undoSteps`) the runbook does not give: nothing can undo them from here. */
  undoless: StepInfo[];
  run: RunContext;
  /** The journal's first failure: the run stops before its next request. */
  journalError: () => unknown;
  /** The check an interlock refused last. */
  refused: () => string | undefined;
  /** The last verify step's failure in the runs that count (src/model/verify-failed.ts): the run's end names it. */
  verifyFailed: () => VerifyFailed | undefined;
}

export function assembleRun(opts: RunOptions): AssembledRun {
  const started = Date.now();
  const { loaded } = opts;
  const runbook = loaded.runbook;
  if (!runbook)
    throw new UserError(`${loaded.file} is not a valid runbook`, {
      hint: `Run ${lintCommand(loaded.file)} for the details.`,
      exitCode: ExitCode.usage,
    });
  const steps = planSteps(runbook, (kind, options) => pluginStepTitle(opts.registry, kind, options, loaded.redact));
  const { from, to } = stepRange(steps, opts.from, opts.to);
  const only = opts.only?.length ? instanceTargets(runbook, opts.only, opts.from, opts.to) : undefined;
  const mode = opts.mode ?? "run";
  const signal = opts.signal ?? new AbortController().signal;
  const defaults = runDefaults(loaded, opts.timeScale ?? 1);

  const emitter = createEmitter(opts.listeners ?? [], opts.critical ?? [], loaded.redact);
  // the write-stop window, folded from the events (the earlier runs' first): when a read first
  // shows the destination takes writes (canWrite of the first process, or every instance
  // COMMITTED), the next thing in the stream is `window.closed`
  const writeStop = new WindowTracker(traitsOf);
  const before = opts.earlierRuns ?? opts.history ?? [];
  for (const e of before) writeStop.apply(e);
  if (!writeStop.open && opts.resume?.memory.writesStopped && !before.length) writeStop.assumeOpen();
  writeStop.takeClosed();
  emitter.add((e) => writeStop.apply(e));
  // the last verify step's failure, by the read model's own fold of it: the run's end names it in
  // "not verified" as the report and the watch page do
  const verifyFailed = new VerifyFailedTracker(traitsOf);
  for (const e of before) verifyFailed.apply(e);
  emitter.add((e) => verifyFailed.apply(e));
  // the check an interlock refused last: the operator is told the way out that fits it. The fleet's
  // identity, refused before a command (`checkIdentity`, a step's decision; the run-wide notes of
  // `observeIdentity` carry no step), is one too: its way on is its own (src/cli/run.ts)
  let refused: string | undefined;
  emitter.add((e) => {
    if (
      e.type === "decision" &&
      (e.kind === "interlock" || (e.kind === "identity" && e.index !== undefined)) &&
      !e.ok &&
      e.check
    )
      refused = e.check;
  });
  // Only a critical listener (the journal) makes the emitter throw. Whichever event it fails on
  // (a request's, a step's start, a decision), the run notes it and stops before its next request:
  // every failure path ends the run promptly, with undo, never by hanging on a step's timer.
  let journalError: unknown;
  // an instance seen stopped during the commit (this run's reads, or the earlier runs' a resume
  // folds): said at once, as a warning, for a runbook with no writes-on hook to refuse too (it ended
  // "ok · committed" without a word of it)
  let toldStopped: string | undefined;
  const emit: Emit = (type, payload, options) => {
    try {
      const event = emitter.emit(type, payload, options);
      const closed = writeStop.takeClosed();
      if (closed) emitter.emit("window.closed", closed);
      const stopped = writeStop.stoppedInCommit();
      // said again when another instance is seen stopped after the first (its words grow)
      const words = stopped ? stoppedInCommitWords(stopped) : undefined;
      if (words !== undefined && words !== toldStopped) {
        toldStopped = words;
        emitter.emit("log", { level: "warn", message: words });
      }
      return event;
    } catch (err) {
      journalError ??= err;
      throw err;
    }
  };
  const say: Emit = (type, payload, options) => {
    try {
      return emit(type, payload, options);
    } catch {
      // the journal failed: what follows (the undo, the run's end) still reaches the operator
      try {
        return emitter.tell(type, payload);
      } catch {
        return { type, seq: -1, at: Date.now(), ...payload } as unknown as RunEvent;
      }
    }
  };
  // what the fleet and the verifier client record: its first failure stops the step at once (the
  // throw), and a request's line must always be in the journal before the request leaves; but once
  // the journal has failed, an answer or a sample it cannot take must not fail the read that got
  // it: the unwind still reads the fleet before it may turn writes back on (src/steps/kit/writes-on.ts)
  const record: Emit = (type, payload, options) =>
    journalError === undefined || type === "request.sent" ? emit(type, payload, options) : say(type, payload, options);
  opts.onRecord?.(say);
  const tracker = createFleetTracker();
  emitter.add(tracker.listener);
  // one request id sequence for the whole run: the journal and the report pair requests and answers by id
  let lastRequestId = 0;
  const requestId = (): number => ++lastRequestId;
  // an address the client cannot use (lint's instance-url rule, for a caller that skipped lint)
  // is the runbook's fault: a usage error with the (redacted) address, never an internal error
  const usable = <T>(make: () => T): T => {
    try {
      return make();
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
      throw new UserError(loaded.redact(err.message), {
        hint: `Run ${lintCommand(loaded.file)}: every instance and verifier URL must be a base address such as http://127.0.0.1:27182.`,
        exitCode: ExitCode.usage,
      });
    }
  };
  const fleet =
    opts.fleet ??
    usable(() =>
      createFleet({
        instances: instancesOf(runbook),
        requestTimeoutMs: defaults.requestTimeoutMs,
        emit: record,
        requestId,
        serviceVersion: runbook.serviceVersion,
        redact: loaded.redact,
        // counts and failures of polls are records, not preconditions of a request: never throw
        polls: createPollRecorder(say),
      }),
    );
  const verifier =
    opts.verifier ??
    (runbook.verifier
      ? usable(() =>
          createVerifier({
            url: runbook.verifier!,
            requestTimeoutMs: defaults.requestTimeoutMs,
            emit: record,
            requestId,
            polls: fleet.polls,
            redact: loaded.redact,
          }),
        )
      : undefined);
  // one id per cutover, the same on --resume, --abort and a --from run that continues it (the first
  // run's `run.started` carries it): a pager keeps one alert for it, a trace one trace id
  const runsBefore = before.filter((e): e is RunEventOf<"run.started"> => e.type === "run.started");
  const firstRun = runsBefore[0];
  const cutover = firstRun ? cutoverOfRun(firstRun) : (opts.cutover ?? newCutoverId(started, loaded.hash));
  const pctx: PluginRunContext = {
    runbook: { name: runbook.name, file: loaded.file },
    cutover,
    ...(opts.traceparent ? { traceparent: opts.traceparent } : {}),
    cwd: dirname(loaded.file),
    redact: loaded.redact,
    // a plugin's log line the journal cannot take must not fail the hook that did its work (an undo
    // that turned writes back on would read as failed): the run stops on the journal's error anyway
    log: (level, message) => void say("log", { level, message: loaded.redact(message) }),
    mode,
    fleet: tracker.snapshot,
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.print ? { print: opts.print } : {}),
  };
  const notifier = createNotifierListener(
    opts.registry,
    runbook.notify?.map((n) => ({
      use: n.use,
      on: n.on,
      ...(n.with ? { with: n.with } : {}),
    })),
    pctx,
    { record: say, ...(opts.history ? { history: opts.history } : {}) },
  );
  emitter.add(notifier);
  const memory: RunMemory = {
    writesStopped: false,
    commitSent: false,
    commitAccepted: false,
    serviceErrors: [],
    identity: newIdentityMemory(),
    verifier: {},
    acted: before.some(actsOn),
    actedNow: false,
    // a command step before the first one this cutover ran (a run that begins past its start, or
    // a --resume of one) may have left a sync on the fleet that no journal here shows: not only
    // hooks ran (an outside review: the hint offered --new-cutover on a fleet that ran the sync)
    sentToFleet:
      before.some(sendsToFleet) ||
      steps
        .slice(
          0,
          // a --resume begins where its journal says: the earlier runs' steps tell where the cutover began
          Math.min(
            opts.resume ? Infinity : from,
            ...before.flatMap((e) => (e.type === "step.started" ? [e.index] : [])),
          ),
        )
        .some((st) => st.bound.command !== undefined),
    ...opts.resume?.memory,
  };
  emitter.add((e) => {
    if (actsOn(e)) memory.acted = memory.actedNow = true;
    if (sendsToFleet(e)) memory.sentToFleet = true;
  });
  // a run that begins past the runbook's start syncs in its direction (a reverse before: either way).
  // An --abort runs no step (its plan marks none done): the runbook's start's direction, either way
  // when its journal shows a reverse that took effect, not the one its first read sees; else, after
  // a reverse, its undo read the sync the other way round as "no commit" and turned writes back on
  // where the run that stopped them (a new cutover, its commit refused) had kept them off
  const firstRuns = opts.abort
    ? steps.length
    : opts.resume
      ? (steps.find((s) => !opts.resume!.done.has(s.index))?.index ?? steps.length)
      : from;
  const direction = directionBefore(steps, firstRuns);
  if (direction && opts.abort) {
    if (memory.reversed !== undefined) direction.either = true;
    else delete direction.either;
  }
  if (direction) memory.identity.direction = direction;
  const undo = new UndoStack();
  const undoless: StepInfo[] = [];
  for (const i of opts.resume?.undoSteps ?? []) {
    const s = steps[i];
    const call = s?.bound.hookCall();
    if (!s || !call) continue;
    const info = stepInfo(s.index, s.id, s.kind, s.title, s.step, loaded.redact);
    // an undo the hook itself returned lived in the process that ran it: from here only the runbook's
    const entry = undoFor(
      opts.registry,
      call,
      { ok: true, durationMs: 0 },
      info,
      pctx,
      s.bound.undoTimeoutMs() ?? UNDO_TIMEOUT_MS,
    );
    if (entry) undo.push(entry);
    else undoless.push(info);
  }
  // every progress read of the run (waits, interlocks, reconcile) is checked for fleet identity:
  // instances that stop being one fleet after start must not be sent commit (issue 12 item 2)
  const observed: Fleet = {
    ...fleet,
    progress: async (sig, only) => {
      const snap = await fleet.progress(sig, only);
      observeIdentity(run, snap);
      // a commit sent with no answer (this run's, or an earlier run's a --from run carries): a
      // read that shows it took effect settles it, as "or was seen committing" says. Unsettled, a
      // --from run that waited for COMMITTED ended "not committed" on a COMMITTED fleet (an
      // adversarial run, 2026-12-02)
      if (memory.commitSent && !memory.commitAccepted)
        if (snap.instances.some((i) => commandTookEffect("commit", i.progress?.state) === true))
          memory.commitAccepted = true;
      return snap;
    },
  };
  // the runbook as every way on this run prints names it, with the cutover's --var values
  const target = wayOnTarget(loaded, opts.resume);
  const kept = wayOnVarsKept(loaded, opts.resume);
  const undoAbort = new AbortController();
  const undoneOk = new Set<number>();
  const undoStarted = new Set<number>();
  opts.forceSignal?.addEventListener(
    "abort",
    () => {
      // said before the kill, while the running undo is still known as running
      const lines = forcedReport(undo, memory, undoneOk, steps, { mode, target }, undoStarted);
      // the signals as interruptOnSignals names them ("Ctrl-C twice", "Ctrl-C, then SIGTERM")
      const why: unknown = opts.forceSignal?.reason;
      undoAbort.abort(forcedStop(`forced exit (${why instanceof Error ? why.message : "a second signal"})`));
      say("decision", { kind: "undo", ok: false, check: "forced-exit", reason: lines.join("; ") });
      opts.onForceStop?.(lines);
    },
    { once: true },
  );
  const run: RunContext = {
    loaded,
    target,
    targetKept: runTarget(loaded, kept.vars),
    keptNote: kept.masked ? MASKED_VAR_NOTE : "",
    ...(opts.againArgs ? { again: opts.againArgs } : {}),
    runbook,
    fleet: observed,
    verifier,
    emit,
    say,
    memory,
    window: writeStop,
    defaults,
    force: new Set(opts.force ?? []),
    yes: opts.yes ?? false,
    prompt: opts.prompt,
    plugins: { registry: opts.registry, ctx: pctx, undo },
    mode,
    writesProbe: opts.writesProbe,
    earlierHooks: opts.earlierHooks,
    earlierCommit: opts.earlierCommit,
  };
  return {
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
    cutoverStart: { at: firstRun?.at ?? started, runsBefore: runsBefore.length },
    notifier,
    memory,
    undo,
    undoAbort,
    undoneOk,
    undoStarted,
    undoless,
    run,
    journalError: () => journalError,
    refused: () => refused,
    verifyFailed: () => verifyFailed.failed,
  };
}

/** A request to the service (not the verifier's, nor a hook's): the cutover's sync may be on the fleet. */
const sendsToFleet = (e: RunEvent): boolean => e.type === "request.sent" && e.target === "service";
