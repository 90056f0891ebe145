/**
 * The fleet: every sync service instance of a runbook, addressed together.
 *
 * - `progress` polls every instance at once, one attempt each; a failing instance is captured in
 *   the snapshot, never thrown (the runner's `readFleet` retries it: progress is "safe to retry").
 * - `broadcast` sends the identical command to every instance at once ("When several service
 *   instances sync between sharded clusters, identical API commands must be sent to every
 *   instance"): the body is serialized once, every `request.sent` is emitted first, then the
 *   requests are dispatched in one synchronous loop so they leave back to back. Never retried.
 * - The fleet owns one undici Agent (unless given a dispatcher), so the keep-alive connections
 *   that progress polls warm up carry the commit: no connect inside the fan-out.
 * - Never more than one progress request in flight per instance: a read that finds one still
 *   under way (a slow answer, a wait polling fast) joins it instead of sending a second.
 * - Every progress read is counted in `polls` (latency histogram per instance; each failure an
 *   event of its own): the record has every request without a journal line per poll.
 */
import type { Dispatcher } from "undici";
import { createServiceClient, JsonBody, type CommandOutcome, type ServiceClient } from "../api/client.js";
import type { CommandOperation } from "../api/commands.js";
import { ApiError } from "../api/errors.js";
import { undici } from "../api/undici.js";
import type { OperationResponse, Progress } from "../api/types.js";
import type { InstanceRef } from "../events.js";
import { redactUrl } from "../redact.js";
import { fanOutSignal } from "../timers.js";
import { identityProblems, type IdentityExpectation, type IdentityProblem } from "./identity.js";
import { createPollRecorder, type PollRecorder } from "./polls.js";
import { emitRequest, emitResponse, type FleetEmit } from "./record.js";

export type { FleetEmit };

export interface FleetInstance {
  /** Base URL; may carry `user:password@` (never shown). */
  url: string;
  name?: string | undefined;
}

export interface FleetOptions {
  instances: FleetInstance[];
  /** Overall deadline of one request, in ms. */
  requestTimeoutMs: number;
  emit?: FleetEmit | undefined;
  /** Ids of `request.sent`/`response.received` (default: a counter of this fleet). Share one with the verifier client for ids unique in the run. */
  requestId?: (() => number) | undefined;
  /** undici dispatcher; default: an Agent owned by the fleet (closed by `close()`). */
  dispatcher?: Dispatcher | undefined;
  maxBodyBytes?: number | undefined;
  /** The runbook's `serviceVersion`: the progress fields it documents are expected in answers. */
  serviceVersion?: string | undefined;
  /** Where progress reads are counted (default: the fleet's own, emitting through `emit`). Share one with the verifier. */
  polls?: PollRecorder | undefined;
  /** The run's redaction, for what answers say (`ClientOptions.redact`). */
  redact?: ((text: string) => string) | undefined;
}

export interface InstanceSample {
  ref: InstanceRef;
  progress?: Progress;
  error?: ApiError;
}

export interface FleetSnapshot {
  /** Epoch ms when the poll began (the earliest request of it: one joined from an earlier read counts from its own start). */
  at: number;
  /** One entry per instance read, in the runbook's order: every instance, unless the read was of `only` some. */
  instances: InstanceSample[];
}

export type BroadcastResult =
  | { ref: InstanceRef; ok: true; answer: OperationResponse; sentAt: number; durationMs: number; status: number }
  | { ref: InstanceRef; ok: false; error: ApiError; sentAt?: number };

export interface BroadcastOutcome {
  results: BroadcastResult[];
  /** Latest minus earliest send time (undici's onRequestStart) over the requests that left. */
  skewMs: number;
}

export interface BroadcastOptions {
  /** Send only to these instance indexes (a resend to the instances whose progress proves the command did not take effect). */
  only?: readonly number[] | undefined;
  /**
   * Told of each answer as it arrives, before the rest are in (the events of the fan-out are
   * emitted together once every answer is in): a refusal of a blocking command is news at once.
   */
  onAnswer?: ((ref: InstanceRef, outcome: CommandOutcome) => void) | undefined;
}

export interface Fleet {
  readonly refs: InstanceRef[];
  /**
   * Every instance polled at once, one attempt each, or `only` these (indexes: the instances a
   * condition reads, src/steps/kit/wait.ts). Throws only the signal's reason.
   */
  progress(signal?: AbortSignal, only?: readonly number[]): Promise<FleetSnapshot>;
  /**
   * One instance read alone (joining its read in flight), counted and sampled like the others:
   * a hint of when to read the whole fleet, never what a step judges. Throws only the signal's reason.
   */
  sample?(index: number, signal?: AbortSignal): Promise<InstanceSample>;
  /**
   * The identical command to every instance at once; never retried. Throws only if the signal
   * was aborted before anything was sent; an abort later shows in the results. Service facts,
   * "Not published": "Whether a `commit` refused on one instance of a multi-instance fleet waits
   * for the others first": the reading that fails safe sends to every instance at once and reads
   * each answer on its own (one refusal says nothing of the others).
   */
  broadcast(
    op: CommandOperation,
    body: unknown,
    signal?: AbortSignal,
    opts?: BroadcastOptions,
  ): Promise<BroadcastOutcome>;
  /** Fleet identity checks on a snapshot (distinct ids, one coordinator, one direction). */
  identity(snapshot: FleetSnapshot, expect?: IdentityExpectation): IdentityProblem[];
  /** Counts of every progress read (`polls.summary`, `poll.failed`). */
  readonly polls: PollRecorder;
  /** Closes the fleet's own Agent (not a dispatcher that was passed in). */
  close(): Promise<void>;
}

/**
 * One turn of the event loop (its check phase). undici gives a keep-alive connection back to its
 * pool one check phase after the answer it carried (the client's 'drain'); a request dispatched in
 * the same turn as that answer finds every connection of the instance busy and opens a new one: a
 * TCP connect per instance, measured at 10 to 25 ms for 64 instances, on the way from the read that
 * met a condition to the commit's interlock read (bench/downtime.mjs, issue 41). After this turn
 * the warm connections carry the next request.
 */
const connectionsFree = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function createFleet(opts: FleetOptions): Fleet {
  if (opts.instances.length === 0) throw new RangeError("a fleet needs at least one instance");
  const emit: FleetEmit = opts.emit ?? (() => {});
  const ownAgent = opts.dispatcher ? undefined : new (undici().Agent)();
  const dispatcher = opts.dispatcher ?? ownAgent;
  const refs: InstanceRef[] = opts.instances.map((inst, index) => ({
    url: redactUrl(inst.url),
    ...(inst.name !== undefined ? { name: inst.name } : {}),
    index,
  }));
  const clients: ServiceClient[] = opts.instances.map((inst) =>
    createServiceClient(inst.url, {
      requestTimeoutMs: opts.requestTimeoutMs,
      dispatcher,
      maxBodyBytes: opts.maxBodyBytes,
      serviceVersion: opts.serviceVersion,
      redact: opts.redact,
      onIssue: (_issue, message) => emit("log", { level: "warn", message }),
    }),
  );
  // per fleet, not global: request ids of this fleet's events
  let counter = 0;
  const nextRequestId = opts.requestId ?? (() => ++counter);

  const polls = opts.polls ?? createPollRecorder(emit);
  const path = "/api/v1/progress";

  const sampleOne = async (i: number, signal: AbortSignal | undefined): Promise<InstanceSample> => {
    const ref = refs[i]!;
    const t0 = performance.now();
    try {
      const progress = await clients[i]!.progress({ signal });
      polls.record("service", ref, path, { durationMs: performance.now() - t0 });
      emit("progress.sampled", { instance: ref, progress });
      return { ref, progress };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      polls.record("service", ref, path, { durationMs: performance.now() - t0, error: err });
      return { ref, error: err };
    }
  };

  // one progress request in flight per instance, whoever asks: a second reader joins the first
  const inFlight = new Map<number, { startedAt: number; sample: Promise<InstanceSample> }>();
  const readOne = (
    i: number,
    signal: AbortSignal | undefined,
  ): { startedAt: number; sample: Promise<InstanceSample> } => {
    const running = inFlight.get(i);
    if (running) return running;
    const entry = { startedAt: Date.now(), sample: sampleOne(i, signal).finally(() => inFlight.delete(i)) };
    inFlight.set(i, entry);
    return entry;
  };

  const progress = async (signal?: AbortSignal, only?: readonly number[]): Promise<FleetSnapshot> => {
    signal?.throwIfAborted();
    await connectionsFree();
    signal?.throwIfAborted();
    const which = only ? refs.filter((r) => only.includes(r.index)) : refs;
    // one listener on the caller's signal, not one per request: 64 of them made Node warn
    // (MaxListenersExceededWarning) on `status --watch`, `--probe` and `--resume`
    const fan = fanOutSignal(signal, which.length);
    try {
      const reads = which.map((r) => readOne(r.index, fan.signal));
      const at = Math.min(...reads.map((r) => r.startedAt));
      const instances = await Promise.all(reads.map((r) => r.sample));
      signal?.throwIfAborted();
      return { at, instances };
    } finally {
      fan.release();
    }
  };

  const broadcast = async (
    op: CommandOperation,
    body: unknown,
    signal?: AbortSignal,
    bopts: BroadcastOptions = {},
  ): Promise<BroadcastOutcome> => {
    signal?.throwIfAborted();
    await connectionsFree();
    signal?.throwIfAborted();
    const targets = bopts.only ? refs.filter((r) => bopts.only!.includes(r.index)) : refs;
    const json = body instanceof JsonBody ? body : new JsonBody(body ?? {});
    const path = `/api/v1/${op}`;
    const ids = targets.map(() => nextRequestId());
    // every line is written at once, and made durable together with the last (one fsync for the
    // fan-out, not one per instance), before any request leaves
    for (const [k, ref] of targets.entries())
      emitRequest(emit, ids[k]!, { target: "service", instance: ref }, path, json.value, k < targets.length - 1, [
        k,
        targets.length,
      ]);
    // one tight loop: each tryCommand runs synchronously into undici's queue; undici then writes
    // all of them in the same check phase (a reused idle keep-alive socket is validated with one
    // setImmediate first, undici ≥ 7.x, GHSA-35p6-xmwp-9g52), so they still leave back to back
    const pending: Promise<CommandOutcome>[] = targets.map((ref) =>
      clients[ref.index]!.tryCommand(op, json, { signal }).then((o) => {
        // a listener's failure must never cost the fan-out an answer
        try {
          bopts.onAnswer?.(ref, o);
        } catch {
          /* only news */
        }
        return o;
      }),
    );
    const outcomes = await Promise.all(pending);
    const results: BroadcastResult[] = outcomes.map((o, k) => {
      const ref = targets[k]!;
      emitResponse(emit, ids[k]!, { target: "service", instance: ref }, o, k < outcomes.length - 1);
      return o.ok
        ? { ref, ok: true, answer: o.answer, sentAt: o.sentAt, durationMs: o.durationMs, status: o.status }
        : { ref, ok: false, error: o.error, ...(o.sentAt !== undefined ? { sentAt: o.sentAt } : {}) };
    });
    const sent = results.flatMap((r) => (r.sentAt === undefined ? [] : [r.sentAt]));
    const skewMs = sent.length > 1 ? Math.max(...sent) - Math.min(...sent) : 0;
    return { results, skewMs };
  };

  const sample = async (index: number, signal?: AbortSignal): Promise<InstanceSample> => {
    signal?.throwIfAborted();
    const one = await readOne(index, signal).sample;
    signal?.throwIfAborted();
    return one;
  };

  return {
    refs,
    progress,
    sample,
    broadcast,
    identity: (snapshot, expect = {}) => identityProblems(snapshot, { fleetSize: refs.length, ...expect }),
    polls,
    close: async () => {
      await ownAgent?.close();
    },
  };
}
