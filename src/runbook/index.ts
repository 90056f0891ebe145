/**
 * src/runbook — the format: load (YAML → positioned, interpolated, schema-checked runbook),
 * the domain types (from the schema), durations, whose `canWrite` is valid (`can-write.ts`).
 */
export { loadRunbook, parseRunbook, redactedVar, type LoadedRunbook, type LoadOptions } from "./load.js";
export { durationMs, durationOr, formatDuration } from "./duration.js";
export { createLocator, type Locate, type Span } from "./positions.js";
export { envNamesIn, type Scalar } from "./interpolate.js";
export * from "./types.js";
export {
  canWriteInstance,
  committedBeforeWrites,
  destinationWrites,
  noCanWriteReason,
  type DestinationWrites,
} from "./can-write.js";
