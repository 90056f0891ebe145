/**
 * Clients of one sync service instance and of the verifier.
 *
 * - Progress answers are checked leniently (check.ts): unknown fields are kept, a missing
 *   documented field is reported once per client (= per instance) and field through `onIssue`,
 *   and the older shape without `success` is a successful answer (service facts).
 * - `success: false` is a ServiceError whatever the HTTP status ("Do not depend on a status
 *   code: read `success`"); anything that is not a usable JSON answer is a TransportError.
 *   Service facts, "Not published": "Error names and HTTP status codes other than
 *   `InsufficientDestinationDiskSpace`": the reading that fails safe gives no name or status a
 *   meaning of its own; only `success` decides, and the name is shown as it came.
 * - Commands are sent exactly once. Whether a failed command took effect is the runner's call
 *   (it reads progress); `requestSent: false` tells it the request never left.
 * - Every message starts with the redacted URL; the real URL (with its userinfo) is only used
 *   to build the origin and a Basic `authorization` header for a proxy in front of the service.
 * - A client sends through the dispatcher it is given (a fleet shares its Agent) or through an
 *   Agent of its own, created on first use and closed by `close()`; never through undici's
 *   global dispatcher: Node's bundled undici (Node 22+, once the process called `fetch()` or
 *   served node:http), another library or a plugin may have set that global to a dispatcher that
 *   does not speak this undici's handler API (every request then fails: "invalid onError method").
 */
import type { Dispatcher } from "undici";
import { undici } from "./undici.js";
import { COMMAND_OPERATIONS, type CommandOperation } from "./commands.js";
import { checkAnswer, isPlainObject, issueText, type AnswerIssue, type CheckOutcome } from "./check.js";
import { ApiError, ServiceError, TransportError, type ApiOperation, type TransportErrorCode } from "./errors.js";
import { exchange, type ExchangeResult, type PreparedRequest } from "./http.js";
import { crashPoint } from "../crash-points.js";
import { bodyExcerpt, createRedactor, redactUrl, stripUserinfo as redactText } from "../redact.js";
import {
  OPERATION_RESPONSE_SPEC,
  VERIFIER_RESPONSE_SPEC,
  progressResponseSpec,
  type FieldsSpec,
  type OperationResponse,
  type Progress,
  type ProgressResponse,
  type VerifierProgress,
  type VerifierProgressResponse,
} from "./types.js";

/** Default cap on an answer body: progress answers are a few hundred bytes. */
export const DEFAULT_MAX_BODY_BYTES = 1 << 20;
/** Default deadline of one request: the runbook's `defaults.requestTimeout` default (10s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export interface ClientOptions {
  /** Overall deadline of one request (connect, send, answer), in ms (default 10 s). */
  requestTimeoutMs?: number | undefined;
  /**
   * undici dispatcher, owned by the caller (a fleet passes its Agent to all its clients).
   * Default: an Agent of the client's own, closed by its `close()`.
   */
  dispatcher?: Dispatcher | undefined;
  /** Largest answer body accepted (default 1 MiB). */
  maxBodyBytes?: number | undefined;
  /**
   * A documented field missing or mistyped in an answer. Called once per client, field and
   * kind of issue, so a fleet of old-version instances does not warn on every poll.
   * `message` starts with the redacted URL.
   */
  onIssue?: ((issue: AnswerIssue, message: string) => void) | undefined;
  /**
   * The runbook's `serviceVersion` (the lowest any instance runs): progress fields that version
   * documents (src/api/versions.ts) are expected, and a missing one is reported like any
   * missing documented field.
   */
  serviceVersion?: string | undefined;
  /**
   * The run's redaction (its `${env.*}` values), applied to what an answer says before an excerpt
   * of it is cut (a cut secret is no longer recognisable). The client's own password is always
   * redacted; default: that and URL userinfo.
   */
  redact?: ((text: string) => string) | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  /** This request's own time limit, in ms (default: the client's `requestTimeoutMs`). */
  timeoutMs?: number | undefined;
}

/** A verifier command's options: its body is `{}` unless a check is given a `filter`. */
export interface VerifierCommandOptions extends RequestOptions {
  /** The check's `{"filter": …}` (service facts: `POST /api/v1/check` takes `{}` or `{"filter": …}`). */
  filter?: Record<string, unknown> | undefined;
}

/** A request body serialized once (a broadcast sends the same bytes to every instance). */
export class JsonBody {
  readonly bytes: Buffer;
  constructor(readonly value: unknown) {
    this.bytes = Buffer.from(JSON.stringify(value ?? {}), "utf8");
  }
}

export interface CommandResult {
  answer: OperationResponse;
  /** performance.now() when undici began writing the request (the fan-out skew is measured on it). */
  sentAt: number;
  durationMs: number;
  /** HTTP status, for the record only. */
  status: number;
}

export type CommandOutcome =
  | ({ ok: true } & CommandResult)
  | {
      ok: false;
      error: ApiError;
      /** performance.now() when the request began to be written; undefined: it never left. */
      sentAt: number | undefined;
      durationMs: number;
      /** HTTP status, when an answer arrived. */
      status?: number;
    };

export interface ServiceClient {
  /** Redacted base URL. */
  readonly url: string;
  /** One progress request (no retry here: the runner's readFleet retries). */
  progress(opts?: RequestOptions): Promise<Progress>;
  /** The whole progress answer (top level kept, e.g. `success`), checked like `progress`. */
  progressAnswer(opts?: RequestOptions): Promise<ProgressResponse>;
  /**
   * Sends a command once. Throws ServiceError (`success: false`) or TransportError. `body` may be
   * a JsonBody (serialized once by the caller).
   */
  command(op: CommandOperation, body: unknown, opts?: RequestOptions): Promise<CommandResult>;
  /** The same, as data: never rejects with an ApiError (a broadcast collects outcomes). */
  tryCommand(op: CommandOperation, body: unknown, opts?: RequestOptions): Promise<CommandOutcome>;
  /** Closes the client's own Agent, if it made one (not a dispatcher it was given). */
  close(): Promise<void>;
}

export interface VerifierClient {
  readonly url: string;
  /**
   * POST /api/v1/check (`{}` or `{"filter": …}`) or /writesOff (`{}`), as data: never rejects with
   * an ApiError. A refusal (`{"error": …}` without `success: true`, or `success: false`) is a
   * ServiceError.
   */
  tryCommand(op: VerifierCommand, opts?: VerifierCommandOptions): Promise<CommandOutcome>;
  /** POST /api/v1/check: starts checking (answered at once; the check starts later). */
  check(opts?: VerifierCommandOptions): Promise<CommandResult>;
  /** POST /api/v1/writesOff with `{}`: writes have stopped on the source, so it can finish. */
  writesOff(opts?: RequestOptions): Promise<CommandResult>;
  /** GET /api/v1/progress. A top-level `{"error": …}` answer is a ServiceError. */
  progress(opts?: RequestOptions): Promise<VerifierProgress>;
  /** Closes the client's own Agent, if it made one (not a dispatcher it was given). */
  close(): Promise<void>;
}

/** The verifier's operational requests (service facts: "`check` and `writesOff` share a lock"). */
export type VerifierCommand = "check" | "writesOff";

interface Target {
  origin: string;
  /** Base path without a trailing slash ("" or "/prefix"). */
  basePath: string;
  /** Redacted base URL for messages. */
  url: string;
  /** Headers without a body, and with a JSON body (flat lists, shared by every request). */
  getHeaders: string[];
  postHeaders: string[];
  /** Its password (decoded): never in a message, in any form. */
  secrets: string[];
}

function parseTarget(raw: string): Target {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new TypeError(`not a URL: ${redactUrl(raw)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw new TypeError(`${redactUrl(raw)}: only http and https URLs are supported`);
  const auth: string[] = [];
  const secrets: string[] = [];
  if (u.username !== "" || u.password !== "") {
    // a proxy in front of the service; the service itself has no authentication (spec)
    let creds: string;
    try {
      creds = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    } catch {
      throw new TypeError(
        `${redactUrl(raw)}: its user info has a bad percent-escape (a % not followed by two hex digits)`,
      );
    }
    auth.push("authorization", `Basic ${Buffer.from(creds, "utf8").toString("base64")}`);
    if (u.password !== "") secrets.push(decodeURIComponent(u.password));
  }
  const base = ["accept", "application/json", ...auth];
  return {
    origin: u.origin,
    basePath: u.pathname.replace(/\/+$/, ""),
    url: redactUrl(raw),
    // the spec's usage of the verifier's GET progress sends Content-Type: application/json too;
    // harmless for the service's GET
    getHeaders: [...base, "content-type", "application/json"],
    postHeaders: [...base, "content-type", "application/json"],
    secrets,
  };
}

interface ClientCore {
  target: Target;
  redact: (text: string) => string;
  kind: "service" | "verifier";
  opts: ClientOptions;
  send(
    method: "GET" | "POST",
    path: string,
    body: Buffer | undefined,
    signal: AbortSignal | undefined,
    timeoutMs?: number,
  ): Promise<ExchangeResult>;
  reportIssues(operation: ApiOperation, issues: AnswerIssue[]): void;
  close(): Promise<void>;
}

function makeCore(rawUrl: string, kind: "service" | "verifier", opts: ClientOptions): ClientCore {
  const target = parseTarget(rawUrl);
  const redact = createRedactor(target.secrets, opts.redact ?? redactText);
  // made on first use: lint reads the step kinds (and so builds no client) without loading undici
  let own: Dispatcher | undefined;
  const dispatcher = (): Dispatcher => opts.dispatcher ?? (own ??= new (undici().Agent)());
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // per client, i.e. per instance: "reported once per instance and field"
  const reported = new Set<string>();
  const onIssue = opts.onIssue;
  return {
    target,
    redact,
    kind,
    opts,
    send(method, path, body, signal, timeoutMs) {
      const req: PreparedRequest = {
        origin: target.origin,
        path: `${target.basePath}${path}`,
        method,
        headers: method === "POST" ? target.postHeaders : target.getHeaders,
        ...(body ? { body } : {}),
      };
      const sent = (): Promise<ExchangeResult> =>
        exchange(dispatcher(), req, { timeoutMs: timeoutMs ?? requestTimeoutMs, maxBodyBytes, signal });
      if (method !== "POST") return sent();
      // test-only crash points (src/crash-points.ts): a command's request before it leaves, and its
      // answer in hand before the fleet journals it; progress reads are not points
      crashPoint(() => `request:${kind}:POST ${path}:before`);
      return sent().then((r) => {
        crashPoint(() => `request:${kind}:POST ${path}:${r.ok ? "answered" : r.failure}`);
        return r;
      });
    },
    reportIssues(operation, issues) {
      if (!onIssue) return;
      for (const issue of issues) {
        const key = `${issue.path}\0${issue.kind}`;
        if (reported.has(key)) continue;
        reported.add(key);
        onIssue(issue, `${target.url}: ${operation} answer: ${issueText(issue)}`);
      }
    },
    async close() {
      const agent = own;
      own = undefined;
      await agent?.close();
    },
  };
}

function transportFailure(
  url: string,
  operation: ApiOperation,
  r: Extract<ExchangeResult, { ok: false }>,
  redact: (text: string) => string,
): TransportError {
  return new TransportError(url, operation, r.failure, redact(r.detail), {
    ...(r.sysCode !== undefined ? { sysCode: r.sysCode } : {}),
    ...(r.status !== undefined ? { status: r.status } : {}),
    requestSent: r.sentAt !== undefined,
    ...(r.sentAt !== undefined ? { sentAt: r.sentAt } : {}),
    cause: r.cause,
  });
}

function badBody(
  url: string,
  operation: ApiOperation,
  code: TransportErrorCode,
  detail: string,
  status: number,
  text: string,
  redact: (text: string) => string,
): TransportError {
  // an answer arrived, so the request was certainly sent
  return new TransportError(url, operation, code, detail, {
    status,
    bodyStart: bodyExcerpt(text, undefined, redact),
    requestSent: true,
  });
}

/** Parses the body; a JSON error answer (`success: false`) becomes a ServiceError. */
function parseAnswer(
  url: string,
  operation: ApiOperation,
  r: Extract<ExchangeResult, { ok: true }>,
  redact: (text: string) => string,
): unknown {
  let json: unknown;
  try {
    json = JSON.parse(r.text);
  } catch {
    // "A non-JSON body is a transport failure."
    throw badBody(
      url,
      operation,
      "non-json",
      `HTTP ${r.status}, the answer is not JSON: ${JSON.stringify(bodyExcerpt(r.text, 60, redact))}`,
      r.status,
      r.text,
      redact,
    );
  }
  if (isPlainObject(json) && json.success === false) {
    const name = typeof json.error === "string" ? redact(json.error) : "(no error name)";
    const desc = typeof json.errorDescription === "string" ? redact(json.errorDescription) : "";
    throw new ServiceError(url, operation, name, desc, r.status);
  }
  return json;
}

function checked<T>(
  url: string,
  operation: ApiOperation,
  json: unknown,
  spec: FieldsSpec,
  status: number,
  text: string,
  core: ClientCore,
): T {
  const out: CheckOutcome<T> = checkAnswer<T>(json, spec);
  // what came back (its start, redacted by the one redactor before it is cut: src/redact.ts), then
  // what it leaves: kept short, since the runner quotes this message cut to a line (fleet-ops.ts)
  if (!out.ok)
    throw badBody(
      url,
      operation,
      "bad-answer",
      `HTTP ${status}, unexpected answer (${out.fatal}): ${bodyExcerpt(text, 60, core.redact)}; ${leftBy(operation)}`,
      status,
      text,
      core.redact,
    );
  core.reportIssues(operation, out.issues);
  return out.value;
}

/**
 * What a request with an unusable answer leaves. A read changed nothing. A service command reached
 * the service, and an answer without `success` says neither that it was applied nor that it was
 * refused: the contract has every failing call answer `success: false` (sync-service-api.md,
 * Errors; service-facts.md, "Every POST"), and the only answers without `success` service-facts.md
 * records are the verifier's, one of which is a refusal that took effect: its writesOff sets the
 * flag, then answers HTTP 200 `{"error": "failed to fetch source's cluster time: …"}` when it
 * cannot read a cluster time (mongodb-labs/migration-verifier v0.2.1,
 * internal/verifier/migration_verifier.go `WritesOff`: `verifier.writesOff = true` before
 * `GetNewClusterTime`; internal/verifier/webserver.go `writesOffEndpoint`: `c.JSON(http.StatusOK,
 * gin.H{"error": err.Error()})`). So the reading that fails safe, since the service's own answers
 * without `success` are not published: never a refusal ("nothing took effect"), but an effect
 * unknown until progress shows it (the runner reads progress, and never resends blindly).
 */
function leftBy(operation: ApiOperation): string {
  return operation === "progress" || operation === "verifier.progress"
    ? "a read: nothing was changed"
    : `it reached the service: whether ${operation} took effect is unknown until progress shows it`;
}

async function get<T>(core: ClientCore, operation: ApiOperation, spec: FieldsSpec, o: RequestOptions): Promise<T> {
  const r = await core.send("GET", "/api/v1/progress", undefined, o.signal, o.timeoutMs);
  if (!r.ok) throw transportFailure(core.target.url, operation, r, core.redact);
  const json = parseAnswer(core.target.url, operation, r, core.redact);
  // the verifier answers a failure to read its progress with `{"error": …}` at the top level
  // (service facts), without `progress` or `success`: its own refusal, not a malformed answer. It
  // never sends both (migration-verifier v0.1.6 to v0.2.1, internal/verifier/webserver.go
  // `progressEndpoint`: `{"progress": …}` when GetProgress succeeds, else `{"error": …}`): an
  // answer with an error beside its progress is no published answer, and the reading that fails
  // safe is the error's (a failed read, read again), never a progress to judge verification on
  if (core.kind === "verifier" && isPlainObject(json) && json.error !== undefined && json.error !== null)
    throw new ServiceError(
      core.target.url,
      operation,
      core.redact(typeof json.error === "string" ? json.error : JSON.stringify(json.error)),
      "progress" in json ? "an error beside progress, which the verifier never sends: not read as progress" : "",
      r.status,
    );
  // the verifier sends its progress with HTTP 200 alone (webserver.go `progressEndpoint`, v0.1.6 to
  // v0.2.1: `c.Data(http.StatusOK, …)`): a progress under another status came from something else
  // on the way (a proxy's page), or a release nobody published; a failed read, never a progress to
  // judge verification on (the service's status codes are not published: not read there)
  if (core.kind === "verifier" && r.status !== 200)
    throw badBody(
      core.target.url,
      operation,
      "bad-answer",
      `HTTP ${r.status}, which the verifier never sends with its progress: ${bodyExcerpt(r.text, 60, core.redact)}; ${leftBy(operation)}`,
      r.status,
      r.text,
      core.redact,
    );
  return checked<T>(core.target.url, operation, json, spec, r.status, r.text, core);
}

/**
 * Never rejects with an ApiError. Not `async` on purpose: everything up to the socket write runs synchronously
 * in the caller's turn, so a broadcast's requests leave back to back (fan-out skew).
 */
function post(
  core: ClientCore,
  operation: ApiOperation,
  path: string,
  body: unknown,
  o: RequestOptions,
): Promise<CommandOutcome> {
  const json = body instanceof JsonBody ? body : new JsonBody(body);
  return send(core, operation, path, json.bytes, o);
}

/**
 * A verifier command's answer (service facts): only `{"success": true}` without an `error` is
 * accepted. Every other JSON answer is a refusal, whatever its shape or status: `success: false`
 * (`APIError`, "request in progress"), a string `error` without `success` (`writesOff already
 * set`, "failed to fetch source's cluster time: …", a bad body's HTTP 400), an `error` that is not
 * a string, a `success` that is not the boolean `true`, or an object with neither. An empty body
 * or one that is not JSON is no answer at all (the published verifier's handler panicking is an
 * empty HTTP 500): the request reached it, its effect is unknown.
 */
function verifierAnswer(
  url: string,
  operation: ApiOperation,
  r: Extract<ExchangeResult, { ok: true }>,
  redact: (text: string) => string,
): OperationResponse {
  // only {success: true} without an error is an acceptance: the published verifier refuses
  // with {"error": …} and no success, and any other shape is no acceptance either
  if (r.text.trim() === "")
    throw badBody(url, operation, "non-json", `HTTP ${r.status}, an empty answer`, r.status, r.text, redact);
  const json = parseAnswer(url, operation, r, redact);
  if (isPlainObject(json) && json.success === true && (json.error === undefined || json.error === null))
    return json as OperationResponse;
  const error = isPlainObject(json) ? json.error : undefined;
  const name =
    typeof error === "string"
      ? error
      : error !== undefined && error !== null
        ? JSON.stringify(error)
        : `not an acceptance (no "success": true): ${bodyExcerpt(r.text, 60, redact)}`;
  throw new ServiceError(url, operation, redact(name), "", r.status);
}

function send(
  core: ClientCore,
  operation: ApiOperation,
  path: string,
  bytes: Buffer,
  o: RequestOptions,
): Promise<CommandOutcome> {
  return core.send("POST", path, bytes, o.signal, o.timeoutMs).then((r): CommandOutcome => {
    if (!r.ok)
      return {
        ok: false,
        error: transportFailure(core.target.url, operation, r, core.redact),
        sentAt: r.sentAt,
        durationMs: r.durationMs,
      };
    try {
      const answer: OperationResponse =
        core.kind === "verifier"
          ? verifierAnswer(core.target.url, operation, r, core.redact)
          : checked<OperationResponse>(
              core.target.url,
              operation,
              parseAnswer(core.target.url, operation, r, core.redact),
              OPERATION_RESPONSE_SPEC,
              r.status,
              r.text,
              core,
            );
      return {
        ok: true,
        answer,
        sentAt: r.sentAt ?? performance.now() - r.durationMs,
        durationMs: r.durationMs,
        status: r.status,
      };
    } catch (err) {
      if (err instanceof ApiError)
        return { ok: false, error: err, sentAt: r.sentAt, durationMs: r.durationMs, status: r.status };
      throw err;
    }
  });
}

const orThrow = (p: Promise<CommandOutcome>): Promise<CommandResult> =>
  p.then((o) => {
    if (!o.ok) throw o.error;
    return { answer: o.answer, sentAt: o.sentAt, durationMs: o.durationMs, status: o.status };
  });

/** A client of one sync service instance. `url` may carry `user:password@` (never shown). */
export function createServiceClient(url: string, opts: ClientOptions = {}): ServiceClient {
  const core = makeCore(url, "service", opts);
  const spec = progressResponseSpec(opts.serviceVersion);
  const progressAnswer = (o: RequestOptions = {}): Promise<ProgressResponse> =>
    get<ProgressResponse>(core, "progress", spec, o);
  const tryCommand = (op: CommandOperation, body: unknown, o: RequestOptions = {}): Promise<CommandOutcome> => {
    if (!COMMAND_OPERATIONS.includes(op)) return Promise.reject(new TypeError(`unknown command "${String(op)}"`));
    return post(core, op, `/api/v1/${op}`, body, o);
  };
  return {
    url: core.target.url,
    progressAnswer,
    progress: async (o = {}) => (await progressAnswer(o)).progress,
    tryCommand,
    command: (op, body, o = {}) => orThrow(tryCommand(op, body, o)),
    close: () => core.close(),
  };
}

/** A client of the migration verifier (check, writesOff, progress: service facts). */
export function createVerifierClient(url: string, opts: ClientOptions = {}): VerifierClient {
  const core = makeCore(url, "verifier", opts);
  const tryCommand = (op: VerifierCommand, o: VerifierCommandOptions = {}): Promise<CommandOutcome> =>
    post(core, `verifier.${op}`, `/api/v1/${op}`, verifierBody(op, o), o);
  return {
    url: core.target.url,
    tryCommand,
    check: (o = {}) => orThrow(tryCommand("check", o)),
    writesOff: (o = {}) => orThrow(tryCommand("writesOff", o)),
    progress: async (o = {}) =>
      (await get<VerifierProgressResponse>(core, "verifier.progress", VERIFIER_RESPONSE_SPEC, o)).progress,
    close: () => core.close(),
  };
}

/** The body of a verifier command: `{}`, or a check's `{"filter": …}`. */
export function verifierBody(op: VerifierCommand, o: VerifierCommandOptions = {}): Record<string, unknown> {
  return op === "check" && o.filter !== undefined ? { filter: o.filter } : {};
}
