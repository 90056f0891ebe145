/**
 * Lint: the spec's rules over loaded runbooks, and the report formats.
 *
 * - `lintRunbook(loaded)`: the rules on one loaded runbook (none when the runbook is not
 *   schema-valid; the loader's own diagnostics are not repeated).
 * - `lintFiles(paths)`: files and folders → loader diagnostics + rule diagnostics, sorted.
 * - `RULES`: the catalogue (id, severity, description, the spec sentence it enforces).
 * - `formatDiagnostics(format, input)`: pretty, json, github, junit, sarif.
 */
export { RULES, lintRunbook, lintWithLoader, sortDiagnostics } from "./rules.js";
export { RULE_CATALOGUE, ruleInfo } from "./catalogue.js";
export type { RuleInfo, LintInput, Span } from "./context.js";
export { findRunbookFiles } from "./files.js";
export { lintFiles, lintLoaded, type LintFilesResult } from "./run.js";
export { FORMATS, formatDiagnostics, type Format, type FormatInput } from "./format/index.js";
