/**
 * src/plugin — plugins: the public API (`definePlugin` and its types, `sendHttp`, `runProcess`), loading
 * (`loadPlugins`), checking a runbook's calls (`loadRunbookPlugins`, `lintPlugins`), and running
 * them (`runHook`, `UndoStack`, `sendNotification`, `createNotifierListener`). The package root (`syncbook`)
 * re-exports the API a plugin author needs; the runner and lint import the rest from here.
 */
// the plugin API, one list (public.ts); what the runner and lint need besides it follows
export * from "./public.js";
export { forcedStop, FORCED_STOP } from "./process.js";
export {
  describeNotification,
  severityOf,
  eventMatcher,
  isEventName,
  EVENT_NAMES,
  EVENT_ALIASES,
  NOTIFY_STEP,
  RUNNER_LOST,
  hearsRunnerLost,
} from "./events.js";
export { checkOptions, type OptionProblem } from "./options.js";
export { BUILTIN_PLUGINS, type BuiltinPlugin } from "./builtins.js";
export { PLUGIN_RULES, type PluginRule } from "./rules.js";
export {
  PluginRegistry,
  loadPlugins,
  type PluginProblem,
  type LoadPluginsOptions,
  type LoadedPlugin,
  type RegisteredHook,
  type RegisteredNotifier,
  type RegisteredStep,
  type PluginSource,
} from "./registry.js";
export {
  loadRunbookPlugins,
  lintPlugins,
  checkPluginCalls,
  findPluginCalls,
  toDiagnostics,
  type PluginLintInput,
  type PluginCall,
  type PluginCallKinds,
} from "./calls.js";
export {
  runHook,
  runPluginStep,
  pluginStepTitle,
  undoFor,
  UndoStack,
  sendNotification,
  createFleetTracker,
  stepInfo,
  type PluginRunContext,
  type HookCallSpec,
  type HookOutcome,
  type UndoEntry,
  type UndoReport,
} from "./invoke.js";
export {
  createNotifierListener,
  foldDeliveries,
  deliveryLabel,
  isDeliveryEvent,
  DRAIN_MS,
  RETRY_BUDGET_MS,
  type NotifyEntry,
  type NotifierListener,
  type DrainResult,
  type DeliveryLedger,
} from "./deliveries.js";
export { createRedactor, DURATION_SCHEMA } from "./util.js";
