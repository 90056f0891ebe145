/**
 * Small helpers shared by the plugin machinery and the built-in plugins: durations, redaction,
 * a redacting logger, and running a call under a timeout and an abort signal.
 */
export { createRedactor } from "../redact.js";
import type { PluginLogger } from "./api.js";
import { errorMessage } from "../errors.js";
import { TimeoutError, raceAbort, setLongTimeout } from "../timers.js";

/** JSON Schema of a duration option (same grammar as the runbook's durations). */
export const DURATION_SCHEMA = {
  anyOf: [
    { type: "string", pattern: "^[0-9]+(\\.[0-9]+)?(ms|s|m|h|d)$" },
    { type: "number", minimum: 0 },
  ],
} as const;

/** A notifier's `text` option: the message of a `notify` step, a prefix before a run event's sentence. */
export const NOTIFY_TEXT_SCHEMA = {
  type: "string",
  description: "In a `notify` step: the message. On run events: a prefix before the event's description.",
} as const;

/** A delivery's `retries` option (the same bound for every HTTP notifier; `sendHttp` retries). */
export function retriesSchema(byDefault: number) {
  return {
    type: "integer",
    minimum: 0,
    maximum: 5,
    default: byDefault,
    description: `Extra attempts after a transport error, 429 or 5xx (default ${byDefault}).`,
  } as const;
}

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogSink = (level: LogLevel, message: string) => void;

/** A logger that redacts every message and prefixes it (e.g. with the hook's name). */
export function createLogger(sink: LogSink, redact: (text: string) => string, prefix = ""): PluginLogger {
  const at = (level: LogLevel) => (message: string) => sink(level, redact(prefix + String(message)));
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** The message of anything thrown, redacted, on one line (an error's cause is appended). */
export function errorText(err: unknown, redact: (text: string) => string): string {
  let msg = errorMessage(err);
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error && cause.message && !msg.includes(cause.message)) msg += `: ${cause.message}`;
  return redact(msg.replace(/\s*\n\s*/g, " ").trim() || "error");
}

/** The one timeout error (src/timers.ts): `withTimeout` aborts with it. */
export { TimeoutError };

/**
 * The call's own time limit passed (`withTimeout`'s), not the outer signal's: a step's limit is a
 * `TimeoutError` too (its `StepTimeout`) and reaches the call as the outer signal's reason, which
 * is an interruption of the call, never its own timeout.
 */
export function ownTimeout(err: unknown, outer: AbortSignal | undefined): err is TimeoutError {
  return err instanceof TimeoutError && !(outer?.aborted === true && outer.reason === err);
}

/**
 * Runs `fn` with a signal that aborts at `timeoutMs` (reason: `TimeoutError`) or when `outer`
 * aborts. Settles at that moment even if `fn` ignores its signal: a hung call is abandoned,
 * never waited for.
 */
export async function withTimeout<T>(
  fn: (signal: AbortSignal) => Promise<T> | T,
  timeoutMs: number,
  outer?: AbortSignal,
): Promise<T> {
  const ctl = new AbortController();
  const onOuter = (): void => ctl.abort(outer?.reason ?? new Error("interrupted"));
  if (outer?.aborted) onOuter();
  else outer?.addEventListener("abort", onOuter, { once: true });
  const timer = setLongTimeout(() => ctl.abort(new TimeoutError(timeoutMs)), timeoutMs);
  try {
    if (ctl.signal.aborted) throw ctl.signal.reason;
    return await raceAbort(
      Promise.resolve().then(() => fn(ctl.signal)),
      ctl.signal,
    );
  } finally {
    timer.clear();
    outer?.removeEventListener("abort", onOuter);
  }
}
