/**
 * The simulator's answers as data (the HTTP layer writes them), and the body readers the service
 * and verifier handlers share.
 */

/**
 * An HTTP answer: a JSON body, a raw text (`text`, with its content type), or nothing at all
 * (`drop`: the connection is destroyed without an answer).
 */
export interface Reply {
  status: number;
  body?: unknown;
  text?: string;
  contentType?: string;
  drop?: boolean;
}

/** Error names (the real ones are undocumented: a client must rely on `success`). */
export type ErrorName =
  | "BadJSON"
  | "InvalidRequest"
  | "InvalidStateTransition"
  | "NotFound"
  | "MethodNotAllowed"
  | "PayloadTooLarge"
  | "InternalError"
  | "ProgressUnavailable"
  | "CommitRefused"
  | "BadRequest"
  | "MigrationFailed"
  | "InsufficientDestinationDiskSpace";

/** facts: "Error: `{"success": false, "error": "<Name>", "errorDescription": "<text>"}`". */
export const errorReply = (status: number, error: ErrorName, errorDescription: string): Reply => ({
  status,
  body: { success: false, error, errorDescription },
});
export const ok = (extra: Record<string, unknown> = {}): Reply => ({ status: 200, body: { success: true, ...extra } });
export const DROP: Reply = { status: 0, drop: true };
/** The verifier's `{"error": …}` answers (no `success` field). */
export const verifierError = (status: number, error: string): Reply => ({ status, body: { error } });

/** Parses a request body: undefined when empty, a marker on bad JSON. */
export const BAD = Symbol("bad json");
export function parseBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return BAD;
  }
}
export const isEmptyObject = (v: unknown): boolean =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
export const goType = (v: unknown): string =>
  Array.isArray(v) ? "array" : typeof v === "string" ? "string" : typeof v === "number" ? "number" : "bool";
