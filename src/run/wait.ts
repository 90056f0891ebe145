/**
 * Polling until a condition holds. The fleet is read at once on every instance, every
 * `pollMs` (counted from the start of the previous read, so a slow answer does not stretch the
 * period), and the step returns as soon as a read meets the condition: the next step's first
 * request follows within a poll interval of the fleet meeting it.
 *
 * While it waits it says why it is not over (`wait.status`: who fails which condition, with the
 * value, since when) — on every change and at least every 10 s — and emits `wait.slow` once a
 * stall (same lag, copied bytes and events applied everywhere) lasts `slowAfterMs`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { VerifierProgress } from "../api/index.js";
import { progressSignature, type FleetSnapshot } from "../fleet/index.js";
import { formatDuration } from "../runbook/index.js";
import { StepFailure, StepTimeout, type StepContext } from "./context.js";
import { errorMessage } from "../errors.js";

export interface Evaluation {
  met: boolean;
  failing: { instance: string; condition: string; value: unknown }[];
}

export interface WaitOptions {
  pollMs: number;
  slowAfterMs: number;
  /** Also read the verifier's progress on every poll. */
  verifier?: boolean;
  evaluate(snapshot: FleetSnapshot, verifier: VerifierProgress | undefined): Evaluation;
  /** What is awaited, for the timeout message ("canCommit true, lagBelow 5"). */
  describe: string;
}

const STATUS_EVERY_MS = 10_000;

export async function waitUntil(
  ctx: StepContext,
  opts: WaitOptions,
): Promise<{ snapshot: FleetSnapshot; verifier: VerifierProgress | undefined }> {
  const { run, signal } = ctx;
  const since = new Map<string, number>();
  let lastStatus = "";
  let lastStatusAt = 0;
  let signature = "";
  let sigSince = Date.now();
  let slowSent = false;
  let failing: Evaluation["failing"] = [];
  for (;;) {
    const started = Date.now();
    let snapshot: FleetSnapshot;
    let verifier: VerifierProgress | undefined;
    try {
      snapshot = await run.fleet.progress(signal);
      run.memory.last = snapshot;
      if (opts.verifier && run.verifier) verifier = await readVerifier(ctx);
    } catch (err) {
      if (signal.aborted) throw abortReason(ctx, failing, opts);
      throw err;
    }
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
      });
      lastStatus = status;
      lastStatusAt = now;
    }
    if (ev.met) return { snapshot, verifier };

    const sig = progressSignature(snapshot) + (verifier ? JSON.stringify(verifier.verificationStatus ?? null) : "");
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
    const wait = Math.max(0, opts.pollMs - (Date.now() - started));
    try {
      await sleep(wait, undefined, { signal });
    } catch {
      throw abortReason(ctx, failing, opts);
    }
  }
}

async function readVerifier(ctx: StepContext): Promise<VerifierProgress | undefined> {
  const v = ctx.run.verifier;
  if (!v) return undefined;
  try {
    const p = await v.progress({ signal: ctx.signal });
    ctx.run.emit("verifier.sampled", { progress: p });
    return p;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.run.emit("log", {
      level: "warn",
      index: ctx.index,
      message: `verifier progress: ${errorMessage(err)}`,
    });
    return undefined;
  }
}

export function describeFailing(failing: Evaluation["failing"]): string {
  if (failing.length === 0) return "nothing reported yet";
  return failing
    .slice(0, 8)
    .map((f) => `${f.instance}: ${f.condition} (now ${show(f.value)})`)
    .join("; ")
    .concat(failing.length > 8 ? `; and ${failing.length - 8} more` : "");
}

const show = (v: unknown): string => (v === undefined ? "unknown" : typeof v === "string" ? v : JSON.stringify(v));

/** The error for a wait that ended without its condition: the step's time limit, or Ctrl-C. */
export function abortReason(ctx: StepContext, failing: Evaluation["failing"], opts: { describe: string }): Error {
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
