/**
 * Waiting until a condition holds (a `poll` of the whole fleet): the step returns as soon as a
 * read meets the condition, so the next step's first request follows within a poll interval of
 * the fleet meeting it.
 *
 * While it waits it says why it is not over (`wait.status`: who fails which condition, with the
 * value, since when) — on every change and at least every 10 s — and emits `wait.slow` once a
 * stall (same lag, copied bytes and events applied everywhere) lasts `slowAfterMs`. The status
 * that says met carries `unmetAt`, the answer of the last read that found it unmet: the
 * condition became true after it, as far as polls can tell (the window's shares use it).
 *
 * Inside the write-stop window (writes stopped, the destination not taking writes yet) every
 * second is the application's downtime: the wait polls at most `windowPollMs` apart (with
 * jitter) instead of its interval. Reads stay sequential, one request in flight per instance (the fleet joins any other).
 * With three instances or more it watches instead (`createWatch`): between whole reads it reads
 * one instance at a time, in turn, and reads the whole fleet the moment one of them shows the
 * condition turn, within the same load (issue 41). Only whole reads are judged.
 */
import type { VerifierProgress } from "../../api/index.js";
import { errorMessage } from "../../errors.js";
import {
  progressSignature,
  type Evaluation,
  type FailingCondition,
  type FleetSnapshot,
  type InstanceSample,
} from "../../fleet/index.js";
import { delayUntil } from "../../timers.js";
import { formatDuration } from "../../runbook/index.js";
import { StepFailure, StepTimeout, timeoutHint, type StepContext } from "./context.js";
import { poll } from "./poll.js";
import { observeVerifier } from "./earned.js";

export interface WaitOptions {
  pollMs: number;
  slowAfterMs: number;
  /** Also read the verifier's progress on every poll. */
  verifier?: boolean;
  evaluate(snapshot: FleetSnapshot, verifier: VerifierProgress | undefined): Evaluation;
  /** What is awaited, for the timeout message ("canCommit true, lagBelow 5"). */
  describe: string;
  /** What the condition reads on one instance (`instanceSignature`): lets the wait watch inside the write-stop window. */
  watch?: (sample: InstanceSample) => string;
  /**
   * The instances the condition's verdict reads (`conditionReads`; undefined: every one). Inside
   * the write-stop window a wait that reads fewer than every instance reads only those, and the
   * whole fleet (for people: the live view, the journal) at most every `WHOLE_EVERY` intervals.
   */
  reads?: readonly number[];
}

export interface WaitResult {
  snapshot: FleetSnapshot;
  verifier: VerifierProgress | undefined;
}

const STATUS_EVERY_MS = 10_000;

export async function waitUntil(ctx: StepContext, opts: WaitOptions): Promise<WaitResult> {
  const { run } = ctx;
  const since = new Map<string, number>();
  let lastStatus = "";
  let lastStatusAt = 0;
  let signature = "";
  let sigSince = Date.now();
  let slowSent = false;
  let failing: FailingCondition[] = [];
  let unmetAt: number | undefined;

  const judge = ({ snapshot, verifier }: WaitResult): WaitResult | undefined => {
    const ev = opts.evaluate(snapshot, verifier);
    const now = Date.now();
    const keys = new Set(ev.failing.map((f) => `${f.instance}\u0000${f.condition}`));
    for (const k of [...since.keys()]) if (!keys.has(k)) since.delete(k);
    for (const k of keys) if (!since.has(k)) since.set(k, now);
    failing = ev.failing;
    const status = JSON.stringify([ev.met, ev.failing]);
    if (status !== lastStatus || now - lastStatusAt >= STATUS_EVERY_MS || ev.met) {
      run.emit("wait.status", {
        index: ctx.index,
        id: ctx.id,
        met: ev.met,
        failing: ev.failing.map((f) => ({
          ...f,
          sinceMs: now - (since.get(`${f.instance}\u0000${f.condition}`) ?? now),
        })),
        ...(ev.met && unmetAt !== undefined ? { unmetAt } : {}),
      });
      lastStatus = status;
      lastStatusAt = now;
    }
    if (ev.met) return { snapshot, verifier };
    unmetAt = now;

    const sig = progressSignature(snapshot, verifier);
    if (sig !== signature) {
      signature = sig;
      sigSince = now;
      slowSent = false;
    } else if (!slowSent && now - sigSince >= opts.slowAfterMs) {
      slowSent = true;
      run.emit("wait.slow", {
        index: ctx.index,
        id: ctx.id,
        stalledForMs: now - sigSince,
        detail: `no progress for ${formatDuration(now - sigSince)} while waiting for ${opts.describe}: ${describeFailing(failing)}`,
      });
    }
    return undefined;
  };

  // the verifier has no instance to watch: a wait that reads it keeps its interval
  const watch = opts.watch && !opts.verifier ? createWatch(ctx, opts.watch, opts.pollMs) : undefined;
  const n = run.fleet.refs.length;
  const few = opts.reads && opts.reads.length > 0 && opts.reads.length < n && !opts.verifier ? opts.reads : undefined;
  const judged = few?.length ?? n;
  let watching = false;
  let atBound = false;
  let lastWhole = -Infinity;
  try {
    const r = await poll({
      read: async (signal) => {
        if (watching) await watch?.untilChange(signal);
        watch?.wholeStarts();
        const t = performance.now();
        const only = atBound && few && t - lastWhole < WHOLE_EVERY * windowBound(ctx, opts.pollMs) ? few : undefined;
        if (!only) lastWhole = t;
        const snapshot = await run.fleet.progress(signal, only);
        watch?.whole(snapshot);
        const verifier = opts.verifier && run.verifier ? await readVerifier(ctx) : undefined;
        return { snapshot, verifier };
      },
      judge,
      every: () => {
        // the watch paces the reads itself: the next whole read starts when it says
        watching = judged >= WATCH_MIN_INSTANCES && watch?.applies() === true;
        atBound = !watching && ctx.run.window.open && judged < WATCH_MIN_INSTANCES && !opts.verifier;
        return watching ? 0 : atBound ? boundIntervalNow(ctx, opts.pollMs) : pollIntervalNow(ctx, opts.pollMs);
      },
      signal: ctx.signal,
    });
    if (!r.done) throw new Error("unreachable: a wait without giveUpMs always ends with a result");
    return r.result;
  } catch (err) {
    if (ctx.signal.aborted) throw abortReason(ctx, failing, opts);
    throw err;
  }
}

/**
 * The interval to the next read. Inside the write-stop window: `windowPollMs` (or the wait's own,
 * if smaller) is the longest gap, and each gap is drawn between half of it and all of it (jitter:
 * runners and instances do not fall into step; a condition that turns true is seen within one
 * interval and, on average, after three eighths of it). Elsewhere: `pollMs`.
 */
export function pollIntervalNow(ctx: StepContext, pollMs: number, random: () => number = Math.random): number {
  if (!ctx.run.window.open) return pollMs;
  const fast = Math.min(pollMs, ctx.run.defaults.windowPollMs);
  return fast * (0.5 + 0.5 * random());
}

/** The bound inside the write-stop window: no instance read more than twice in any of these ms. */
export function windowBound(ctx: StepContext, pollMs: number): number {
  return Math.min(pollMs, ctx.run.defaults.windowPollMs);
}

/**
 * The interval to the next read of a wait inside the write-stop window that reads one or two
 * instances (the condition reads only the first process, or the fleet is that small): at the
 * bound, each gap drawn between half of it and 55 % of it, so a condition that turns true is seen
 * within 55 % of the bound and on average after about a quarter of it (the interval's own gaps:
 * 39 %), and no instance is read more than twice in any bound (every gap is at least half of it).
 */
export function boundIntervalNow(ctx: StepContext, pollMs: number, random: () => number = Math.random): number {
  return windowBound(ctx, pollMs) * (0.5 + 0.05 * random());
}

/** A watch applies to fleets of this many instances or more (with fewer, the interval's own reads see a change sooner). */
export const WATCH_MIN_INSTANCES = 3;
/** Whole reads at least this many `windowPollMs` apart while watching; the rest of the reads watch. */
const WHOLE_EVERY = 4;

export interface Watch {
  /** Inside the write-stop window, with enough instances and an instance reader: watch now. */
  applies(): boolean;
  /** Between whole reads: reads instances one at a time until one shows the condition turn, or a whole read is due. */
  untilChange(signal: AbortSignal): Promise<void>;
  /** A whole read starts now (every instance's read is counted against the bound). */
  wholeStarts(): void;
  /** A whole read's answers: what each instance showed. */
  whole(snapshot: FleetSnapshot): void;
}

/**
 * Watching inside the write-stop window (issue 41). Polling the whole fleet every interval sees a
 * condition turn, on average, 39 % of `windowPollMs` after it did (its gaps are drawn between half
 * of it and all of it), once per wait of the window: the larger part of the runner's share of it.
 * A watch spends the same reads differently: one whole read at least every `WHOLE_EVERY` intervals
 * (the heartbeat; what the wait judges), and between them one instance at a time, in turn, so that
 * each instance is read once per interval on average (no more than the interval's own schedule,
 * which averages 1.33 reads per interval), and the fleet every interval ÷ n. When an instance read
 * alone shows the condition turn on it (`signature`: its state, or any of the condition's checks,
 * whatever `on` says), the whole fleet is read at once and judged.
 *
 * The bound, the runbook's `windowPollInterval` (W): no instance is read more than twice in any W
 * (as the interval's own schedule: its gaps are at least W ÷ 2), whole reads included; a whole read
 * that would break it waits until it would not. Only whole reads are judged, and every read of a
 * wait starts after the wait did (inside the window: after the stop), so no command follows from a
 * condition read before the stop.
 */
export function createWatch(
  ctx: StepContext,
  signature: (sample: InstanceSample) => string,
  pollMs: number,
  // the monotonic clock: the bound holds whatever the wall clock does
  now: () => number = () => performance.now(),
): Watch {
  const fleet = ctx.run.fleet;
  const n = fleet.refs.length;
  const bound = (): number => windowBound(ctx, pollMs);
  /** Per instance, the start of its last two reads by this wait. */
  const starts = fleet.refs.map((): number[] => []);
  const seen: (string | undefined)[] = fleet.refs.map(() => undefined);
  let lastWhole = now();
  let turn = 0;
  const started = (i: number, at: number): void => {
    const s = starts[i]!;
    s.push(at);
    if (s.length > 2) s.shift();
  };
  /** When instance i may be read again: W after the first of its last two reads. */
  const freeAt = (i: number): number => {
    const s = starts[i]!;
    return s.length < 2 ? -Infinity : s[0]! + bound();
  };
  return {
    applies: () => ctx.run.window.open && n >= WATCH_MIN_INSTANCES && fleet.sample !== undefined,
    async untilChange(signal) {
      const w = bound();
      // each instance once per W on average: (WHOLE_EVERY − 1) watches and one whole read per WHOLE_EVERY × W
      const spacing = (WHOLE_EVERY * w) / ((WHOLE_EVERY - 1) * n);
      for (;;) {
        const t = now();
        if (lastWhole + WHOLE_EVERY * w - t <= 0) break;
        let i = -1;
        for (let k = 0; k < n && i < 0; k++) {
          const c = (turn + k) % n;
          if (freeAt(c) <= t) i = c;
        }
        if (i >= 0) {
          turn = (i + 1) % n;
          started(i, t);
          const sig = signature(await fleet.sample!(i, signal));
          const before = seen[i];
          seen[i] = sig;
          if (before !== undefined && sig !== before) break;
        }
        // by the clock, not the timer: one that fires early would read more than the spacing allows
        await delayUntil(Math.min(t + spacing, lastWhole + WHOLE_EVERY * w), signal, now);
      }
      // the whole read: no instance read more than twice in any W
      await delayUntil(Math.max(...fleet.refs.map((_, k) => freeAt(k))), signal, now);
    },
    wholeStarts() {
      const t = now();
      lastWhole = t;
      for (let i = 0; i < n; i++) started(i, t);
    },
    whole(snapshot) {
      for (const s of snapshot.instances) seen[s.ref.index] = signature(s);
    },
  };
}

/** One read of the verifier's progress; a failure is a warning and an unknown value. */
async function readVerifier(ctx: StepContext): Promise<VerifierProgress | undefined> {
  const v = ctx.run.verifier;
  if (!v) return undefined;
  try {
    const p = await v.progress({ signal: ctx.signal });
    ctx.run.emit("verifier.sampled", { progress: p });
    observeVerifier(ctx.run.memory.verifier, p);
    return p;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.run.emit("log", { level: "warn", index: ctx.index, message: `verifier progress: ${errorMessage(err)}` });
    return undefined;
  }
}

export function describeFailing(failing: readonly FailingCondition[]): string {
  if (failing.length === 0) return "nothing reported yet";
  return failing
    .slice(0, 8)
    .map((f) => `${f.instance}: ${f.condition} (now ${show(f.value)})`)
    .join("; ")
    .concat(failing.length > 8 ? `; and ${failing.length - 8} more` : "");
}

const show = (v: unknown): string => (v === undefined ? "unknown" : typeof v === "string" ? v : JSON.stringify(v));

/** The error for a wait that ended without its condition: the step's time limit, or Ctrl-C. */
export function abortReason(ctx: StepContext, failing: readonly FailingCondition[], opts: { describe: string }): Error {
  const reason: unknown = ctx.signal.reason;
  if (reason instanceof StepTimeout) {
    return new StepFailure(
      `timed out after ${reason.limitText} waiting for ${opts.describe}: ${describeFailing(failing)}`,
      {
        reason: "timeout",
        hint: timeoutHint(ctx.run, "Look at the instances named above"),
      },
    );
  }
  return reason instanceof Error ? reason : new Error("interrupted");
}
