/**
 * Running one step: its time limit and the run's AbortSignal, its start and end in the event
 * stream, and what a failure says (the message, the hint, the step's place in the runbook).
 */
import { setMaxListeners } from "node:events";
import { UserError, errorMessage } from "../errors.js";
import { durationOr, type LoadedRunbook } from "../runbook/index.js";
import type { Duration } from "../runbook/types.js";
import {
  StepFailure,
  StepTimeout,
  timeoutHint,
  type Defaults,
  type RunContext,
  type StepContext,
} from "../steps/index.js";
import { sourceLine, type Place } from "../text.js";
import { setLongTimeout } from "../timers.js";
import type { PlannedStep } from "./plan.js";

/**
 * A step's timing: its kind's own fields (a waitFor's `timeout`, `pollInterval`, `slowAfter`),
 * else the step's `timeout`, else the runbook's defaults; scaled in a rehearsal.
 */
function stepTiming(
  s: PlannedStep,
  defaults: Defaults,
): { timeoutMs: number; runbookTimeoutMs: number; pollMs: number; slowAfterMs: number } {
  const t = s.bound.timing();
  const own = (d: Duration | undefined, fallback: number): number =>
    d === undefined ? fallback : defaults.scale(durationOr(d, fallback));
  const timeout = t.timeout ?? s.step.timeout;
  return {
    timeoutMs: own(timeout, defaults.timeoutMs),
    // the limit as the runbook states it, for the words of a rehearsal's timeout
    runbookTimeoutMs:
      timeout === undefined ? defaults.runbookTimeoutMs : durationOr(timeout, defaults.runbookTimeoutMs),
    pollMs: own(t.pollInterval, defaults.pollMs),
    slowAfterMs: own(t.slowAfter, defaults.slowAfterMs),
  };
}

/** `interlock`: the step was refused by an interlock before it sent its command (exit 3). */
type StepResult =
  | "ok"
  | "interrupted"
  | {
      message: string;
      hint?: string;
      interlock?: boolean;
      place: Place;
      hintBeforeResume?: true;
      resumeFlags?: readonly string[];
      againArgs?: readonly string[];
    };

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
export function flushPolls(run: RunContext): void {
  try {
    run.fleet.polls.flush();
  } catch {
    // `say` already kept the journal's error for the run to act on
  }
}

export async function runStep(
  run: RunContext,
  s: PlannedStep,
  runSignal: AbortSignal,
  targets?: StepContext["targets"],
  promptMs = 0,
): Promise<StepResult> {
  const t0 = Date.now();
  const { timeoutMs, runbookTimeoutMs, pollMs, slowAfterMs } = stepTiming(s, run.defaults);
  const limit = new AbortController();
  // every in-flight request of a broadcast listens to the step's signal: 256 instances are not a leak
  setMaxListeners(0, limit.signal);
  // any length: `timeout: 30d` is past what one Node timer holds (src/timers.ts)
  const timer = setLongTimeout(() => limit.abort(new StepTimeout(timeoutMs, runbookTimeoutMs)), timeoutMs);
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
    const { message, hint } = explain(err, limit.signal, run);
    const beforeResume = err instanceof StepFailure && err.beforeResume && hint !== undefined;
    const resumeFlags = beforeResume ? err.resumeFlags : undefined;
    const againArgs = err instanceof StepFailure && hint !== undefined ? err.againArgs : undefined;
    const place = placeOf(run.loaded, s);
    run.say("step.finished", {
      index: s.index,
      id: s.id,
      outcome: "failed",
      durationMs: Date.now() - t0,
      error: message,
      ...(hint ? { hint } : {}),
      ...(beforeResume ? { hintBeforeResume: true as const } : {}),
      ...(resumeFlags ? { resumeFlags: [...resumeFlags] } : {}),
      ...(againArgs ? { againArgs: [...againArgs] } : {}),
      place,
    });
    const interlock = err instanceof StepFailure && err.reason === "interlock";
    return {
      message,
      place,
      ...(hint ? { hint } : {}),
      ...(interlock ? { interlock } : {}),
      ...(beforeResume ? { hintBeforeResume: true as const } : {}),
      ...(resumeFlags ? { resumeFlags } : {}),
      ...(againArgs ? { againArgs } : {}),
    };
  } finally {
    timer.clear();
    runSignal.removeEventListener("abort", onAbort);
    // not inside the write-stop window, where every ms is downtime, nor between its close and the
    // `writesOn` hook right after it (the application still cannot write): the counts wait for
    // the next step's end (or the minute's summary, or the run's end)
    if (!run.window.open && !writesOnNext(run, s)) flushPolls(run);
  }
}

/** The runbook's step after `s` is a hook that turns the application's writes back on. */
function writesOnNext(run: RunContext, s: PlannedStep): boolean {
  const next = run.runbook.steps[s.index + 1] as { hook?: { writesOn?: unknown } } | undefined;
  return next?.hook?.writesOn === true;
}

/** `interrupted by SIGINT` → `by SIGINT`; a reason that says no more than "interrupted" → "Ctrl-C or a signal". */
function interruptCause(reason: unknown): string {
  const m = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "";
  const rest = m.replace(/^interrupted\b\s*:?\s*/i, "").trim();
  return rest || "stopped by Ctrl-C or a signal";
}

function explain(err: unknown, signal: AbortSignal, run: RunContext): { message: string; hint?: string } {
  const redact = run.loaded.redact;
  if (err instanceof StepFailure || err instanceof UserError)
    return { message: redact(err.message), ...(err.hint ? { hint: redact(err.hint) } : {}) };
  // whatever a step threw when its time limit aborted it (a bare "The operation was aborted" from
  // a timer or a request), the reason is the limit: say that, never the bare abort
  const reason: unknown = signal.aborted ? signal.reason : err;
  if (reason instanceof StepTimeout)
    return {
      message: `timed out after ${reason.limitText} (the step's time limit)${err instanceof StepTimeout || isAbort(err) ? "" : `: ${redact(errorMessage(err))}`}`,
      hint: redact(timeoutHint(run, "")),
    };
  return { message: redact(errorMessage(err)) };
}

const isAbort = (err: unknown): boolean =>
  err instanceof Error && (err.name === "AbortError" || err.message === "The operation was aborted");
