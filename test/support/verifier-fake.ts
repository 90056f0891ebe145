/**
 * A scripted migration verifier and a step context for unit tests of the verification steps
 * (src/steps/verify.ts, src/steps/kit/verifier.ts): what each `check`/`writesOff` answers, per
 * call, and what each progress read shows, with no network. It reuses the scripted fleet's
 * `context()` (test/support/fleet-fake.ts) and adds what the verification steps read: the run's
 * verifier and its memory, `defaults.scale`, the step's kind and stall time.
 *
 * Time is virtual: the caller fakes `Date` only (`vi.useFakeTimers({ toFake: ["Date"] })`, real
 * timers stay real) and every progress read moves the clock on by `tickMs`, so "a second of no
 * check" or "giveUpAfter of failures" takes a few reads, not wall time.
 */
import { vi } from "vitest";
import {
  ServiceError,
  TransportError,
  type CommandOutcome,
  type VerifierClient,
  type VerifierCommand,
  type VerifierCommandOptions,
  type VerifierProgress,
} from "../../src/api/index.js";
import type { TransportErrorCode } from "../../src/api/errors.js";
import type { RunEvent } from "../../src/events.js";
import type { Fleet, StoppedInCommit } from "../../src/fleet/index.js";
import type { StepContext, VerifierMemory } from "../../src/steps/index.js";
import { context } from "./fleet-fake.js";

export const VERIFIER_URL = "http://127.0.0.1:27020";

/** What one check/writesOff answers: accepted, refused with the verifier's text, or a transport failure. */
export type VAnswer =
  | "ok"
  | { refused: string; description?: string }
  | "timeout"
  | "aborted"
  | "reset"
  | "not-sent"
  | "non-json"
  | "bad-answer";

/** What one progress read shows: the progress, or a failure (`{ error }` is the top-level `{"error": …}`). */
export type VRead =
  | VerifierProgress
  | { error: string }
  | "timeout"
  | "refused"
  | "reset"
  | "non-json"
  /** An empty HTTP 500: releases v0.1.6 to v0.2.0 before their first check. */
  | "empty-500";

/** What the verifier was asked so far, for reads that follow the commands. */
export interface VState {
  /** Progress reads before this one. */
  n: number;
  /** How many checks / writesOffs were sent. */
  check: number;
  writesOff: number;
}

export interface VScript {
  /** Per call of each command (0: the first), the answer; missing entries are "ok". */
  check?: VAnswer[];
  writesOff?: VAnswer[];
  /** Read n (the last entry repeats), or a function of what was asked. */
  progress: VRead[] | ((s: VState) => VRead);
  /** Virtual ms each progress read takes (default 100), or per read. */
  tickMs?: number | ((s: VState) => number);
  /** Called as a command is sent (e.g. to abort the step's signal meanwhile). */
  onCommand?: (op: VerifierCommand, n: number) => void;
}

const transport = (op: string, code: TransportErrorCode, detail: string, requestSent = true, status?: number) =>
  new TransportError(VERIFIER_URL, op as "progress", code, detail, {
    requestSent,
    ...(status === undefined ? {} : { status, bodyStart: "" }),
  });

function answer(op: VerifierCommand, a: VAnswer): CommandOutcome {
  if (a === "ok") return { ok: true, answer: { success: true }, sentAt: 0, durationMs: 1, status: 200 };
  const error =
    typeof a === "object"
      ? new ServiceError(VERIFIER_URL, op as "progress", a.refused, a.description ?? "", 200)
      : a === "timeout"
        ? transport(op, "timeout", "no answer within 5m")
        : a === "aborted"
          ? transport(op, "aborted", "aborted")
          : a === "reset"
            ? transport(op, "network", "connection reset (ECONNRESET)")
            : a === "not-sent"
              ? transport(op, "connect", "connection refused (ECONNREFUSED)", false)
              : transport(op, a, a === "non-json" ? "HTTP 500 non-JSON answer" : "bad answer");
  return { ok: false, error, sentAt: a === "not-sent" ? undefined : 0, durationMs: 1 };
}

function failure(r: Exclude<VRead, VerifierProgress>): Error {
  if (r === "timeout") return transport("progress", "timeout", "no answer within 10s");
  if (r === "refused") return transport("progress", "connect", "connection refused (ECONNREFUSED)", false);
  if (r === "reset") return transport("progress", "network", "connection reset (ECONNRESET)");
  if (r === "non-json") return transport("progress", "non-json", "HTTP 502 non-JSON answer");
  if (r === "empty-500") return transport("progress", "non-json", 'HTTP 500, the answer is not JSON: ""', true, 500);
  return new ServiceError(VERIFIER_URL, "progress", r.error, "", 200);
}

const isFailure = (r: VRead): r is Exclude<VRead, VerifierProgress> => typeof r === "string" || !("phase" in r);

export interface ScriptedVerifier {
  verifier: VerifierClient;
  /** The commands sent, in order, with their options. */
  sent: { op: VerifierCommand; opts: VerifierCommandOptions | undefined }[];
  readonly reads: number;
  ops(): VerifierCommand[];
}

export function scriptedVerifier(script: VScript): ScriptedVerifier {
  const sent: ScriptedVerifier["sent"] = [];
  const count = { check: 0, writesOff: 0 };
  let reads = 0;
  const state = (): VState => ({ n: reads, ...count });
  const verifier: VerifierClient = {
    url: VERIFIER_URL,
    tryCommand: (op, opts) => {
      sent.push({ op, opts });
      const n = count[op]++;
      script.onCommand?.(op, n);
      return Promise.resolve(answer(op, script[op]?.[n] ?? "ok"));
    },
    check: () => Promise.reject(new Error("the steps send through tryCommand")),
    writesOff: () => Promise.reject(new Error("the steps send through tryCommand")),
    close: () => Promise.resolve(),
    progress: (opts) => {
      opts?.signal?.throwIfAborted();
      const s = state();
      const p = script.progress;
      const r = typeof p === "function" ? p(s) : p[Math.min(s.n, p.length - 1)]!;
      const tick = typeof script.tickMs === "function" ? script.tickMs(s) : (script.tickMs ?? 100);
      reads++;
      vi.setSystemTime(Date.now() + tick);
      return isFailure(r) ? Promise.reject(failure(r)) : Promise.resolve(structuredClone(r));
    },
  };
  return {
    verifier,
    sent,
    get reads() {
      return reads;
    },
    ops: () => sent.map((s) => s.op),
  };
}

export interface VContextOptions {
  signal?: AbortSignal;
  force?: string[];
  memory?: VerifierMemory;
  kind?: string;
  /** Runbook time → wall time (identity by default, as in a real run). */
  scale?: (ms: number) => number;
  /** `verifier: undefined` in the runbook. */
  noVerifier?: boolean;
  /** What the write-stop window says of a stop during the commit, asked each time (src/fleet/window.ts). */
  stoppedInCommit?: () => StoppedInCommit | undefined;
}

/**
 * A `verify` step's context over a scripted fleet and verifier: polls of 5 ms, identity scale,
 * writes stopped (the run's memory as a run after stopWrites and commit has it).
 */
export function verifierContext(
  fleet: Fleet,
  v: VerifierClient,
  o: VContextOptions = {},
): { ctx: StepContext; events: RunEvent[] } {
  const { ctx, events } = context(fleet, { ...(o.signal ? { signal: o.signal } : {}), force: o.force ?? [] });
  Object.assign(ctx.run, {
    verifier: o.noVerifier ? undefined : v,
    window: { open: false, stoppedInCommit: o.stoppedInCommit ?? (() => undefined) },
    defaults: { ...ctx.run.defaults, scale: o.scale ?? ((ms: number) => ms), windowPollMs: 5 },
  });
  ctx.run.memory.verifier = o.memory ?? {};
  Object.assign(ctx, { kind: o.kind ?? "verify", pollMs: 5, slowAfterMs: 60_000, title: "verify" });
  return { ctx, events };
}

/** The progress of a verifier in `phase`, at `generation`, with these counters (the rest 0). */
export function vp(
  phase: string,
  generation: number,
  counters: Partial<Record<"total" | "completed" | "failed" | "mismatched", number>> = {},
): VerifierProgress {
  return {
    phase,
    generation,
    error: null,
    verificationStatus: {
      totalTasks: counters.total ?? 0,
      addedTasks: 0,
      processingTasks: 0,
      failedTasks: counters.failed ?? 0,
      completedTasks: counters.completed ?? 0,
      metadataMismatchTasks: counters.mismatched ?? 0,
    },
  };
}

/** A fresh verifier: idle, generation 0, no task (no check has ever run). */
export const FRESH = vp("idle", 0);
/** A check running. */
export const CHECKING = vp("check", 0, { total: 8, completed: 2 });
/** Finished, nothing differs. */
export const PASSED = vp("idle", 2, { total: 8, completed: 8 });
