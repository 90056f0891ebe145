/**
 * The API a plugin is written against, in one list: what the built-in plugins (`plugins/*.ts`)
 * import, and nothing else of syncbook's, so a third party can write `shell` or `http` as they
 * stand. The package root (`syncbook`) re-exports this module whole.
 */
export { definePlugin } from "./api.js";
export type {
  PluginDefinition,
  HookDef,
  HookFn,
  HookContext,
  HookResult,
  UndoAction,
  NotifierDef,
  InDoubtPolicy,
  Notifier,
  NotifierContext,
  Notification,
  NotifyMessage,
  RunnerLost,
  NotificationSeverity,
  StepImpl,
  StepInfo,
  InstanceSnapshot,
  PluginContext,
  PluginLogger,
  JsonSchema,
  WritesEffect,
  HookCommand,
} from "./api.js";
export { sendHttp, HttpError, describeTarget, curlCommand, type HttpCall, type HttpAnswer } from "./http.js";
export { runProcess, ProcessError, showArgv, shellCommand, type ProcessCall, type ProcessResult } from "./process.js";
export { DURATION_SCHEMA, NOTIFY_TEXT_SCHEMA, createRedactor, retriesSchema } from "./util.js";
export { durationMs, durationOr, formatDuration } from "../runbook/duration.js";
