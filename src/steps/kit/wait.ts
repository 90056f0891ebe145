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
 */
import type { VerifierProgress } from "../../api/index.js";
import { errorMessage } from "../../errors.js";
import { progressSignature, type Evaluation, type FailingCondition, type FleetSnapshot } from "../../fleet/index.js";
import { formatDuration } from "../../runbook/index.js";
import { StepFailure, StepTimeout, type StepContext } from "./context.js";
import { poll } from "./poll.js";

export interface WaitOptions {
  pollMs: number;
  slowAfterMs: number;
  /** Also read the verifier's progress on every poll. */
  verifier?: boolean;
  evaluate(snapshot: FleetSnapshot, verifier: VerifierProgress | undefined): Evaluation;
  /** What is awaited, for the timeout message ("canCommit true, lagBelow 5"). */
  describe: string;
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

  try {
    const r = await poll({
      read: async (signal) => {
        const snapshot = await run.fleet.progress(signal);
        const verifier = opts.verifier && run.verifier ? await readVerifier(ctx) : undefined;
        return { snapshot, verifier };
      },
      judge,
      every: () => pollIntervalNow(ctx, opts.pollMs),
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

/** One read of the verifier's progress; a failure is a warning and an unknown value. */
async function readVerifier(ctx: StepContext): Promise<VerifierProgress | undefined> {
  const v = ctx.run.verifier;
  if (!v) return undefined;
  try {
    const p = await v.progress({ signal: ctx.signal });
    ctx.run.emit("verifier.sampled", { progress: p });
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
      `timed out after ${formatDuration(reason.ms)} waiting for ${opts.describe}: ${describeFailing(failing)}`,
      {
        reason: "timeout",
        hint: "Raise the step's `timeout`, or look at the instances named above.",
      },
    );
  }
  return reason instanceof Error ? reason : new Error("interrupted");
}
