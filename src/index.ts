/** The library surface of syncbook. Each concern re-exports its public API here. */
export { UserError, ExitCode } from "./errors.js";
export type { Diagnostic, Severity } from "./diagnostics.js";
export {
  startSimulator,
  parseFault,
  type Simulator,
  type SimulatorOptions,
  type SimControl,
  type SimulatorInstance,
  type FaultSpec,
  type SimState,
} from "./sim/index.js";
export {
  buildReport,
  ReportBuilder,
  writeReport,
  writeReportFiles,
  createReportListener,
  readJournal,
  renderJson,
  renderJunit,
  renderHtml,
  REPORT_FILES,
} from "./report/index.js";
export type {
  Report,
  ReportStep,
  ReportRequest,
  ReportDecision,
  ReportListener,
  WrittenReport,
  JournalRead,
} from "./report/index.js";
// the API a plugin is written against (plugin/public.ts), then what a host of plugins calls
export * from "./plugin/public.js";
export {
  describeNotification,
  EVENT_NAMES,
  loadPlugins,
  runHook,
  sendNotification,
  stepInfo,
  UndoStack,
  undoFor,
} from "./plugin/index.js";
export {
  loadRunbook,
  parseRunbook,
  type LoadedRunbook,
  type LoadOptions,
  type Runbook,
  type Step,
  type StepKind,
} from "./runbook/index.js";
export { lintRunbook, lintFiles, RULES, RULE_CATALOGUE, formatDiagnostics } from "./lint/index.js";
export {
  runRunbook,
  planSteps,
  planRequests,
  FORCE_CHECKS,
  type RunOptions,
  type RunResult,
  type RunEvent,
  type RunEventMap,
  type RunListener,
} from "./run/index.js";
export { createFleet, evaluate, type Fleet, type FleetSnapshot } from "./fleet/index.js";
export {
  createServiceClient,
  createVerifierClient,
  ServiceError,
  TransportError,
  START_FIELDS,
  PROGRESS_FIELDS,
  STATES,
  startVersionProblems,
  lagSeconds,
  wireStartBody,
  type Progress,
  type VerifierProgress,
} from "./api/index.js";
export { prepareRehearsal, formatVerdict, type Rehearsal, type Verdict } from "./rehearse/index.js";
export {
  runPreflight,
  PREFLIGHT_CHECKS,
  type PreflightOptions,
  type PreflightResult,
  type NamespaceList,
  type PreflightCheckInfo,
} from "./preflight/index.js";
