/**
 * The trace of a cutover has one id whatever process sends its spans: it is derived from the
 * cutover's id (made by its first run, journaled in `run.started`, copied by every `--resume`),
 * so a failed run and its resumes are one trace in the backend.
 */
import { createHash, randomBytes } from "node:crypto";

const hex = (text: string, chars: number): string => createHash("sha256").update(text).digest("hex").slice(0, chars);

/** 32 hex characters: the cutover's trace id. */
export function traceIdOf(cutover: string): string {
  return hex(`syncbook-trace:${cutover}`, 32);
}

/** 16 hex characters: the id of the cutover's (virtual) root span, every run span's parent. */
export function rootSpanIdOf(cutover: string): string {
  return hex(`syncbook-root:${cutover}`, 16);
}

/** W3C `traceparent` of a sampled span. */
export function traceparent(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}

/**
 * 16 hex characters: a span's id from what names it in the cutover (its run, the event that
 * started it, its name), so the span a live run exports and the one `report --otlp` or a resume
 * builds from the journal are one span: a backend sees it once, and a resume knows which of the
 * earlier runs' spans its collector already has (`trace.exported`).
 */
export function spanIdOf(cutover: string, key: string): string {
  return hex(`syncbook-span:${cutover}:${key}`, 16);
}

/**
 * OpenTelemetry's `IdGenerator` (the SDK asks it once per span started, synchronously, for the
 * span id, and for the trace id of a span without a parent): each answer is the one the fold set
 * right before it started the span; random only if none was set (never, by the fold).
 */
export interface SpanIdSource {
  generator: { generateTraceId(): string; generateSpanId(): string };
  /** The ids of the next span started. */
  next(spanId: string, traceId?: string): void;
}

export function createSpanIdSource(): SpanIdSource {
  let span: string | undefined;
  let trace: string | undefined;
  return {
    generator: {
      generateTraceId: () => {
        const t = trace ?? randomBytes(16).toString("hex");
        trace = undefined;
        return t;
      },
      generateSpanId: () => {
        const s = span ?? randomBytes(8).toString("hex");
        span = undefined;
        return s;
      },
    },
    next(spanId, traceId) {
      span = spanId;
      trace = traceId;
    },
  };
}
