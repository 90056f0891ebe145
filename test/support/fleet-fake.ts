/**
 * A scripted fleet and a step context for unit tests of the step kit (src/steps/kit/fleet-ops.ts):
 * what each instance answers to each send of a command and what its progress shows, with no
 * network; the events the step emits are recorded.
 */
import { ServiceError, TransportError, type CommandOperation } from "../../src/api/index.js";
import type { Progress } from "../../src/api/types.js";
import type { InstanceRef, RunEvent } from "../../src/events.js";
import { createPollRecorder, identityProblems, type Fleet, type FleetSnapshot } from "../../src/fleet/index.js";
import type { BroadcastResult } from "../../src/fleet/fleet.js";
import { newIdentityMemory, StepFailure, type RunContext, type StepContext } from "../../src/steps/index.js";
import { expect } from "vitest";

/** The request time limit of the scripted run (its settle windows are this, or twice this). */
export const REQUEST_TIMEOUT = 150;

export type Outcome = "ok" | "refused" | "reset" | "timeout" | "not-sent";
export type Read = Partial<Progress> | "error";

export interface Script {
  /** Per broadcast (0: the first send, 1: the first resend…), per instance index. */
  sends: Record<number, Outcome>[];
  /**
   * What instance i's progress shows: at read n (the last entry repeats), or as a function of the
   * time since the first send and of how many times each instance was sent the command.
   */
  reads: (Read[] | ((t: { ms: number; sends: number[] }) => Read))[];
}

export const refOf = (index: number): InstanceRef => ({
  url: `http://127.0.0.1:${27182 + index}`,
  name: `sync${index}`,
  index,
});

export function scripted(script: Script): { fleet: Fleet; sent: number[][]; reads: number } {
  const n = script.reads.length;
  const refs = Array.from({ length: n }, (_, i) => refOf(i));
  const sent: number[][] = refs.map(() => []);
  let round = 0;
  let reads = 0;
  const readCount = refs.map(() => 0);
  let firstSend = 0;
  const fail = (i: number, o: Outcome, op: string): BroadcastResult => {
    const url = refs[i]!.url;
    const operation = op as CommandOperation;
    if (o === "refused")
      return { ref: refs[i]!, ok: false, error: new ServiceError(url, operation, "InvalidStateTransition", "no", 400) };
    const code = o === "timeout" ? "timeout" : o === "reset" ? "network" : "connect";
    return {
      ref: refs[i]!,
      ok: false,
      error: new TransportError(url, operation, code, o, { requestSent: o !== "not-sent" }),
    };
  };
  const fleet: Fleet = {
    refs,
    // reads are scripted, not timed: the counts go nowhere
    polls: createPollRecorder(() => undefined),
    progress: (signal, only) => {
      signal?.throwIfAborted();
      reads++;
      const snap: FleetSnapshot = {
        at: Date.now(),
        instances: refs
          .flatMap((ref, i) => (only && !only.includes(i) ? [] : [ref]))
          .map((ref) => {
            const i = ref.index;
            const list = script.reads[i]!;
            const r =
              typeof list === "function"
                ? list({ ms: Date.now() - firstSend, sends: sent.map((x) => x.length) })
                : list[Math.min(readCount[i]!++, list.length - 1)]!;
            if (r === "error")
              return {
                ref,
                error: new TransportError(ref.url, "progress", "connect", "refused", { requestSent: false }),
              };
            return { ref, progress: { state: "RUNNING", ...r } };
          }),
      };
      return Promise.resolve(snap);
    },
    broadcast: (op, _body, _signal, opts = {}) => {
      if (round === 0) firstSend = Date.now();
      const outcomes = script.sends[round++] ?? {};
      const targets = opts.only ? refs.filter((r) => opts.only!.includes(r.index)) : refs;
      const results = targets.map((ref): BroadcastResult => {
        sent[ref.index]!.push(round - 1);
        const o = outcomes[ref.index] ?? "ok";
        return o === "ok"
          ? { ref, ok: true, answer: { success: true }, sentAt: 0, durationMs: 1, status: 200 }
          : fail(ref.index, o, op);
      });
      // each answer as it "arrives", in the fleet's order, as the real fan-out tells them
      for (const r of results)
        opts.onAnswer?.(
          r.ref,
          r.ok
            ? { ok: true, answer: r.answer, sentAt: 0, durationMs: 1, status: 200 }
            : { ok: false, error: r.error, sentAt: 0, durationMs: 1 },
        );
      return Promise.resolve({ results, skewMs: 0 });
    },
    identity: (snap, expect) => identityProblems(snap, { fleetSize: refs.length, ...expect }),
    close: () => Promise.resolve(),
  };
  return {
    fleet,
    sent,
    get reads() {
      return reads;
    },
  };
}

export function context(
  fleet: Fleet,
  opts: { signal?: AbortSignal; force?: string[] } = {},
): {
  ctx: StepContext;
  events: RunEvent[];
} {
  const events: RunEvent[] = [];
  const emit = ((type: string, payload: object) => {
    const e = { type, seq: events.length + 1, at: Date.now(), ...payload } as unknown as RunEvent;
    events.push(e);
    return e;
  }) as RunContext["emit"];
  const run = {
    // the file the step's words name (`syncbook run rb.yaml --resume`)
    loaded: { file: "rb.yaml" },
    target: "rb.yaml",
    targetKept: "rb.yaml",
    keptNote: "",
    runbook: { clusters: { cluster0: {}, cluster1: {} }, steps: [] },
    fleet,
    emit,
    say: emit,
    memory: {
      writesStopped: true,
      commitSent: false,
      commitAccepted: false,
      serviceErrors: [],
      identity: newIdentityMemory(),
      verifier: {},
      acted: false,
      actedNow: false,
      sentToFleet: false,
    },
    defaults: { requestTimeoutMs: REQUEST_TIMEOUT, progressGiveUpMs: 200, pollMs: 10 },
    force: new Set(opts.force ?? []),
  } as unknown as RunContext;
  const ctx = {
    run,
    index: 0,
    id: "cmd",
    signal: opts.signal ?? new AbortController().signal,
    pollMs: 10,
    timeoutMs: 60_000,
  } as unknown as StepContext;
  return { ctx, events };
}

/** The StepFailure a step's promise rejects with (the test fails if it resolves or throws anything else). */
export async function failure(p: Promise<unknown>): Promise<StepFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StepFailure);
  return err as StepFailure;
}

/** The `decision` reasons of one kind. */
export const reasons = (events: RunEvent[], kind: string): string[] =>
  events.flatMap((e) => (e.type === "decision" && e.kind === kind ? [e.reason] : []));
