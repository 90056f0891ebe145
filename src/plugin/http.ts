/**
 * One HTTP request with undici for hooks and notifiers: per-attempt timeout, retries, expected
 * status, and errors that never echo a header value, a query string or a secret.
 *
 * - No redirects are followed (headers would travel to another host).
 * - Each request closes its connection (`reset`): nothing keeps the process alive after a run.
 * - Each attempt sends through an Agent of its own, closed when the attempt ends: never through
 *   undici's global dispatcher, which Node's bundled undici (Node 22+, once the process called
 *   `fetch()` or served node:http), another library or a plugin may have replaced with one this
 *   undici cannot drive ("invalid onError method").
 * - Retried: transport errors, attempt timeouts, 408, 429 and 5xx, up to `retries` more times.
 *   Any other unexpected status fails at once (a 4xx will not get better).
 */
import type * as Undici from "undici";
import { crashPoint } from "../crash-points.js";
import { runtimeImport } from "../runtime-import.js";
import { formatDuration } from "../runbook/duration.js";
import type { PluginLogger } from "./api.js";
import { TimeoutError, createRedactor, errorText, withTimeout } from "./util.js";
import { bodyExcerpt } from "../redact.js";
import { retriesAfter, retryPauseMs, retryWait, type RetryPolicy } from "../retry.js";
import { shellCommand } from "./process.js";

export interface HttpCall {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON (with `content-type: application/json`). */
  body?: unknown;
  /** Accepted statuses: a number, a list, or a class like `"2xx"` (default `"2xx"`). */
  expectStatus?: number | string | readonly (number | string)[];
  /** Extra attempts after a retryable failure (default 0). */
  retries?: number;
  /** Pause between attempts (default 1 s, doubled each time, at most 30 s). */
  retryDelayMs?: number;
  /** Per attempt (default 30 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The run's redaction; header values of this call are redacted on top of it. */
  redact?: (text: string) => string;
  log?: PluginLogger;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as text (at most 64 KiB kept). */
  text: string;
  attempts: number;
  durationMs: number;
}

/** A failed request; its message is redacted and names no header value. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly attempts: number,
  ) {
    super(message);
  }
}

const MAX_BODY = 64 * 1024;
/** Headers whose values are not secrets (kept readable in messages). */
const PLAIN_HEADERS = new Set(["content-type", "accept", "user-agent", "content-length", "accept-encoding"]);

function statusMatches(status: number, expect: HttpCall["expectStatus"]): boolean {
  const list = expect === undefined ? ["2xx"] : Array.isArray(expect) ? expect : [expect];
  return list.some((e) =>
    typeof e === "number"
      ? status === e
      : /^[1-5]xx$/i.test(String(e))
        ? Math.floor(status / 100) === Number(String(e)[0])
        : status === Number(e),
  );
}

/** A failed attempt: the status it answered, or none (a transport error, the attempt's time limit). */
export interface HttpFailure {
  status: number | undefined;
}

/**
 * The retry policy of one call: `retries` more attempts after the first, paused `retryDelayMs`
 * (default 1 s), doubled each time up to 30 s, no jitter (the log line says how long); retried:
 * no answer (a transport error, an attempt's time limit), 408, 429 and 5xx.
 */
export function httpRetry(call: Pick<HttpCall, "retries" | "retryDelayMs">): RetryPolicy<HttpFailure> {
  return {
    attempts: Math.max(0, Math.floor(call.retries ?? 0)) + 1,
    baseMs: call.retryDelayMs ?? 1000,
    capMs: 30_000,
    jitter: "none",
    retryable: (f) => f.status === undefined || f.status === 408 || f.status === 429 || f.status >= 500,
  };
}

/** `METHOD origin/path` without query string or userinfo, for messages. */
export function describeTarget(method: string, url: string, redact: (t: string) => string): string {
  try {
    const u = new URL(url);
    return redact(`${method} ${u.origin}${u.pathname}`);
  } catch {
    return `${method} (invalid URL)`;
  }
}

/**
 * An HTTP request as a `curl` command an operator can paste (a hook's `command`): the method, the
 * URL without its query string (never shown: it may carry a token), each header with its value
 * as `***` but for the plain ones (content-type, accept…), and the body as `sendHttp` sends it.
 */
export function curlCommand(call: {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
}): string {
  const argv = ["curl", "-sS", "-X", (call.method ?? "POST").toUpperCase()];
  let url = call.url;
  try {
    const u = new URL(call.url);
    if (u.search) u.search = "?***";
    url = u.href;
  } catch {
    // shown as written: the request fails the same way
  }
  argv.push(url);
  const headers = Object.entries(call.headers ?? {});
  for (const [k, v] of headers) argv.push("-H", `${k}: ${PLAIN_HEADERS.has(k.toLowerCase()) ? v : "***"}`);
  if (call.body !== undefined && call.body !== null) {
    const json = typeof call.body !== "string";
    if (json && !headers.some(([k]) => k.toLowerCase() === "content-type"))
      argv.push("-H", "content-type: application/json");
    argv.push("--data-raw", json ? JSON.stringify(call.body) : (call.body as string));
  }
  return shellCommand(argv);
}

export async function sendHttp(call: HttpCall): Promise<HttpAnswer> {
  const method = (call.method ?? "POST").toUpperCase();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.headers ?? {})) headers[k.toLowerCase()] = String(v);
  const headerSecrets = Object.entries(headers)
    .filter(([k]) => !PLAIN_HEADERS.has(k))
    .map(([, v]) => v);
  // userinfo in the URL means basic auth, as with curl (undici would drop it silently); an
  // Authorization header given outright wins
  let url: URL | undefined;
  try {
    url = new URL(call.url);
  } catch {
    // reported below, with the redactor in place
  }
  if (url && (url.username || url.password)) {
    const user = safeDecode(url.username);
    const password = safeDecode(url.password);
    const basic = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
    if (password) headerSecrets.push(password, url.password);
    // a user without a password is usually a token (https://TOKEN@host/)
    else if (user) headerSecrets.push(user, url.username);
    if (headers.authorization === undefined) {
      headers.authorization = basic;
      headerSecrets.push(basic);
    }
    url.username = "";
    url.password = "";
  }
  const redact = createRedactor(headerSecrets, call.redact);
  const target = describeTarget(method, call.url, redact);
  let body: string | undefined;
  if (call.body !== undefined && call.body !== null) {
    if (typeof call.body === "string") body = call.body;
    else {
      body = JSON.stringify(call.body);
      headers["content-type"] ??= "application/json";
    }
  }
  headers["user-agent"] ??= "syncbook";
  if (!url) throw new HttpError(`${target}: not a valid URL`, undefined, 0);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new HttpError(`${target}: only http and https URLs are supported`, undefined, 0);

  const policy = httpRetry(call);
  const timeoutMs = call.timeoutMs ?? 30_000;
  const started = performance.now();
  const { Agent, request } = await runtimeImport<typeof Undici>("undici");
  let lastError = "";
  let lastStatus: number | undefined;
  for (let attempt = 1; ; attempt++) {
    if (call.signal?.aborted) throw new HttpError(`${target}: interrupted`, lastStatus, attempt - 1);
    let failure: HttpFailure;
    try {
      const answer = await withTimeout(
        async (signal) => {
          const dispatcher = new Agent();
          try {
            crashPoint(() => `hook-request:${method}:before`);
            const res = await request(url, {
              method: method as "POST",
              headers,
              body: body ?? null,
              signal,
              reset: true,
              dispatcher,
            });
            let text = "";
            for await (const chunk of res.body) {
              if (text.length < MAX_BODY) text += (chunk as Buffer).toString("utf8");
            }
            crashPoint(() => `hook-request:${method}:answered`);
            return { status: res.statusCode, headers: res.headers, text: text.slice(0, MAX_BODY) };
          } finally {
            await dispatcher.destroy();
          }
        },
        timeoutMs,
        call.signal,
      );
      lastStatus = answer.status;
      if (statusMatches(answer.status, call.expectStatus)) {
        return { ...answer, attempts: attempt, durationMs: Math.round(performance.now() - started) };
      }
      // redacted before it is cut (half a secret is no longer recognisable), a JSON body leaf by leaf
      const snippet = bodyExcerpt(answer.text, 200, redact);
      lastError = `answered ${answer.status}${snippet ? ` (${snippet})` : ""}, expected ${expectText(call.expectStatus)}`;
      failure = { status: answer.status };
    } catch (err) {
      if (call.signal?.aborted) throw new HttpError(`${target}: interrupted`, lastStatus, attempt);
      lastError =
        err instanceof TimeoutError ? `no answer within ${formatDuration(timeoutMs)}` : errorText(err, redact);
      lastStatus = undefined;
      failure = { status: undefined };
    }
    if (!retriesAfter(policy, failure, attempt)) {
      throw new HttpError(
        redact(`${target} ${lastError}${attempt > 1 ? ` (after ${attempt} attempts)` : ""}`),
        lastStatus,
        attempt,
      );
    }
    const pause = retryPauseMs(policy, attempt - 1);
    call.log?.warn(
      redact(
        `${target} ${lastError}; retrying in ${formatDuration(pause)} (attempt ${attempt + 1} of ${policy.attempts})`,
      ),
    );
    // any length (a `retryDelay` is the runbook's); a Ctrl-C ends it, and the next round says so
    await retryWait(pause, call.signal);
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function expectText(e: HttpCall["expectStatus"]): string {
  if (e === undefined) return "2xx";
  return Array.isArray(e) ? e.join(" or ") : String(e);
}
