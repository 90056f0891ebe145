/**
 * The run's verifier: the API client's verifier, with every command recorded in the run's
 * event stream (as the fleet records the instances' commands).
 */
import {
  createVerifierClient,
  verifierBody,
  type CommandOutcome,
  type CommandResult,
  type VerifierClient,
  type VerifierCommand,
  type VerifierCommandOptions,
} from "../api/client.js";
import { ApiError } from "../api/errors.js";
import { createPollRecorder, type PollRecorder } from "./polls.js";
import { emitRequest, emitResponse, type FleetEmit } from "./record.js";

export interface VerifierOptions {
  url: string;
  requestTimeoutMs: number;
  emit?: FleetEmit | undefined;
  /** Ids of the request/response events; share the fleet's for ids unique in the run. */
  requestId: () => number;
  /** Where progress reads are counted; share the fleet's (`fleet.polls`) for one summary. */
  polls?: PollRecorder | undefined;
  /** The run's redaction, for what answers say (`ClientOptions.redact`). */
  redact?: ((text: string) => string) | undefined;
}

export function createVerifier(opts: VerifierOptions): VerifierClient {
  const emit: FleetEmit = opts.emit ?? (() => {});
  const client = createVerifierClient(opts.url, {
    requestTimeoutMs: opts.requestTimeoutMs,
    redact: opts.redact,
    onIssue: (_issue, message) => emit("log", { level: "warn", message }),
  });
  const tryCommand = async (op: VerifierCommand, o: VerifierCommandOptions = {}): Promise<CommandOutcome> => {
    const id = opts.requestId();
    emitRequest(emit, id, { target: "verifier" }, `/api/v1/${op}`, verifierBody(op, o));
    const outcome = await client.tryCommand(op, o);
    emitResponse(emit, id, { target: "verifier" }, outcome);
    return outcome;
  };
  const polls = opts.polls ?? createPollRecorder(emit);
  const progress: VerifierClient["progress"] = async (o = {}) => {
    const t0 = performance.now();
    try {
      const p = await client.progress(o);
      polls.record("verifier", undefined, "/api/v1/progress", { durationMs: performance.now() - t0 });
      return p;
    } catch (err) {
      if (err instanceof ApiError)
        polls.record("verifier", undefined, "/api/v1/progress", { durationMs: performance.now() - t0, error: err });
      throw err;
    }
  };
  const orThrow = async (op: VerifierCommand, o?: VerifierCommandOptions): Promise<CommandResult> => {
    const r = await tryCommand(op, o);
    if (!r.ok) throw r.error;
    return { answer: r.answer, sentAt: r.sentAt, durationMs: r.durationMs, status: r.status };
  };
  return {
    url: client.url,
    tryCommand,
    check: (o) => orThrow("check", o),
    writesOff: (o) => orThrow("writesOff", o),
    progress,
    close: () => client.close(),
  };
}
