/**
 * Errors of the API client. Both extend UserError (an unreachable instance or a refused
 * command is something the operator acts on; the CLI prints message + hint, no stack).
 * Every message starts with the redacted instance URL.
 *
 * - TransportError: no usable answer (connection refused/reset, timeout, abort, non-JSON body,
 *   JSON of an unexpected shape). For a command, the command may or may not have taken effect
 *   unless `requestSent` is false.
 * - ServiceError: a JSON answer with `success: false` (whatever the HTTP status).
 */
import { UserError } from "../errors.js";

export type ServiceOperation = "start" | "commit" | "pause" | "resume" | "reverse" | "progress";
export type VerifierOperation = "verifier.check" | "verifier.writesOff" | "verifier.progress";
export type ApiOperation = ServiceOperation | VerifierOperation;

export type TransportErrorCode =
  /** No answer within the per-request timeout. */
  | "timeout"
  /** The caller's signal aborted the request. */
  | "aborted"
  /** Could not connect (refused, unreachable, DNS, connect timeout): the request was not sent. */
  | "connect"
  /** The connection broke (reset, closed by the other side, socket error). */
  | "network"
  /** The body is not JSON (an HTML error page from a proxy, an empty body…). */
  | "non-json"
  /** JSON, but not the shape of this answer (e.g. no `success`, no `progress` object). */
  | "bad-answer"
  /** The body exceeded the client's limit. */
  | "too-large";

export abstract class ApiError extends UserError {
  abstract readonly kind: "transport" | "service";
  constructor(
    message: string,
    /** Redacted base URL of the instance or verifier. */
    readonly url: string,
    readonly operation: ApiOperation,
    options: { hint?: string; cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export class TransportError extends ApiError {
  readonly kind = "transport";
  constructor(
    url: string,
    operation: ApiOperation,
    readonly code: TransportErrorCode,
    /** One-line explanation, e.g. `connection reset (ECONNRESET)`, `no answer within 10 s`. */
    readonly detail: string,
    readonly info: {
      /** The system or undici error code (ECONNRESET, UND_ERR_SOCKET…), when there is one. */
      sysCode?: string;
      /** HTTP status, when an answer arrived. */
      status?: number;
      /** First bytes of the body, redacted (non-json and bad-answer). */
      bodyStart?: string;
      /**
       * Whether any byte of the request may have reached the server. False means the command
       * certainly did not take effect (it was never written to a socket).
       */
      requestSent: boolean;
      /** performance.now() when the request began to be written, when it was (fan-out skew). */
      sentAt?: number;
      cause?: unknown;
    },
  ) {
    super(`${url}: ${operation} failed: ${detail}`, url, operation, { hint: hintFor(code), cause: info.cause });
  }
  get sysCode(): string | undefined {
    return this.info.sysCode;
  }
  get status(): number | undefined {
    return this.info.status;
  }
  get bodyStart(): string | undefined {
    return this.info.bodyStart;
  }
  get requestSent(): boolean {
    return this.info.requestSent;
  }
  /** Short label for status lines: `ECONNRESET`, `timeout`, `HTTP 502 non-JSON`. */
  get label(): string {
    if (this.code === "non-json" || this.code === "bad-answer")
      return `${this.status === undefined ? "" : `HTTP ${this.status} `}${this.code}`;
    return this.info.sysCode ?? this.code;
  }
}

/**
 * Whether a request whose answer was lost may still reach its server and be handled there: no
 * answer within its time limit (it may wait on its way), or given up by the caller. A connection
 * that broke, or an answer that came back unusable, ended the exchange: what it did shows in the
 * next read. The live run (src/steps/kit/verifier.ts `askOf`) and the journal's `response.received`
 * (src/fleet/record.ts) read it here, so `--resume` reads a lost answer as the run that lost it did.
 */
export function mayStillArrive(err: ApiError): boolean {
  return err instanceof TransportError && err.requestSent && (err.code === "timeout" || err.code === "aborted");
}

export class ServiceError extends ApiError {
  readonly kind = "service";
  constructor(
    url: string,
    operation: ApiOperation,
    /** The service's error name (`error`). */
    readonly error: string,
    /** The service's `errorDescription`. */
    readonly errorDescription: string,
    /** HTTP status, for the record only: never used to decide anything. */
    readonly status: number,
  ) {
    super(`${url}: ${operation} refused: ${error}${errorDescription ? `: ${errorDescription}` : ""}`, url, operation);
  }
  get label(): string {
    return this.error;
  }
}

function hintFor(code: TransportErrorCode): string | undefined {
  switch (code) {
    case "connect":
      return "Is the sync service running on that address? By default its API binds to the local host only.";
    case "timeout":
      return "The instance did not answer in time. Progress can fail for minutes after a resume or restart; commands are never resent blindly.";
    case "non-json":
      return "Something other than the sync service answered (a proxy error page?). Check the URL.";
    case "bad-answer":
      return "An answer not in the documented shape: a proxy, another program at this URL, or a service version other than the runbook's serviceVersion? Check the URL and the version; `syncbook status <runbook>` reads every instance's progress and sends nothing.";
    default:
      return undefined;
  }
}

/**
 * Several instances' errors in one line, each distinct one said once with the instances that
 * gave it: `64 instances (http://…:27182, http://…:27183, http://…:27184 and 61 more): start
 * refused: InvalidRequest: …`. A bad start body is refused by every instance in the same words,
 * and 64 copies of them buried the one fact on a page nobody could read out on a bridge call.
 * One instance's error reads as before: its URL, then its words. `every`: name every instance
 * (a command some instances accepted: those that refused are the ones to complete it on).
 */
export function errorsText(errors: readonly ApiError[], opts: { every?: boolean } = {}): string {
  const by = new Map<string, string[]>();
  for (const e of errors) {
    // every message starts with its URL (above); one that did not is said whole, after it
    const prefix = `${e.url}: `;
    const words = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    by.set(words, [...(by.get(words) ?? []), e.url]);
  }
  return [...by]
    .map(([key, urls]) => {
      if (urls.length === 1) return `${urls[0]}: ${key}`;
      // every one when the command split the fleet: they are the `--only` list of its completion
      const shown = (opts.every ? urls : urls.slice(0, 3)).join(", ");
      const more = opts.every || urls.length <= 3 ? "" : ` and ${urls.length - 3} more`;
      return `${urls.length} instances (${shown}${more}): ${key}`;
    })
    .join("; ");
}
