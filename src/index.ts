/** The library surface of syncbook. Each concern re-exports its public API here. */
export { UserError, ExitCode } from "./errors.js";
export type { Diagnostic, Severity } from "./diagnostics.js";
