/**
 * Running plugins during a run: hooks (with timeout and undo), the undo stack, notifications.
 *
 * Nothing here throws into the run: a hook call resolves to an outcome (ok or failed, with a
 * redacted error), an undo unwind reports every undo and goes on after a failing one, and a
 * notifier's failure is reported through `onError` / the log and never reaches the runner.
 */
import { redactSecretFields } from "../redact.js";
import { terminalText } from "../text.js";
import type { InstanceRef, RunListener } from "../events.js";
import type {
  HookContext,
  HookFn,
  InstanceSnapshot,
  JsonSchema,
  Notification,
  NotifierContext,
  PluginContext,
  PluginLogger,
  StepInfo,
  UndoAction,
} from "./api.js";
import { describeNotification, severityOf } from "./events.js";
import { checkOptions } from "./options.js";
import type { PluginRegistry } from "./registry.js";
import { createLogger, errorText, ownTimeout, withTimeout, type LogSink } from "./util.js";
import { errorMessage } from "../errors.js";
import { formatDuration } from "../runbook/duration.js";

/** What the runner provides to every plugin call of a run. */
export interface PluginRunContext {
  runbook: { name: string; file: string };
  /** The runbook's folder. */
  cwd: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** The loader's redaction (every `${env.*}` value, URL userinfo). */
  redact: (text: string) => string;
  /** Where plugin log lines go (the runner turns them into `log` events). */
  log: LogSink;
  /** `run`, `rehearse`, `resume`. */
  mode?: string;
  /** The fleet's last sampled progress (see `createFleetTracker`). */
  fleet?: () => readonly InstanceSnapshot[];
  /** Where console notifiers print (default: process.stdout). */
  print?: (line: string) => void;
  /** This cutover's id, the same across `--resume` (see `PluginContext.cutover`). */
  cutover?: string;
  /** The `traceparent` of the span running now, when the run exports a trace. */
  traceparent?: () => string | undefined;
}

/** What every plugin call receives, from the run's context. */
function pluginContext(
  ctx: PluginRunContext,
  options: Record<string, unknown>,
  signal: AbortSignal,
  log: PluginLogger,
): PluginContext<Record<string, unknown>> {
  const tp = ctx.traceparent?.();
  return {
    options,
    runbook: ctx.runbook,
    cwd: ctx.cwd,
    env: ctx.env ?? process.env,
    signal,
    log,
    redact: ctx.redact,
    ...(ctx.cutover !== undefined ? { cutover: ctx.cutover } : {}),
    ...(tp !== undefined ? { traceparent: tp } : {}),
  };
}

/** A hook call as a runbook writes it (`stopWrites`, `hook`, or their `undo`). */
export interface HookCallSpec {
  use: string;
  with?: Record<string, unknown>;
  timeout?: string | number;
  undo?: HookCallSpec;
}

export type HookOutcome =
  | { ok: true; durationMs: number; undo?: UndoAction; summary?: string; value?: unknown }
  | { ok: false; durationMs: number; error: string; timedOut: boolean; interrupted: boolean };

export interface RunHookOptions {
  /** The call's time limit; the hook's signal aborts then, and the call is abandoned. */
  timeoutMs: number;
  /** The run's signal (Ctrl-C). Undo calls get none: an undo must run after an interrupt. */
  signal?: AbortSignal;
  undo?: boolean;
}

/** Redacts a step for a hook's context (header values, secret-named keys, `${env.*}` values). */
export function stepInfo(
  index: number,
  id: string,
  kind: string,
  title: string,
  raw: Record<string, unknown>,
  redact: (t: string) => string,
): StepInfo {
  const red = redactSecretFields(raw, redact);
  return { index, id, kind, title, raw: Object.freeze(red) };
}

/** Runs one hook call. Never throws: the outcome says what happened, its error is redacted. */
export async function runHook(
  registry: PluginRegistry,
  call: { use: string; with?: Record<string, unknown> },
  step: StepInfo,
  ctx: PluginRunContext,
  opts: RunHookOptions,
): Promise<HookOutcome> {
  const hook = registry.hook(call.use);
  return invoke(
    hook && { what: `hook ${call.use}`, logPrefix: call.use, schema: hook.optionsSchema, run: hook.run },
    `unknown hook ${call.use}`,
    call.with,
    step,
    ctx,
    opts,
  );
}

/**
 * Runs a plugin step kind (`- <kind>: <options>` in `steps:`), exactly like a hook call: same
 * context, timeout and outcome; its returned `undo` is registered with
 * `undoFor(registry, { use: kind }, outcome, …)`.
 */
export async function runPluginStep(
  registry: PluginRegistry,
  kind: string,
  options: unknown,
  step: StepInfo,
  ctx: PluginRunContext,
  opts: RunHookOptions,
): Promise<HookOutcome> {
  const s = registry.step(kind);
  return invoke(
    s && { what: `step ${kind}`, logPrefix: kind, schema: s.optionsSchema, run: s.impl.run },
    `unknown step kind ${kind}`,
    options ?? undefined,
    step,
    ctx,
    opts,
  );
}

/** The task-list title of a plugin step without a `name:` (the plugin's `title`, else the kind). */
export function pluginStepTitle(
  registry: PluginRegistry,
  kind: string,
  options: unknown,
  redact: (t: string) => string,
): string {
  const title = registry.step(kind)?.impl.title;
  if (!title) return kind;
  try {
    return redact(title((options ?? {}) as Record<string, unknown>));
  } catch {
    return kind;
  }
}

async function invoke(
  target:
    | { what: string; logPrefix: string; schema: JsonSchema | undefined; run: HookFn<Record<string, unknown>> }
    | undefined,
  unknown: string,
  options: unknown,
  step: StepInfo,
  ctx: PluginRunContext,
  opts: RunHookOptions,
): Promise<HookOutcome> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const fail = (error: string, timedOut = false, interrupted = false): HookOutcome => ({
    ok: false,
    durationMs: elapsed(),
    error: ctx.redact(error),
    timedOut,
    interrupted,
  });
  if (!target) return fail(unknown);
  const checked = await checkOptions(target.schema, options);
  if (!checked.ok) return fail(`${target.what}: ${checked.problems.map((p) => p.message).join("; ")}`);
  const log = createLogger(ctx.log, ctx.redact, `${target.logPrefix}: `);
  try {
    const result = await withTimeout(
      (signal) => {
        const hctx: HookContext<Record<string, unknown>> = {
          ...pluginContext(ctx, checked.value, signal, log),
          step,
          undo: opts.undo ?? false,
          mode: ctx.mode ?? "run",
          fleet: ctx.fleet?.() ?? [],
        };
        return target.run(hctx);
      },
      opts.timeoutMs,
      opts.signal,
    );
    const out: HookOutcome = { ok: true, durationMs: elapsed() };
    if (result && typeof result === "object") {
      if (result.undo !== undefined) out.undo = result.undo;
      if (result.value !== undefined) out.value = result.value;
      if (typeof result.summary === "string") {
        out.summary = ctx.redact(result.summary);
        log.info(result.summary);
      }
    }
    return out;
  } catch (err) {
    if (ownTimeout(err, opts.signal)) return fail(`${target.what} ${err.message}; abandoned`, true);
    if (opts.signal?.aborted) return fail(`${target.what} interrupted`, false, true);
    return fail(`${target.what} failed: ${errorText(err, ctx.redact)}`);
  }
}

/** One pending undo: what to run if the run fails or is interrupted before commit. */
export interface UndoEntry {
  step: StepInfo;
  /** The hook that undoes (`function` for an undo the hook returned as a function). */
  use: string;
  /** Where it came from: the runbook's `undo:` or the hook's result. */
  origin: "runbook" | "hook";
  /** The runbook's `undo:` as a command an operator can run by hand (redacted), when its hook makes one. */
  command?: string;
  /** `signal` aborts only on a forced exit (a second Ctrl-C): an undo must otherwise run after an interrupt. */
  run(signal?: AbortSignal): Promise<HookOutcome>;
}

export interface UndoReport {
  entry: UndoEntry;
  outcome: HookOutcome;
}

/**
 * A hook call as a command an operator can run by hand (the hook's `command`), redacted; undefined
 * when the hook makes none or its `command` throws (a display aid must never fail a run).
 */
export function hookCommand(
  registry: PluginRegistry,
  call: HookCallSpec,
  ctx: Pick<PluginRunContext, "cwd" | "fleet" | "redact">,
): string | undefined {
  const make = registry.hook(call.use)?.command;
  if (!make) return undefined;
  try {
    const text = make(call.with ?? {}, {
      cwd: ctx.cwd,
      instances: (ctx.fleet?.() ?? []).map((s) => s.instance.url),
    });
    return text === undefined ? undefined : ctx.redact(text);
  } catch {
    return undefined;
  }
}

/**
 * The undo of a hook call that ran, or undefined when it has none.
 * - The runbook's `undo:` is registered as soon as the hook started, whatever its outcome: a
 *   hook that failed or hung may have done part of its work (writes half stopped).
 * - Otherwise the hook's own returned `undo`, when it succeeded.
 */
export function undoFor(
  registry: PluginRegistry,
  call: HookCallSpec,
  outcome: HookOutcome,
  step: StepInfo,
  ctx: PluginRunContext,
  timeoutMs: number,
): UndoEntry | undefined {
  if (call.undo) {
    const u = call.undo;
    const command = hookCommand(registry, u, ctx);
    return {
      step,
      use: u.use,
      origin: "runbook",
      ...(command !== undefined ? { command } : {}),
      run: (signal) => runHook(registry, u, step, ctx, { timeoutMs, undo: true, ...(signal ? { signal } : {}) }),
    };
  }
  if (!outcome.ok || outcome.undo === undefined) return undefined;
  const undo = outcome.undo;
  if (typeof undo === "function") {
    return {
      step,
      use: call.use,
      origin: "hook",
      run: async (outer) => {
        const started = performance.now();
        try {
          await withTimeout((signal) => undo(signal), timeoutMs, outer);
          return { ok: true, durationMs: Math.round(performance.now() - started) };
        } catch (err) {
          const timedOut = ownTimeout(err, outer);
          return {
            ok: false,
            durationMs: Math.round(performance.now() - started),
            error: ctx.redact(
              `undo of ${call.use} ${timedOut ? `timed out after ${formatDuration(timeoutMs)}` : `failed: ${errorText(err, ctx.redact)}`}`,
            ),
            timedOut,
            interrupted: false,
          };
        }
      },
    };
  }
  return {
    step,
    use: undo.use,
    origin: "hook",
    run: (signal) =>
      runHook(registry, { use: undo.use, ...(undo.with ? { with: undo.with } : {}) }, step, ctx, {
        timeoutMs,
        undo: true,
        ...(signal ? { signal } : {}),
      }),
  };
}

/**
 * The undos of the hooks that ran, in order. `unwind()` runs them last-first, each one even if
 * an earlier one failed, and reports each. After `disarm()` (commit was sent) nothing is undone.
 */
export class UndoStack {
  private entries: UndoEntry[] = [];
  private armed = true;
  private running: UndoEntry | undefined;

  get size(): number {
    return this.entries.length;
  }
  get disarmed(): boolean {
    return !this.armed;
  }
  push(entry: UndoEntry | undefined): void {
    if (entry && this.armed) this.entries.push(entry);
  }
  /** Commit was sent: from now on nothing is undone. */
  disarm(): void {
    this.armed = false;
    this.entries = [];
  }
  /** A new sync began (reverse): hooks from now on are undone again until its commit. */
  rearm(): void {
    this.armed = true;
  }
  /** The undos not finished: the one running (first), then those still waiting, in the order they would run. */
  unfinished(): { entry: UndoEntry; running: boolean }[] {
    return [
      ...(this.running ? [{ entry: this.running, running: true }] : []),
      ...[...this.entries].reverse().map((entry) => ({ entry, running: false })),
    ];
  }
  /**
   * Runs every pending undo, last first. Never throws; the stack is empty afterwards. `signal`
   * aborts them (a forced exit): the running one is stopped and the rest are not started.
   */
  async unwind(
    on: {
      started?(e: UndoEntry): void;
      /** Runs each undo's call (`call`): a wrapper, such as its own process watch (src/run/unwind.ts). */
      around?(e: UndoEntry, call: () => Promise<HookOutcome>): Promise<HookOutcome>;
      finished?(e: UndoEntry, o: HookOutcome): void;
    } = {},
    signal?: AbortSignal,
  ): Promise<UndoReport[]> {
    const reports: UndoReport[] = [];
    while (this.armed && this.entries.length > 0 && !signal?.aborted) {
      const entry = this.entries.pop() as UndoEntry;
      this.running = entry;
      on.started?.(entry);
      let outcome: HookOutcome;
      try {
        const call = () => entry.run(signal);
        outcome = await (on.around ? on.around(entry, call) : call());
      } catch (err) {
        outcome = {
          ok: false,
          durationMs: 0,
          error: errorMessage(err),
          timedOut: false,
          interrupted: false,
        };
      }
      this.running = undefined;
      on.finished?.(entry, outcome);
      reports.push({ entry, outcome });
    }
    return reports;
  }
}

export interface NotifyOptions {
  /** Time limit of one notification (default 15 s). */
  timeoutMs?: number;
  /** Aborts the attempt (the drain's bound after the run, Ctrl-C): the notifier's signal aborts with it. */
  signal?: AbortSignal;
}

/**
 * Sends one notification. Never throws: a failure is returned (redacted). `inDoubt`: the attempt
 * got no answer (timed out, or cut off by `signal`), so it may still have arrived.
 */
export async function sendNotification(
  registry: PluginRegistry,
  call: { use: string; with?: Record<string, unknown> },
  notification: Notification,
  ctx: PluginRunContext,
  opts: NotifyOptions = {},
): Promise<{ ok: true } | { ok: false; error: string; inDoubt?: boolean }> {
  const notifier = registry.notifier(call.use);
  if (!notifier) return { ok: false, error: `unknown notifier ${call.use}` };
  const checked = await checkOptions(notifier.optionsSchema, call.with);
  if (!checked.ok)
    return {
      ok: false,
      error: ctx.redact(`notifier ${call.use}: ${checked.problems.map((p) => p.message).join("; ")}`),
    };
  const prefix =
    notification.type !== "notify" && typeof checked.value.text === "string" && checked.value.text !== ""
      ? `${checked.value.text} `
      : "";
  const text = ctx.redact(prefix + describeNotification(notification, ctx.runbook.name, ctx.mode === "rehearse"));
  const timeoutMs = opts.timeoutMs ?? 15_000;
  try {
    await withTimeout(
      async (signal) => {
        const nctx: NotifierContext<Record<string, unknown>> = {
          ...pluginContext(ctx, checked.value, signal, createLogger(ctx.log, ctx.redact, `${call.use}: `)),
          text,
          severity: severityOf(notification),
          // one line on a terminal: what it quotes is shown, never obeyed (src/text.ts)
          print: (line) => (ctx.print ?? ((l: string) => void process.stdout.write(`${l}\n`)))(terminalText(line)),
        };
        await notifier.send(notification, nctx);
      },
      timeoutMs,
      opts.signal,
    );
    return { ok: true };
  } catch (err) {
    const cut = opts.signal?.aborted === true;
    const msg = ownTimeout(err, opts.signal)
      ? `timed out after ${formatDuration(timeoutMs)}`
      : cut
        ? `cut off: ${errorText(opts.signal?.reason, ctx.redact)}`
        : errorText(err, ctx.redact);
    return {
      ok: false,
      error: ctx.redact(`notifier ${call.use} failed: ${msg}`),
      ...(ownTimeout(err, opts.signal) || cut ? { inDoubt: true } : {}),
    };
  }
}

/**
 * Keeps the last progress per instance from the event stream (`progress.sampled`), for hook
 * contexts. Subscribe `listener`; pass `snapshot` as `PluginRunContext.fleet`.
 */
export function createFleetTracker(): { listener: RunListener; snapshot: () => readonly InstanceSnapshot[] } {
  // each instance's last answer as its event carried it, copied and frozen only when a hook asks:
  // a deep copy per answer was the largest cost of a fleet read (64 instances polled fast inside
  // the write-stop window, issue 41)
  type Tracked = { instance: InstanceRef; sample?: { progress: unknown; at: number }; view?: InstanceSnapshot };
  const last = new Map<number, Tracked>();
  const view = (t: Tracked): InstanceSnapshot =>
    (t.view ??= Object.freeze({
      instance: Object.freeze({ ...t.instance }),
      progress: t.sample ? deepFreeze(structuredClone(t.sample.progress)) : undefined,
      sampledAt: t.sample?.at,
    }));
  return {
    listener: (e) => {
      if (e.type === "run.started")
        for (const i of e.instances) if (!last.has(i.index)) last.set(i.index, { instance: i });
      if (e.type === "progress.sampled")
        last.set(e.instance.index, { instance: e.instance, sample: { progress: e.progress, at: e.at } });
    },
    snapshot: () => [...last.values()].map(view).sort((a, b) => a.instance.index - b.instance.index),
  };
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object") {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
