/**
 * The runner: steps in order against the whole fleet, every step with its time limit and the
 * run's AbortSignal, interlocks before commands, undo of hooks when the run fails or is
 * interrupted before commit. It only emits events; the UI, journal, notifiers and reports listen.
 */
import { setMaxListeners } from "node:events";
import { hostname, userInfo } from "node:os";
import { dirname } from "node:path";
import type { VerifierClient } from "../api/index.js";
import { isCommandOperation } from "../api/commands.js";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import { createFleet, createPollRecorder, createVerifier, WindowTracker, type Fleet } from "../fleet/index.js";
import {
  createFleetTracker,
  createNotifierListener,
  pluginStepTitle,
  stepInfo,
  undoFor,
  UndoStack,
  forcedStop,
  type PluginRegistry,
  type PluginRunContext,
} from "../plugin/index.js";
import { durationOr, formatDuration, type LoadedRunbook } from "../runbook/index.js";
import { instancesOf, type Duration } from "../runbook/types.js";
import {
  newIdentityMemory,
  observeIdentity,
  opensWriteStop,
  StepFailure,
  StepTimeout,
  UNDO_TIMEOUT_MS,
  type Defaults,
  type Prompter,
  type RunContext,
  type RunMemory,
  type StepContext,
  type WritesProbe,
} from "../steps/index.js";
import { createEmitter } from "./emitter.js";
import { hookWatch } from "../steps/hook.js";
import { withProcessWatch } from "../plugin/process.js";
import { sourceLine, type Place } from "../text.js";
import { setLongTimeout } from "../timers.js";
import type { CriticalListener, Emit, Outcome, RunEvent, RunEventOf, RunListener } from "../events.js";
import { instanceTargets, planSteps, stepRange, type PlannedStep } from "./plan.js";
import { SYNCBOOK_VERSION } from "../version.js";

export interface ResumePlan {
  /** Steps already done (by the journal, or adopted from the fleet's state): not run again. */
  done: ReadonlyMap<number, string>;
  /** What the earlier run established (writes stopped, start or commit sent). */
  memory: Partial<
    Pick<RunMemory, "writesStopped" | "commitSent" | "commitAccepted" | "serviceErrors" | "split" | "verifier">
  >;
  /** Steps whose hook ran in the interrupted run and was not undone: their runbook `undo` is registered again. */
  undoSteps?: readonly number[];
  /**
   * A command the interrupted run sent to part of the fleet, to complete: its step runs again,
   * sending only to these instance indexes (kit/targets.ts), after the operator confirms.
   */
  complete?: { stepIndex: number; only: readonly number[]; why: string; forgive: readonly string[] };
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
  /** Injected in tests; otherwise made from the runbook. */
  fleet?: Fleet;
  verifier?: VerifierClient;
  /** Where notify steps and console notifiers print. */
  print?: (line: string) => void;
  /** The `traceparent` hooks get (the trace listener's current span), when the run exports a trace. */
  traceparent?: () => string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
  /** Simulated seconds per wall second (rehearsals): the runbook's waits shrink with it. */
  timeScale?: number;
  /** Where the application's writes can be seen (a rehearsal): a stopWrites step passes only once they stopped. */
  writesProbe?: WritesProbe;
  /**
   * Aborted on a forced exit (a second Ctrl-C): the undo running is killed with its process
   * group, the rest do not run, and `onForceStop` gets (synchronously, before the process exits)
   * which undos did not finish and what state writes may be in; it is journaled too.
   */
  forceSignal?: AbortSignal;
  onForceStop?: (lines: string[]) => void;
}

export interface RunResult {
  outcome: Outcome;
  exitCode: number;
  /** Commit was sent in this run (or an earlier one, on resume). */
  commitSent: boolean;
  /** Commit was accepted by at least one instance: the cutover happened (or is happening). */
  committed: boolean;
  /** A command that reached part of the fleet and was refused by the rest (`--resume` completes it). */
  split?: string;
  /** `--abort` ended it: no step ran, the open undos did. */
  aborted?: boolean;
  /** The interlock check whose refusal stopped the run (exit 3), e.g. `writes-stopped`. */
  refused?: string;
  message?: string;
  hint?: string;
  failedStep?: string;
  /** Where the failed step is in the runbook. */
  place?: Place;
  /** The way on is not `--resume` but a new run with these flags (`--from stop-writes`): the journal is wrong about writes. */
  rerunWith?: string;
  durationMs: number;
}

/** Inside the write-stop window: every second of it is the application's downtime. */
export const WINDOW_POLL_MS = 100;

export function runDefaults(loaded: LoadedRunbook, timeScale = 1): Defaults {
  const d = loaded.runbook?.defaults ?? {};
  const scale = (ms: number): number => (timeScale === 1 ? ms : Math.max(20, ms / timeScale));
  return {
    pollMs: scale(durationOr(d.pollInterval, 2000)),
    timeoutMs: scale(durationOr(d.timeout, 30 * 60_000)),
    requestTimeoutMs: durationOr(d.requestTimeout, 10_000),
    slowAfterMs: scale(durationOr(d.slowAfter, 5 * 60_000)),
    progressGiveUpMs: scale(durationOr(d.retry?.giveUpAfter, 180_000)),
    windowPollMs: scale(durationOr(d.windowPollInterval, WINDOW_POLL_MS)),
    scale,
  };
}

/**
 * A step's timing: its kind's own fields (a waitFor's `timeout`, `pollInterval`, `slowAfter`),
 * else the step's `timeout`, else the runbook's defaults; scaled in a rehearsal.
 */
function stepTiming(s: PlannedStep, defaults: Defaults): { timeoutMs: number; pollMs: number; slowAfterMs: number } {
  const t = s.bound.timing();
  const own = (d: Duration | undefined, fallback: number): number =>
    d === undefined ? fallback : defaults.scale(durationOr(d, fallback));
  return {
    timeoutMs: own(t.timeout ?? s.step.timeout, defaults.timeoutMs),
    pollMs: own(t.pollInterval, defaults.pollMs),
    slowAfterMs: own(t.slowAfter, defaults.slowAfterMs),
  };
}

export async function runRunbook(opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const { loaded } = opts;
  const runbook = loaded.runbook;
  if (!runbook)
    throw new UserError(`${loaded.file} is not a valid runbook`, {
      hint: `Run \`syncbook lint ${loaded.file}\` for the details.`,
      exitCode: ExitCode.usage,
    });
  const steps = planSteps(runbook, (kind, options) => pluginStepTitle(opts.registry, kind, options, loaded.redact));
  const { from, to } = stepRange(steps, opts.from, opts.to);
  const only = opts.only?.length ? instanceTargets(runbook, opts.only, opts.from) : undefined;
  const mode = opts.mode ?? "run";
  const signal = opts.signal ?? new AbortController().signal;
  const defaults = runDefaults(loaded, opts.timeScale ?? 1);

  const emitter = createEmitter(opts.listeners ?? [], opts.critical ?? [], loaded.redact);
  // the write-stop window, folded from the events (the earlier runs' first): when a read first
  // shows canWrite on every instance, the next thing in the stream is `window.closed`
  const writeStop = new WindowTracker();
  for (const e of opts.history ?? []) writeStop.apply(e);
  if (!writeStop.open && opts.resume?.memory.writesStopped && !opts.history?.length) writeStop.assumeOpen();
  writeStop.takeClosed();
  emitter.add((e) => writeStop.apply(e));
  // the check an interlock refused last: the operator is told the way out that fits it
  let refused: string | undefined;
  emitter.add((e) => {
    if (e.type === "decision" && e.kind === "interlock" && !e.ok && e.check) refused = e.check;
  });
  // Only a critical listener (the journal) makes the emitter throw. Whichever event it fails on
  // (a request's, a step's start, a decision), the run notes it and stops before its next request:
  // every failure path ends the run promptly, with undo, never by hanging on a step's timer.
  let journalError: unknown;
  const emit: Emit = (type, payload, options) => {
    try {
      const event = emitter.emit(type, payload, options);
      const closed = writeStop.takeClosed();
      if (closed) emitter.emit("window.closed", closed);
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
        hint: `Run \`syncbook lint ${loaded.file}\`: every instance and verifier URL must be a base address such as http://127.0.0.1:27182.`,
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
        emit,
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
            emit,
            requestId,
            polls: fleet.polls,
            redact: loaded.redact,
          }),
        )
      : undefined);
  // one id per cutover, the same on --resume (the first run's `run.started` is in the history and
  // carries it): a pager keeps one alert for it, a trace one trace id
  const firstRun = opts.history?.find((e): e is RunEventOf<"run.started"> => e.type === "run.started");
  const cutover = firstRun
    ? (firstRun.cutover ?? cutoverId(firstRun.at, firstRun.hash))
    : cutoverId(started, loaded.hash);
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
  );
  emitter.add(notifier);
  const memory: RunMemory = {
    writesStopped: false,
    commitSent: false,
    commitAccepted: false,
    serviceErrors: [],
    identity: newIdentityMemory(),
    verifier: {},
    ...opts.resume?.memory,
  };
  const undo = new UndoStack();
  for (const i of opts.resume?.undoSteps ?? []) {
    const s = steps[i];
    const call = s?.bound.hookCall();
    if (!s || !call) continue;
    const info = stepInfo(s.index, s.id, s.kind, s.title, s.step, loaded.redact);
    undo.push(
      undoFor(opts.registry, call, { ok: true, durationMs: 0 }, info, pctx, s.bound.undoTimeoutMs() ?? UNDO_TIMEOUT_MS),
    );
  }
  // every progress read of the run (waits, interlocks, reconcile) is checked for fleet identity:
  // instances that stop being one fleet after start must not be sent commit (issue 12 item 2)
  const observed: Fleet = {
    ...fleet,
    progress: async (sig) => {
      const snap = await fleet.progress(sig);
      observeIdentity(run, snap);
      return snap;
    },
  };
  const undoAbort = new AbortController();
  const undoneOk = new Set<number>();
  opts.forceSignal?.addEventListener(
    "abort",
    () => {
      // said before the kill, while the running undo is still known as running
      const lines = forcedReport(undo, memory, undoneOk, steps);
      undoAbort.abort(forcedStop("forced exit (Ctrl-C twice)"));
      say("decision", { kind: "undo", ok: false, check: "forced-exit", reason: lines.join("; ") });
      opts.onForceStop?.(lines);
    },
    { once: true },
  );
  const run: RunContext = {
    loaded,
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
  };

  say("run.started", {
    runbook: runbook.name,
    file: loaded.file,
    hash: loaded.hash,
    cutover,
    by: whoRuns(),
    syncbook: SYNCBOOK_VERSION,
    format: runbook.runbook,
    ...(runbook.serviceVersion !== undefined ? { serviceVersion: runbook.serviceVersion } : {}),
    instances: fleet.refs,
    ...(runbook.verifier ? { verifier: loaded.redact(runbook.verifier) } : {}),
    mode,
    steps: steps.map((s) => ({ index: s.index, id: s.id, kind: s.kind, title: loaded.redact(s.title) })),
  });
  for (const f of run.force)
    say("decision", {
      kind: "force",
      ok: true,
      check: f,
      reason: `--force=${f}: this interlock will be skipped if it refuses`,
    });

  let outcome: Outcome = "ok";
  let failure:
    | { message: string; hint?: string; step: string; interlock?: boolean; place?: Place; rerunWith?: string }
    | undefined;
  let askEachStep = opts.stepMode === true;
  // time the operator spent answering --step prompts since the last step started
  let promptMs = 0;

  const journalFailure = (step: string): NonNullable<typeof failure> => ({
    message: `the journal could not be written (${errorMessage(journalError)}): the run stopped before sending anything more`,
    step,
    hint: "Free disk space or fix the journal folder, then --resume: the journal has every command sent so far.",
  });
  if (opts.abort) {
    outcome = "failed";
    failure = { message: "aborted by the operator (--abort)", step: "" };
    say("decision", {
      kind: "undo",
      ok: true,
      check: "abort",
      reason: "--abort: the operator called the cutover off: no step runs and nothing is sent to the service",
    });
  }
  for (const s of opts.abort ? [] : steps) {
    if (journalError) {
      outcome = "failed";
      failure = journalFailure(s.id);
      break;
    }
    const skip = skipReason(s, { from, to, resume: opts.resume });
    if (skip) {
      say("step.skipped", { index: s.index, id: s.id, reason: skip });
      continue;
    }
    if (signal.aborted) {
      outcome = "interrupted";
      break;
    }
    if (askEachStep && opts.prompt) {
      let choice: Awaited<ReturnType<Prompter["stepChoice"]>>;
      const asked = Date.now();
      try {
        choice = await opts.prompt.stepChoice({ index: s.index, id: s.id, kind: s.kind, title: s.title }, signal);
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
      : only && isCommandOperation(s.kind)
        ? { only, why: `--only ${opts.only?.join(",") ?? ""}` }
        : undefined;
    const result = await runStep(run, s, signal, targets, promptMs);
    promptMs = 0;
    if (journalError) {
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
    if (s.step.continueOnError) {
      say("log", {
        level: "warn",
        index: s.index,
        message: `step ${s.id} failed; continueOnError lets the run go on`,
      });
      continue;
    }
    outcome = "failed";
    failure = {
      message: `step ${s.id} failed: ${result.message}`,
      step: s.id,
      place: result.place,
      ...(result.hint ? { hint: result.hint } : {}),
      ...(result.interlock ? { interlock: true } : {}),
    };
    break;
  }

  const owed = undo.unfinished().map((u) => u.entry.step);
  if (outcome !== "ok") await unwind(run, undoAbort.signal, undoneOk);
  flushPolls(run);
  if (journalError && failure) failure = { ...failure, ...writesAfterJournalFailure(failure, memory, undoneOk, steps) };
  const abortFailed = opts.abort ? owed.filter((st) => !undoneOk.has(st.index)) : [];
  if (opts.abort && failure) failure.message = abortMessage(owed, abortFailed, steps);

  const exitCode =
    outcome === "ok" || (opts.abort && abortFailed.length === 0)
      ? ExitCode.ok
      : outcome === "interrupted"
        ? ExitCode.interrupted
        : failure?.interlock
          ? ExitCode.interlock
          : ExitCode.failed;
  const durationMs = Date.now() - started;
  say("run.finished", {
    outcome,
    exitCode,
    committed: memory.commitAccepted,
    durationMs,
    ...(failure ? { message: failure.message } : {}),
    ...(memory.split ? { split: memory.split } : {}),
    ...(opts.abort ? { aborted: true } : {}),
  });
  await notifier.flush();
  await emitter.settle();
  // the fleet's own keep-alive connections (an injected fleet is its owner's to close)
  if (!opts.fleet) await fleet.close().catch(() => undefined);
  if (!opts.verifier) await verifier?.close().catch(() => undefined);
  return {
    outcome,
    exitCode,
    commitSent: memory.commitSent,
    committed: memory.commitAccepted,
    ...(memory.split ? { split: memory.split } : {}),
    ...(opts.abort ? { aborted: true } : {}),
    durationMs,
    ...(failure
      ? {
          ...(failure.interlock && refused ? { refused } : {}),
          message: failure.message,
          failedStep: failure.step,
          ...(failure.hint ? { hint: failure.hint } : {}),
          ...(failure.place ? { place: failure.place } : {}),
          ...(failure.rerunWith ? { rerunWith: failure.rerunWith } : {}),
        }
      : {}),
  };
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

/** `interlock`: the step was refused by an interlock before it sent its command (exit 3). */
type StepResult = "ok" | "interrupted" | { message: string; hint?: string; interlock?: boolean; place: Place };

/** A step's place in the runbook: its kind key (`commit:`), with that line's redacted text. */
function placeOf(loaded: LoadedRunbook, s: PlannedStep): Place {
  const at = loaded.locate(["steps", s.index, s.pluginKind ?? s.kind], { key: true });
  const source = sourceLine(loaded.text, at.line);
  const key = s.pluginKind ?? s.kind;
  return {
    file: loaded.file,
    line: at.line,
    column: at.column,
    width: key.length,
    ...(source !== undefined ? { source: loaded.redact(source) } : {}),
  };
}

/**
 * For a step's start and a successful end: written at once (a crash of the process loses
 * neither), made durable by the next line that is fsynced — a request or a hook, which fsync
 * before they act, a failure, the run's end. Between a wait that is met and the command after it
 * (inside the write-stop window) that saves an fsync per step: tens of ms on a busy disk. A power
 * loss before that line can only make `--resume` run such a step again, which reads the fleet.
 */
const DURABLE_WITH_NEXT = { more: true } as const;

/** The polls' counts into the stream (`polls.summary`); a record, so a failure here stops nothing. */
function flushPolls(run: RunContext): void {
  try {
    run.fleet.polls.flush();
  } catch {
    // `say` already kept the journal's error for the run to act on
  }
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

async function runStep(
  run: RunContext,
  s: PlannedStep,
  runSignal: AbortSignal,
  targets?: StepContext["targets"],
  promptMs = 0,
): Promise<StepResult> {
  const t0 = Date.now();
  const { timeoutMs, pollMs, slowAfterMs } = stepTiming(s, run.defaults);
  const limit = new AbortController();
  // every in-flight request of a broadcast listens to the step's signal: 256 instances are not a leak
  setMaxListeners(0, limit.signal);
  // any length: `timeout: 30d` is past what one Node timer holds (src/timers.ts)
  const timer = setLongTimeout(() => limit.abort(new StepTimeout(timeoutMs)), timeoutMs);
  const onAbort = () => limit.abort(runSignal.reason instanceof Error ? runSignal.reason : new Error("interrupted"));
  runSignal.addEventListener("abort", onAbort, { once: true });
  const ctx: StepContext = {
    run,
    index: s.index,
    id: s.id,
    kind: s.kind,
    title: s.title,
    step: s.step,
    signal: limit.signal,
    timeoutMs,
    pollMs,
    slowAfterMs,
    ...(targets ? { targets } : {}),
  };
  try {
    // inside the try: a journal that cannot record the start still clears the step's timer below
    run.emit(
      "step.started",
      {
        index: s.index,
        id: s.id,
        kind: s.kind,
        title: run.loaded.redact(s.title),
        ...(promptMs > 0 ? { promptMs } : {}),
        timeoutMs,
      },
      DURABLE_WITH_NEXT,
    );
    await s.bound.run(ctx);
    run.say(
      "step.finished",
      { index: s.index, id: s.id, outcome: "ok", durationMs: Date.now() - t0 },
      DURABLE_WITH_NEXT,
    );
    return "ok";
  } catch (err) {
    if (runSignal.aborted) {
      run.say("step.finished", {
        index: s.index,
        id: s.id,
        outcome: "interrupted",
        durationMs: Date.now() - t0,
        // what interrupted it (`by SIGINT`), not the outcome again ("interrupted: interrupted")
        error: interruptCause(runSignal.reason),
      });
      return "interrupted";
    }
    const { message, hint } = explain(err, limit.signal, run.loaded.redact);
    const place = placeOf(run.loaded, s);
    run.say("step.finished", {
      index: s.index,
      id: s.id,
      outcome: "failed",
      durationMs: Date.now() - t0,
      error: message,
      ...(hint ? { hint } : {}),
      place,
    });
    const interlock = err instanceof StepFailure && err.reason === "interlock";
    return { message, place, ...(hint ? { hint } : {}), ...(interlock ? { interlock } : {}) };
  } finally {
    timer.clear();
    runSignal.removeEventListener("abort", onAbort);
    // not inside the write-stop window, where every ms is downtime: the counts wait for the
    // window's end (or the minute's summary, or the run's end)
    if (!run.window.open) flushPolls(run);
  }
}

/** `interrupted by SIGINT` → `by SIGINT`; a reason that says no more than "interrupted" → "Ctrl-C or a signal". */
function interruptCause(reason: unknown): string {
  const m = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "";
  const rest = m.replace(/^interrupted\b\s*:?\s*/i, "").trim();
  return rest || "stopped by Ctrl-C or a signal";
}

function explain(err: unknown, signal: AbortSignal, redact: (s: string) => string): { message: string; hint?: string } {
  if (err instanceof StepFailure || err instanceof UserError)
    return { message: redact(err.message), ...(err.hint ? { hint: redact(err.hint) } : {}) };
  // whatever a step threw when its time limit aborted it (a bare "The operation was aborted" from
  // a timer or a request), the reason is the limit: say that, never the bare abort
  const reason: unknown = signal.aborted ? signal.reason : err;
  if (reason instanceof StepTimeout)
    return {
      message: `timed out after ${formatDuration(reason.ms)} (the step's time limit)${err instanceof StepTimeout || isAbort(err) ? "" : `: ${redact(errorMessage(err))}`}`,
      hint: "Raise the step's `timeout`.",
    };
  return { message: redact(errorMessage(err)) };
}

const isAbort = (err: unknown): boolean =>
  err instanceof Error && (err.name === "AbortError" || err.message === "The operation was aborted");

/** Before commit, a failed or interrupted run undoes every hook that ran, last first. */
/**
 * What a forced exit leaves behind: the undos that did not finish (the running one is killed)
 * and what that means for application writes. Steps are numbered from 1, as in the task list.
 */
function forcedReport(
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
function writesAfterJournalFailure(
  failure: { message: string; hint?: string },
  memory: RunMemory,
  undoneOk: ReadonlySet<number>,
  steps: readonly PlannedStep[],
): { message: string; hint?: string; rerunWith?: string } {
  if (memory.commitSent || !memory.writesStopped) return failure;
  const stops = steps.filter((s) => s.kind === "stopWrites");
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

async function unwind(run: RunContext, signal: AbortSignal, undoneOk: Set<number>): Promise<void> {
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
        started: (e) => watch.begin({ index: e.step.index, id: e.step.id, use: e.use, undo: true }, run.say),
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
function abortMessage(
  owed: readonly { index: number; id: string; kind: string }[],
  failed: readonly { index: number; id: string; kind: string }[],
  steps: readonly PlannedStep[],
): string {
  const name = (st: { index: number; id: string }): string => `step ${st.index + 1} "${st.id}"`;
  if (owed.length === 0)
    return "aborted by the operator (--abort): the journal shows no hook whose undo was still owed: nothing was undone, nothing was sent";
  const stop = owed.find((st) => st.kind === "stopWrites");
  const stopFailed = failed.find((st) => st.kind === "stopWrites");
  const writes = stopFailed
    ? `writes may still be stopped: the undo of ${name(stopFailed)} failed`
    : stop
      ? `writes are back on (the undo of ${name(stop)} succeeded)`
      : steps.some((st) => st.kind === "stopWrites")
        ? "no stopWrites was open"
        : "the runbook stops no writes";
  return failed.length
    ? `aborted by the operator (--abort), but ${failed.length} of ${owed.length} undo(s) failed (${failed.map(name).join(", ")}): ${writes}`
    : `aborted by the operator (--abort): ${owed.length} undo(s) ran (${owed.map(name).join(", ")}): ${writes}; nothing was sent to the service`;
}

/** `20261127T001500Z-1a2b3c4d`: when the cutover's first run started, and which runbook text it ran. */
export function cutoverId(firstStartedAt: number, runbookHash: string): string {
  const at = new Date(firstStartedAt).toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
  return `${at}-${runbookHash.replace(/^sha256:/, "").slice(0, 8)}`;
}
