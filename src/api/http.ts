/**
 * One HTTP exchange on undici's `dispatch` API (not `request`), for three reasons:
 * - `onRequestStart` runs synchronously just before undici writes the request to the socket:
 *   its time is the true send time (commit fan-out skew is measured from it), and if it never
 *   ran the request was certainly not sent (a command that failed that way did not take effect);
 * - one overall deadline per request (connect + send + headers + body) and the caller's signal
 *   are handled with one timer and one listener, both released on settle. (AbortSignal.any /
 *   AbortSignal.timeout per request would do too, but on Node 20 signals combined with a
 *   long-lived run signal are retained until that signal dies: a leak at 256 polls a second.)
 * - the body is read with a size cap, into one string, without stream machinery.
 */
import { performance } from "node:perf_hooks";
import type { Dispatcher } from "undici";
import { errorMessage } from "../errors.js";
import { setLongTimeout, timerMs, type LongTimeout } from "../timers.js";
import { formatDuration } from "../runbook/duration.js";

export interface PreparedRequest {
  /** `http://host:port` (no userinfo). */
  origin: string;
  /** Path with the base URL's prefix, e.g. `/api/v1/progress`. */
  path: string;
  method: "GET" | "POST";
  /** Flat [name, value, …] list, shared between requests of one broadcast. */
  headers: string[];
  body?: Buffer;
}

export interface ExchangeOptions {
  timeoutMs: number;
  maxBodyBytes: number;
  signal?: AbortSignal | undefined;
}

export type ExchangeResult =
  | { ok: true; status: number; text: string; sentAt: number | undefined; durationMs: number }
  | {
      ok: false;
      failure: "timeout" | "aborted" | "connect" | "network" | "too-large";
      detail: string;
      sysCode?: string;
      status?: number;
      /** performance.now() when undici started writing, if it did. */
      sentAt: number | undefined;
      durationMs: number;
      cause?: unknown;
    };

const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "UND_ERR_CONNECT_TIMEOUT",
  "EADDRNOTAVAIL",
]);

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  if (e && typeof e.code === "string") {
    // undici wraps the socket's error: prefer the system code when there is one
    if (e.code === "UND_ERR_SOCKET" && typeof e.cause?.code === "string") return e.cause.code;
    return e.code;
  }
  return undefined;
}

function messageOf(err: unknown): string {
  return errorMessage(err);
}

/** Sends one request now. Never rejects: failures are data. */
export function exchange(dispatcher: Dispatcher, req: PreparedRequest, opts: ExchangeOptions): Promise<ExchangeResult> {
  return new Promise<ExchangeResult>((resolve) => {
    const t0 = performance.now();
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let sentAt: number | undefined;
    let status = 0;
    let size = 0;
    const chunks: Buffer[] = [];
    let timer: LongTimeout | undefined = undefined; // set after the early-abort check, cleared by finish()

    const finish = (result: ExchangeResult, abortReason?: Error): void => {
      if (settled) return;
      settled = true;
      if (timer) timer.clear();
      opts.signal?.removeEventListener("abort", onAbort);
      if (abortReason && controller && !controller.aborted) controller.abort(abortReason);
      resolve(result);
    };
    const fail = (
      failure: Extract<ExchangeResult, { ok: false }>["failure"],
      detail: string,
      extra: { sysCode?: string; cause?: unknown; status?: number } = {},
      abort?: Error,
    ): void => finish({ ok: false, failure, detail, sentAt, durationMs: performance.now() - t0, ...extra }, abort);
    function onAbort(): void {
      fail("aborted", "aborted by the caller", { cause: opts.signal?.reason }, new Error("aborted by the caller"));
    }

    if (opts.signal?.aborted) {
      fail("aborted", "aborted by the caller", { cause: opts.signal.reason });
      return;
    }
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    timer = setLongTimeout(() => {
      fail("timeout", `no answer within ${formatDuration(opts.timeoutMs)}`, {}, new Error("request timeout"));
    }, opts.timeoutMs);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        // A request whose deadline passed while it waited for a connection is never written.
        if (settled) {
          c.abort(new Error("request no longer wanted"));
          return;
        }
        controller = c;
        sentAt = performance.now();
      },
      onResponseStart(_c, statusCode) {
        status = statusCode;
      },
      onResponseData(c, chunk) {
        if (settled) return;
        size += chunk.length;
        if (size > opts.maxBodyBytes) {
          fail("too-large", `answer larger than ${opts.maxBodyBytes} bytes`, { status }, new Error("answer too large"));
          if (!c.aborted) c.abort(new Error("answer too large"));
          return;
        }
        chunks.push(chunk);
      },
      onResponseEnd() {
        const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
        finish({ ok: true, status, text, sentAt, durationMs: performance.now() - t0 });
      },
      onResponseError(_c, err) {
        if (settled) return;
        const code = codeOf(err);
        if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
          fail("timeout", `no answer in time (${code})`, { sysCode: code, cause: err });
        } else if (sentAt === undefined || (code !== undefined && CONNECT_CODES.has(code))) {
          // never written to a socket: the server cannot have acted on it
          fail(
            "connect",
            `cannot connect: ${messageOf(err)}${code && !messageOf(err).includes(code) ? ` (${code})` : ""}`,
            { ...(code ? { sysCode: code } : {}), cause: err },
          );
        } else {
          fail(
            "network",
            `connection failed: ${messageOf(err)}${code && !messageOf(err).includes(code) ? ` (${code})` : ""}`,
            { ...(code ? { sysCode: code } : {}), cause: err },
          );
        }
      },
    };

    try {
      dispatcher.dispatch(
        {
          origin: req.origin,
          path: req.path,
          method: req.method,
          headers: req.headers,
          body: req.body ?? null,
          // keep-alive: connections warmed by progress polls carry the commit (low fan-out skew)
          reset: false,
          // backstops; the overall deadline above is what callers see
          headersTimeout: timerMs(opts.timeoutMs + 1000),
          bodyTimeout: timerMs(opts.timeoutMs + 1000),
        },
        handler,
      );
    } catch (err) {
      fail("connect", `cannot send: ${messageOf(err)}`, { cause: err });
    }
  });
}
