/**
 * The trace of a cutover has one id whatever process sends its spans: it is derived from the
 * cutover's id (made by its first run, journaled in `run.started`, copied by every `--resume`),
 * so a failed run and its resumes are one trace in the backend.
 */
import { createHash } from "node:crypto";

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
