/**
 * Checking a runbook's plugin calls against the registry (`registry.ts` loads it).
 *
 * - `loadRunbookPlugins(loaded)`: the plugins a loaded runbook names, loaded, and every call
 *   checked: unknown `use:` (`plugin-unknown`), options failing the plugin's schema
 *   (`plugin-options`), unknown events in `notify[].on` (`notify-event`). Returns the registry
 *   and positioned diagnostics; the runner refuses to start when any is an error.
 * - `lintPlugins(loaded)`: only the diagnostics, for `syncbook lint`.
 */
import type { Diagnostic, Severity } from "../diagnostics.js";
import { PLUGIN_STEP_KIND } from "../runbook/types.js";
import { suggest } from "../suggest.js";
import { diagnosticAt } from "../runbook/view.js";
import type { BuiltinPlugin } from "./builtins.js";
import { EVENT_NAMES, isEventName } from "./events.js";
import { PLUGIN_RULES } from "./rules.js";
import { coercion } from "../runbook/interpolate.js";
import { checkOptions, type OptionsCheck } from "./options.js";
import {
  loadPlugins,
  type LoadPluginsOptions,
  type PluginProblem,
  type PluginRegistry,
  type RegisteredEntry,
  type RegisteredHook,
} from "./registry.js";

type YamlPath = PluginProblem["path"];

/** What of the loader's `LoadedRunbook` the plugin checks use (a `LoadedRunbook` satisfies it). */
export interface PluginLintInput {
  file: string;
  /** The interpolated, schema-valid runbook (undefined when invalid). */
  runbook: unknown;
  /** The parsed YAML before interpolation. */
  raw: unknown;
  locate(
    path: (string | number)[],
    opts?: { key?: boolean },
  ): { line: number; column: number; endLine?: number; endColumn?: number };
  redact: (text: string) => string;
  /**
   * Paths (JSON) whose `${env.*}` was not resolved (lint mode): their options cannot be judged.
   * Without it, every interpolated value is taken as unknown (the old, lenient rule).
   */
  unresolved?: ReadonlySet<string>;
  /** Paths (JSON) of whole-value placeholders that resolved to a string: coerced to the type the plugin's schema wants. */
  whole?: ReadonlySet<string>;
}

/** A plugin call found in a runbook. */
export interface PluginCall {
  kind: RegisteredEntry["kind"];
  use: string;
  options: unknown;
  /** Path of the object holding `use:` (for a plugin step: the step). */
  path: YamlPath;
  /** Path of the options (`with:`, or a plugin step's kind key). */
  optionsPath: YamlPath;
  /** A hook of a step that stops writes: the stop itself, its undo, or its check. */
  writes?: "stop" | "undo" | "check";
}

function rec(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * The step kinds whose body calls a plugin by `use:` (a hook, a notifier), and whether it stops
 * writes: handed down by the step kinds (`PLUGIN_CALL_KINDS`, src/steps/index.ts), which sit
 * above the plugins.
 */
export type PluginCallKinds = ReadonlyMap<string, { plugin: "hook" | "notifier"; opensWriteStop: boolean }>;

/** Every plugin call of a runbook document (hooks and undos, notify steps, notify entries, plugin steps). */
export function findPluginCalls(
  doc: unknown,
  callKinds: PluginCallKinds,
  stepKinds: ReadonlySet<string> = new Set(),
): PluginCall[] {
  const calls: PluginCall[] = [];
  const steps = rec(doc)?.steps;
  if (Array.isArray(steps)) {
    steps.forEach((s, i) => {
      const step = rec(s);
      if (!step) return;
      for (const [kind, { plugin, opensWriteStop }] of callKinds) {
        const body = step[kind];
        if (plugin === "notifier") {
          // a plain-string notify step prints its text (the runner's own stdout line): no plugin to check or load
          const n = rec(body);
          if (n && typeof n.use === "string")
            calls.push({
              kind: "notifier",
              use: n.use,
              options: n.with,
              path: ["steps", i, kind],
              optionsPath: ["steps", i, kind, "with"],
            });
          continue;
        }
        const call = rec(body);
        if (!call) continue;
        if (typeof call.use === "string")
          calls.push({
            kind: "hook",
            use: call.use,
            options: call.with,
            path: ["steps", i, kind],
            optionsPath: ["steps", i, kind, "with"],
            ...(opensWriteStop ? { writes: "stop" as const } : {}),
          });
        // a stopWrites' `check:` is a hook call too (schema allows it only there)
        for (const sub of ["undo", "check"] as const) {
          const inner = rec(call[sub]);
          if (inner && typeof inner.use === "string")
            calls.push({
              kind: "hook",
              use: inner.use,
              options: inner.with,
              path: ["steps", i, kind, sub],
              optionsPath: ["steps", i, kind, sub, "with"],
              ...(opensWriteStop ? { writes: sub } : {}),
            });
        }
      }
      for (const key of Object.keys(step)) {
        // a plugin step kind (kebab-case with a hyphen) is a call even when no plugin provides it: lint says so
        if (stepKinds.has(key) || PLUGIN_STEP_KIND.test(key))
          calls.push({
            kind: "step",
            use: key,
            options: step[key],
            path: ["steps", i],
            optionsPath: ["steps", i, key],
          });
      }
    });
  }
  const notify = rec(doc)?.notify;
  if (Array.isArray(notify)) {
    notify.forEach((e, j) => {
      const entry = rec(e);
      if (entry && typeof entry.use === "string")
        calls.push({
          kind: "notifier",
          use: entry.use,
          options: entry.with,
          path: ["notify", j],
          optionsPath: ["notify", j, "with"],
        });
    });
  }
  return calls;
}

function valueAt(doc: unknown, path: YamlPath): unknown {
  let node = doc;
  for (const seg of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string | number, unknown>)[seg];
  }
  return node;
}

/** True when the raw (pre-interpolation) text at a path holds `${…}`: lint cannot judge it. */
function interpolatedAt(raw: unknown, path: YamlPath): boolean {
  for (let n = path.length; n >= 0; n--) {
    const v = valueAt(raw, path.slice(0, n));
    if (typeof v === "string") return v.includes("${");
    if (v !== undefined) return false;
  }
  return false;
}

/**
 * A write hook used the wrong way round: a `stopWrites` whose options turn writes on (the
 * interlock would say "writes stopped" while they flow), or an undo that turns them off.
 * Options built from `${…}` are judged once their values are known (a run; the runner holds the
 * same rule for library callers).
 */
function writesDirection(
  entry: RegisteredHook,
  call: PluginCall,
  options: Record<string, unknown>,
  raw: unknown,
  placeholders: PlaceholderInfo | undefined,
): PluginProblem | undefined {
  const role = call.writes;
  if (!entry.writes || !role) return undefined;
  // judged whenever the values are known (a run reads the environment); lint judges what it can
  // see: an effect that read none of the options it cannot see (a review: `enabled: true` written
  // out beside an unknown `url` under stopWrites passed lint, a hook that turns writes on)
  const prefix = JSON.stringify(call.optionsPath).slice(0, -1);
  let effect: ReturnType<NonNullable<RegisteredHook["writes"]>>;
  if (placeholders?.unresolved) {
    if (unresolvedAt(placeholders.unresolved, call.optionsPath)) return undefined;
    const unseen = new Set<string>();
    for (const p of placeholders.unresolved)
      if (p.startsWith(`${prefix},`)) {
        const key = (JSON.parse(p) as unknown[])[call.optionsPath.length];
        if (typeof key === "string") unseen.add(key);
      }
    const read = readsOf(options);
    effect = entry.writes(read.options);
    if (read.all || [...unseen].some((k) => read.keys.has(k))) return undefined;
  } else if (JSON.stringify(valueAt(raw, call.optionsPath) ?? null).includes("${")) return undefined;
  else effect = entry.writes(options);
  if (role === "check")
    return effect === undefined
      ? undefined
      : {
          rule: "plugin-options",
          path: valueAt(raw, call.optionsPath) === undefined ? [...call.path, "use"] : call.optionsPath,
          message: `hook \`${call.use}\` turns application writes ${effect}: a \`check\` must only read the write switch, and it runs again before every commit`,
          hint: "Use a hook that reads the switch and fails while writes flow (for the simulator: `sim-writes-stopped`).",
        };
  const want = role === "stop" ? "off" : "on";
  if (effect === undefined || effect === want) return undefined;
  return {
    rule: "plugin-options",
    path: valueAt(raw, call.optionsPath) === undefined ? [...call.path, "use"] : call.optionsPath,
    message:
      role === "stop"
        ? `hook \`${call.use}\` with these options turns application writes on, under \`stopWrites\`: the interlock would say writes are stopped while they flow, and writes during commit may be lost`
        : `hook \`${call.use}\` with these options turns application writes off, as the undo of \`stopWrites\`: a failed cutover would leave the application unable to write`,
    hint:
      role === "stop"
        ? `Give the options that stop writes (for sim-writes: \`enabled: false\`, the default); put the call that turns them on under \`undo:\`.`
        : `The undo must turn writes back on (for sim-writes: \`enabled: true\`).`,
  };
}

/**
 * The undo of a write stop that starts a process, with no `check:` on that stop (issue 42). Why
 * it is a warning and not an error: beside the rule's entry (src/plugin/rules.ts).
 */
function uncheckedProcessUndo(entry: RegisteredHook, call: PluginCall, doc: unknown): PluginProblem | undefined {
  if (call.writes !== "undo" || entry.startsProcesses !== true) return undefined;
  if (valueAt(doc, [...call.path.slice(0, 3), "check"]) !== undefined) return undefined;
  return {
    rule: "undo-process-without-check",
    path: [...call.path, "use"],
    message: `the undo of this stopWrites starts a process (\`${call.use}\`), and the stopWrites has no \`check:\`: if a killed runner leaves that process behind and it hides from the next run (an \`env -i\` with \`setsid\`, a job it queues), it can turn writes back on behind the commit, and nothing would read the switch`,
    hint: "Add `check:` to the stopWrites step: a hook that reads the write switch and fails while writes flow. It runs after the stop and again right before every commit, and decides when the runner cannot tell whether an earlier run's hook processes have exited.",
  };
}

/** `options` behind a proxy that notes which of its keys are read (`all`: enumerated). */
function readsOf(options: Record<string, unknown>): {
  options: Record<string, unknown>;
  keys: Set<string>;
  all: boolean;
} {
  const out = { keys: new Set<string>(), all: false, options };
  out.options = new Proxy(options, {
    get(t, k, r) {
      if (typeof k === "string") out.keys.add(k);
      return Reflect.get(t, k, r) as unknown;
    },
    has(t, k) {
      if (typeof k === "string") out.keys.add(k);
      return Reflect.has(t, k);
    },
    ownKeys(t) {
      out.all = true;
      return Reflect.ownKeys(t);
    },
  });
  return out;
}

/** True when the value at `path` (or a parent of it) holds an `${env.*}` that was not resolved. */
function unresolvedAt(unresolved: ReadonlySet<string>, path: YamlPath): boolean {
  for (let n = path.length; n > 0; n--) if (unresolved.has(JSON.stringify(path.slice(0, n)))) return true;
  return false;
}

/** Coerces the whole-value placeholders a plugin's schema rejected (see checkPluginCalls); returns the new check. */
async function coerceOptions(
  schema: Parameters<typeof checkOptions>[0],
  call: PluginCall,
  doc: unknown,
  first: Exclude<OptionsCheck, { ok: true }>,
  whole: ReadonlySet<string>,
): Promise<OptionsCheck> {
  let check: OptionsCheck = first;
  for (const p of first.problems) {
    const full = [...call.optionsPath, ...p.path];
    if (p.key || !whole.has(JSON.stringify(full))) continue;
    const holder = valueAt(doc, full.slice(0, -1));
    const last = full[full.length - 1];
    if (holder === null || typeof holder !== "object" || last === undefined) continue;
    const h = holder as Record<string | number, unknown>;
    const before = h[last];
    const typed = typeof before === "string" ? coercion(before) : undefined;
    if (typed === undefined) continue;
    // the string was refused: from here on the typed value is what is checked (and what the
    // plugin gets), so an error names what is wrong with it (`must be <= 10`), not its type
    h[last] = typed;
    check = await checkOptions(schema, valueAt(doc, call.optionsPath));
  }
  return check;
}

/** What the loader knows about the runbook's placeholders (`LoadedRunbook.unresolved`, `.whole`). */
export interface PlaceholderInfo {
  unresolved?: ReadonlySet<string> | undefined;
  whole?: ReadonlySet<string> | undefined;
}

/**
 * Checks every plugin call of a runbook document against a registry.
 *
 * Interpolated options are judged whenever their value is known (a run reads the environment):
 * only a value lint could not resolve is skipped, so a runbook whose options can never pass does
 * not reach the fleet. A whole-value placeholder (`retries: ${env.R}`, always a string) where the
 * plugin's schema wants a number or a boolean is coerced in `doc`, in place, when its text reads
 * as one, so the plugin receives the typed value that was checked.
 */
export async function checkPluginCalls(
  registry: PluginRegistry,
  doc: unknown,
  callKinds: PluginCallKinds,
  raw: unknown = doc,
  placeholders?: PlaceholderInfo,
): Promise<PluginProblem[]> {
  const problems: PluginProblem[] = [];
  const calls = findPluginCalls(doc, callKinds, new Set(registry.names("step")));
  for (const call of calls) {
    const entry =
      call.kind === "hook"
        ? registry.hook(call.use)
        : call.kind === "notifier"
          ? registry.notifier(call.use)
          : registry.step(call.use);
    // a plugin lint did not import may provide it: not judged here (the run loads it)
    if (!entry && registry.unimported.length > 0) continue;
    if (!entry) {
      const want = call.kind === "hook" ? "hook" : call.kind === "step" ? "step kind" : "notifier";
      const other =
        call.kind === "hook"
          ? registry.notifier(call.use)
          : call.kind === "step"
            ? registry.hook(call.use)
            : registry.hook(call.use);
      const known = registry.knownNames(call.kind);
      const guess = suggest(call.use, known);
      problems.push({
        rule: "plugin-unknown",
        ...(call.kind === "step" ? { path: [...call.path, call.use], key: true } : { path: [...call.path, "use"] }),
        message: other
          ? `\`${call.use}\` is a ${other.kind} (plugin ${other.plugin}), not a ${want}`
          : `unknown ${want} \`${call.use}\``,
        hint: `${guess ? `Did you mean \`${guess}\`? ` : ""}Known ${want}s: ${known.join(", ") || "none"}. Add a plugin that provides it under \`plugins:\`.`,
      });
      continue;
    }
    let check = await checkOptions(entry.optionsSchema, call.options);
    if (!check.ok && placeholders?.whole?.size)
      check = await coerceOptions(entry.optionsSchema, call, doc, check, placeholders.whole);
    if (check.ok) {
      const wrong = entry.kind === "hook" ? writesDirection(entry, call, check.value, raw, placeholders) : undefined;
      if (wrong) problems.push(wrong);
      const unchecked = entry.kind === "hook" ? uncheckedProcessUndo(entry, call, doc) : undefined;
      if (unchecked) problems.push(unchecked);
      continue;
    }
    const hasOptions = valueAt(raw, call.optionsPath) !== undefined;
    const before = problems.length;
    for (const p of check.problems) {
      const path = hasOptions ? [...call.optionsPath, ...p.path] : [...call.path, "use"];
      const full = [...call.optionsPath, ...p.path];
      const unknown = placeholders?.unresolved
        ? unresolvedAt(placeholders.unresolved, full)
        : interpolatedAt(raw, full);
      if (!p.key && unknown) continue;
      const prob: PluginProblem = {
        rule: "plugin-options",
        path,
        message: `${entry.kind} \`${call.use}\`: ${p.message}`,
        hint: p.hint ?? `See the options of ${entry.plugin}.`,
      };
      if (p.key && hasOptions) prob.key = true;
      problems.push(prob);
    }
    // every problem was an option lint cannot see: which way the hook turns writes is still judged
    // on what it can (a review: `enabled: true` beside an unknown `url` under stopWrites passed lint)
    const options = call.options;
    if (problems.length === before && entry.kind === "hook" && options !== null && typeof options === "object") {
      const wrong = writesDirection(entry, call, options as Record<string, unknown>, raw, placeholders);
      if (wrong) problems.push(wrong);
    }
  }
  const notify = rec(doc)?.notify;
  if (Array.isArray(notify)) {
    for (const [j, e] of notify.entries()) {
      const on = rec(e)?.on;
      if (!Array.isArray(on)) continue;
      for (const [k, name] of on.entries()) {
        if (typeof name !== "string" || isEventName(name)) continue;
        const guess = suggest(name, EVENT_NAMES);
        problems.push({
          rule: "notify-event",
          path: ["notify", j, "on", k],
          message: `unknown event \`${name}\``,
          hint: `${guess ? `Did you mean \`${guess}\`? ` : ""}Events: ${EVENT_NAMES.join(", ")}.`,
        });
      }
    }
  }
  return problems;
}

/** Problems → diagnostics positioned in the runbook (falling back to the nearest existing parent). */
export function toDiagnostics(loaded: PluginLintInput, problems: readonly PluginProblem[]): Diagnostic[] {
  const severity = new Map<string, Severity>(PLUGIN_RULES.map((r) => [r.id, r.severity]));
  return problems.map((p) =>
    diagnosticAt(loaded, {
      rule: p.rule,
      severity: severity.get(p.rule) ?? "error",
      path: p.path,
      key: p.key ?? false,
      message: p.message,
      ...(p.hint !== undefined ? { hint: p.hint } : {}),
    }),
  );
}

/** The `use:` names a runbook document calls (to load only the built-ins it needs). */
export function usedNames(doc: unknown, callKinds: PluginCallKinds): string[] {
  return [...new Set(findPluginCalls(doc, callKinds).map((c) => c.use))];
}

/**
 * Loads the plugins a runbook names (and the built-ins it uses) and checks every plugin call.
 * `plugins:` entries are taken from the raw document, so a runbook that fails schema validation
 * elsewhere still gets its plugin findings.
 */
export async function loadRunbookPlugins(
  loaded: PluginLintInput,
  opts: {
    callKinds: PluginCallKinds;
    builtins?: "all" | "used";
    builtinTable?: readonly BuiltinPlugin[];
    importEntries?: boolean;
  },
): Promise<{ registry: PluginRegistry; diagnostics: Diagnostic[] }> {
  const doc = loaded.runbook ?? loaded.raw;
  const list = rec(doc)?.plugins;
  const entries = Array.isArray(list) ? list.map((e) => (typeof e === "string" ? e : String(e))) : [];
  const loadOpts: LoadPluginsOptions = {
    runbookFile: loaded.file,
    entries,
    builtins: opts.builtins === "all" ? "all" : usedNames(doc, opts.callKinds),
  };
  if (opts.builtinTable) loadOpts.builtinTable = opts.builtinTable;
  if (opts.importEntries !== undefined) loadOpts.importEntries = opts.importEntries;
  const { registry, problems } = await loadPlugins(loadOpts);
  problems.push(
    ...(await checkPluginCalls(registry, doc, opts.callKinds, loaded.raw, {
      unresolved: loaded.unresolved,
      whole: loaded.whole,
    })),
  );
  return { registry, diagnostics: toDiagnostics(loaded, problems) };
}

/** Plugin diagnostics of a loaded runbook, for `syncbook lint` (imports local plugin files). */
export async function lintPlugins(
  loaded: PluginLintInput,
  opts: { callKinds: PluginCallKinds; importEntries?: boolean },
): Promise<Diagnostic[]> {
  return (await loadRunbookPlugins(loaded, opts)).diagnostics;
}
