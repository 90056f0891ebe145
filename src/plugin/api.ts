/**
 * The public plugin API: what a plugin file imports from `syncbook`.
 *
 * A plugin is an ES module (TypeScript or JavaScript) whose default export is
 * `definePlugin({ name, optionsSchema, hooks?, notifiers?, steps? })`. It can give
 * - hooks: called by `stopWrites` and `hook` steps (and their `undo:`), e.g. switch a feature
 *   flag, drain a load balancer, revoke a database role; a hook may return an `undo`;
 * - notifiers: called with run events chosen by the runbook's top-level `notify:` block and by
 *   `notify` steps (chat, pager, ticket, file);
 * - step kinds (see `StepImpl`).
 *
 * The names under `hooks`, `notifiers` and `steps` are what a runbook writes in `use:`.
 * Options (`with:`) are checked against `optionsSchema` (JSON Schema 2020-12, through ajv) when
 * the runbook is linted, with a `file:line:col` per error, and again before a run starts.
 *
 * Contract, in short:
 * - Honour `ctx.signal`: it aborts at the step's timeout and on Ctrl-C. A hook that ignores it
 *   is abandoned at its timeout (its child processes are the hook's job to kill) and the step fails.
 * - Log through `ctx.log` only: it redacts every secret (`${env.*}` values, URL passwords).
 *   Never put option values that may be secrets (headers, tokens) in thrown error messages.
 * - Throw to fail. A hook's failure fails its step; a notifier's failure is reported and
 *   never fails the cutover.
 */
import type { InstanceRef, RunEvent, RunEventType } from "../events.js";

export type { RunEvent, RunEventType, InstanceRef };

/** A JSON Schema (2020-12) object. Give every property a `description`: editors show it. */
export type JsonSchema = { [key: string]: unknown } | boolean;

/** A logger whose every message goes through the run's redaction. */
export interface PluginLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** The step a hook runs for, already redacted (header values and secrets removed). */
export interface StepInfo {
  /** 0-based position in `steps:`. */
  index: number;
  id: string;
  /** `stopWrites`, `hook`, `notify`, or a plugin step kind. */
  kind: string;
  title: string;
  /** The step as written (after interpolation), redacted. */
  raw: Readonly<Record<string, unknown>>;
}

/** The last progress the runner sampled from one instance (read-only). */
export interface InstanceSnapshot {
  readonly instance: Readonly<InstanceRef>;
  /** The `progress` object of the instance's last answer; undefined before the first sample. */
  readonly progress: unknown;
  /** When it was sampled (ms since epoch); undefined before the first sample. */
  readonly sampledAt: number | undefined;
}

/** What every plugin call receives. */
export interface PluginContext<O> {
  /** The call's options (`with:`), interpolated and checked against the plugin's schema. */
  readonly options: O;
  /** The runbook being run. */
  readonly runbook: { readonly name: string; readonly file: string };
  /** The runbook's folder: resolve relative paths against it. */
  readonly cwd: string;
  /** The process environment (read-only). Values taken from it are secrets: don't log them. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted at the call's timeout and when the run is interrupted. */
  readonly signal: AbortSignal;
  readonly log: PluginLogger;
  /** Redacts every secret of the run from a string (what `log` does to each message). */
  readonly redact: (text: string) => string;
  /**
   * This cutover's id: the same for every run of it (`--resume` included), so a pager can keep one
   * alert per cutover. Undefined outside a journaled run (a library caller without one).
   */
  readonly cutover?: string;
  /**
   * W3C `traceparent` of the span this call runs under, when the run exports a trace
   * (OpenTelemetry variables set): pass it on so the plugin's own spans join the cutover's trace.
   */
  readonly traceparent?: string;
}

/** What a hook receives. */
export interface HookContext<O = Record<string, unknown>> extends PluginContext<O> {
  readonly step: StepInfo;
  /** True when this call is an undo (a runbook's `undo: { use: … }`). */
  readonly undo: boolean;
  /** `run`, `rehearse`, `resume` (dry runs never call hooks). */
  readonly mode: string;
  /** The fleet's last sampled progress, one entry per instance, in runbook order. */
  readonly fleet: readonly InstanceSnapshot[];
}

/**
 * How a hook's effect is reverted. Runs when the run fails or is interrupted before commit is
 * sent, in reverse order of the hooks that ran. A runbook's own `undo:` on the step wins over it.
 * - a function (gets a fresh signal that aborts at the undo timeout), or
 * - a hook call `{ use, with }` run like a runbook's `undo:`.
 */
export type UndoAction = ((signal: AbortSignal) => Promise<void>) | { use: string; with?: Record<string, unknown> };

export interface HookResult {
  undo?: UndoAction;
  /** One line for the log and the report, e.g. "writes off on 3 app servers". */
  summary?: string;
  /**
   * What a read found (`http`: the answer's JSON body; `sim-writes-stopped`: `{ writes }`): a
   * stopWrites `check:`'s `expect` compares it, field by field, as `waitFor.expect` compares progress.
   */
  value?: unknown;
}

export type HookFn<O> = (ctx: HookContext<O>) => Promise<HookResult | void> | HookResult | void;

/** A message sent by a `notify` step (as opposed to a run event). */
export interface NotifyMessage {
  type: "notify";
  /** The text: the step's string, or its `with.text`. */
  text: string;
  /** The step that sent it. */
  index: number;
  id: string;
  at: number;
}

/**
 * The dead-man's switch (issue 38): told by `syncbook watch`, the process that outlives the runner,
 * never by the runner itself: the last run of an unfinished cutover has no end and its runner is
 * gone (`dead`: its process no longer runs, or no process holds the journal folder's lock) or
 * `silent` (no journal line for longer than its step allows; a lock held on another machine).
 * Told once per run of the cutover. An entry hears it when its `on:` names `runner.lost`,
 * `run.failed` or `run.finished` (a runner's death is a run that failed without a word).
 */
export interface RunnerLost {
  type: "runner.lost";
  at: number;
  how: "dead" | "silent";
  /** The run whose runner is gone (1-based, across the cutover's journals). */
  run: number;
  /** What happened, in one line (redacted). */
  headline: string;
  /** The state it left: writes, the commit, the step (`writes stopped 3m ago`, `commit sent to 1 of 2 instances`). */
  left: string[];
  /** The command that helps next (`syncbook run <runbook> --resume`). */
  next?: string;
  /** Application writes are stopped, or a commit was sent: the application is down or the cutover past its point of no return. */
  critical: boolean;
}

/**
 * What a notifier receives: a run event (see `src/run/events.ts`), a `notify` step's message, or
 * `syncbook watch`'s word that the runner is gone.
 */
export type Notification = RunEvent | NotifyMessage | RunnerLost;

export interface NotifierContext<O = Record<string, unknown>> extends PluginContext<O> {
  /** One human sentence for the notification, e.g. "step 4 stop-writes failed: exit code 1". */
  readonly text: string;
  /** `info`, `warning`, `error` or `critical` (pager severities). */
  readonly severity: NotificationSeverity;
  /** Where a console notifier writes a line (the runner prints it above its task list). */
  print(line: string): void;
}

export type NotificationSeverity = "info" | "warning" | "error" | "critical";

export type Notifier<O = Record<string, unknown>> = (
  notification: Notification,
  ctx: NotifierContext<O>,
) => Promise<void> | void;

/**
 * A step kind added by a plugin. Minimal on purpose: it is run like a hook (same context, same
 * timeout, same undo contract) but has its own kind key in `steps:`, its own title, and its own
 * options (the kind key's value). Safety interlocks do not know plugin steps: a plugin step never
 * counts as `stopWrites` and is never run after a commit refusal.
 */
export interface StepImpl<O = Record<string, unknown>> {
  description?: string;
  optionsSchema?: JsonSchema;
  /** Title in the task list when the step has no `name:`. */
  title?: (options: O) => string;
  run: HookFn<O>;
}

/**
 * What a hook call does to the application's writes, judged from its options alone (a pure
 * function: lint calls it, nothing may happen): "off" stops them, "on" lets them flow again,
 * undefined when the options do not say. Lint and the runner then hold a `stopWrites` call to
 * "off" and its `undo` to "on".
 */
export type WritesEffect = (options: Record<string, unknown>) => "on" | "off" | undefined;

/**
 * A hook call as a command an operator can run by hand, from its options alone (a pure function:
 * nothing may happen): after an undo failed, the run, `status` and the report show it so that the
 * operator can do what the undo does (`node hooks/app-writes.mjs on https://…`, `curl -X PUT …`).
 * `where` holds the runbook's folder and its instances' URLs. Undefined when the options do not
 * make one. The text is redacted before anyone sees it.
 */
export type HookCommand<O> = (options: O, where: { cwd: string; instances: readonly string[] }) => string | undefined;

/**
 * A hook given as a function, or with its own schema, description, effect on writes, command, and
 * whether it starts processes (`runProcess`): a process can outlive a runner that is killed, so such
 * an undo of a write stop may turn writes on behind a later commit, where only a `check:` can see it
 * (lint's `undo-process-without-check`).
 */
export type HookDef<O> =
  | HookFn<O>
  | {
      description?: string;
      optionsSchema?: JsonSchema;
      writes?: WritesEffect;
      startsProcesses?: boolean;
      command?: HookCommand<O>;
      run: HookFn<O>;
    };
/**
 * What a resume does with a notification whose delivery is in doubt (the run died, or the attempt
 * got no answer, after it was sent): `resend` (the default) delivers it again, since a duplicate
 * is the lesser harm than a lost page; `skip` never sends it twice (a notifier whose repeat does
 * harm: opening a ticket, running automation). docs/observability.md has each built-in's reading.
 */
export type InDoubtPolicy = "resend" | "skip";
export type NotifierDef<O> =
  Notifier<O> | { description?: string; optionsSchema?: JsonSchema; inDoubt?: InDoubtPolicy; send: Notifier<O> };

export interface PluginDefinition<O = Record<string, unknown>> {
  /** The plugin's name (kebab-case), used in messages. The `use:` names are the keys below. */
  name: string;
  description?: string;
  /** JSON Schema of `with:` for every entry below that has no schema of its own. */
  optionsSchema?: JsonSchema;
  hooks?: Record<string, HookDef<O>>;
  notifiers?: Record<string, NotifierDef<O>>;
  steps?: Record<string, StepImpl<O>>;
}

/**
 * Declares a plugin. An identity function that gives the definition its types: the options type
 * `O` should match `optionsSchema`.
 *
 * ```ts
 * import { definePlugin } from "syncbook";
 * export default definePlugin<{ flag: string }>({
 *   name: "flags",
 *   optionsSchema: { type: "object", required: ["flag"], properties: { flag: { type: "string", description: "Flag name" } } },
 *   hooks: {
 *     "flag-off": async (ctx) => {
 *       await setFlag(ctx.options.flag, false, ctx.signal);
 *       return { undo: (signal) => setFlag(ctx.options.flag, true, signal) };
 *     },
 *   },
 * });
 * ```
 */
export function definePlugin<O = Record<string, unknown>>(def: PluginDefinition<O>): PluginDefinition<O> {
  return def;
}
