/**
 * Loading plugins and checking a runbook's plugin calls.
 *
 * - `loadPlugins({ runbookFile, entries, builtins })`: built-ins + the runbook's `plugins:`
 *   entries → a `PluginRegistry` of hooks, notifiers and step kinds by `use:` name, plus
 *   problems (`plugin-load`, `plugin-duplicate`) at the entries.
 * - `loadRunbookPlugins(loaded)`: the same for a loaded runbook, and every call checked:
 *   unknown `use:` (`plugin-unknown`), options failing the plugin's schema (`plugin-options`),
 *   unknown events in `notify[].on` (`notify-event`). Returns the registry and positioned
 *   diagnostics; the runner refuses to start when any is an error.
 * - `lintPlugins(loaded)`: only the diagnostics, for `syncbook lint`.
 */
import { dirname, relative } from "node:path";
import type { Diagnostic, Severity } from "../diagnostics.js";
import { PLUGIN_STEP_KIND, STEP_KINDS } from "../runbook/types.js";
import { suggest } from "../suggest.js";
import { diagnosticAt } from "../runbook/view.js";
import type { HookFn, InDoubtPolicy, JsonSchema, Notifier, PluginDefinition, StepImpl, WritesEffect } from "./api.js";
import { BUILTIN_PLUGINS, type BuiltinPlugin } from "./builtins.js";
import { EVENT_NAMES, isEventName } from "./events.js";
import { PLUGIN_RULES, type PluginRule } from "./rules.js";
import { coercion } from "../runbook/interpolate.js";
import { checkOptions, type OptionsCheck } from "./options.js";
import {
  PluginLoadError,
  importFile,
  isEsmScope,
  pluginFromModule,
  resolveEntry,
  type PluginSource,
} from "./resolve.js";

export type { PluginSource };
type Opts = Record<string, unknown>;
type YamlPath = (string | number)[];

interface EntryBase {
  /** The `use:` name. */
  use: string;
  /** The plugin that provides it. */
  plugin: string;
  source: PluginSource;
  description?: string;
  optionsSchema?: JsonSchema;
}
export interface RegisteredHook extends EntryBase {
  kind: "hook";
  run: HookFn<Opts>;
  /** What a call does to the application's writes, from its options (the hook's `writes`). */
  writes?: WritesEffect;
}
export interface RegisteredNotifier extends EntryBase {
  kind: "notifier";
  send: Notifier<Opts>;
  /** What a resume does with a delivery in doubt (the notifier's `inDoubt`, default `resend`). */
  inDoubt?: InDoubtPolicy;
}
export interface RegisteredStep extends EntryBase {
  kind: "step";
  impl: StepImpl<Opts>;
}
export type RegisteredEntry = RegisteredHook | RegisteredNotifier | RegisteredStep;

export interface LoadedPlugin {
  name: string;
  source: PluginSource;
  definition: PluginDefinition<Opts>;
}

export interface PluginProblem {
  rule: PluginRule;
  /** Where in the runbook (a YAML path). */
  path: YamlPath;
  message: string;
  hint?: string;
  key?: boolean;
}

export class PluginRegistry {
  readonly plugins: LoadedPlugin[] = [];
  /** `plugins:` entries found but not imported (lint only): their names are unknown, so calls to them are not judged. */
  readonly unimported: PluginSource[] = [];
  /** Names of built-ins that exist but were not loaded (for "did you mean" and messages). */
  readonly unloaded: { hook: Set<string>; notifier: Set<string> } = { hook: new Set(), notifier: new Set() };
  private readonly byKind = {
    hook: new Map<string, RegisteredHook>(),
    notifier: new Map<string, RegisteredNotifier>(),
    step: new Map<string, RegisteredStep>(),
  };

  hook(use: string): RegisteredHook | undefined {
    return this.byKind.hook.get(use);
  }
  notifier(use: string): RegisteredNotifier | undefined {
    return this.byKind.notifier.get(use);
  }
  step(kind: string): RegisteredStep | undefined {
    return this.byKind.step.get(kind);
  }
  /** The `use:` names loaded, of one kind. */
  names(kind: RegisteredEntry["kind"]): string[] {
    return [...this.byKind[kind].keys()];
  }
  /** Loaded names plus the built-ins that were not loaded. */
  knownNames(kind: RegisteredEntry["kind"]): string[] {
    return [...new Set([...this.byKind[kind].keys(), ...(kind === "step" ? [] : this.unloaded[kind])])];
  }

  /**
   * Adds a plugin's entries. Returns the names that another plugin already took (those
   * entries are not added: the first wins, and the duplicate is an error).
   */
  add<O = Opts>(typed: PluginDefinition<O>, source: PluginSource): string[] {
    // a plugin's option type is its own promise: options are checked against its schema at each call
    const definition = typed as unknown as PluginDefinition<Opts>;
    const clashes: string[] = [];
    if (this.plugins.some((p) => p.name === definition.name)) clashes.push(`plugin name ${definition.name}`);
    this.plugins.push({ name: definition.name, source, definition });
    const base = (use: string, own: { description?: string; optionsSchema?: JsonSchema } | undefined): EntryBase => {
      const e: EntryBase = { use, plugin: definition.name, source };
      const description = own?.description ?? definition.description;
      const schema = own?.optionsSchema ?? definition.optionsSchema;
      if (description !== undefined) e.description = description;
      if (schema !== undefined) e.optionsSchema = schema;
      return e;
    };
    const put = <E extends RegisteredEntry>(map: Map<string, E>, e: E, what: string): void => {
      const prev = map.get(e.use);
      if (prev) clashes.push(`${what} ${e.use} (also in plugin ${prev.plugin})`);
      else map.set(e.use, e);
    };
    for (const [use, h] of Object.entries(definition.hooks ?? {})) {
      put(
        this.byKind.hook,
        {
          ...base(use, typeof h === "function" ? undefined : h),
          kind: "hook",
          run: typeof h === "function" ? h : h.run.bind(h),
          ...(typeof h !== "function" && h.writes ? { writes: h.writes } : {}),
        },
        "hook",
      );
    }
    for (const [use, n] of Object.entries(definition.notifiers ?? {})) {
      put(
        this.byKind.notifier,
        {
          ...base(use, typeof n === "function" ? undefined : n),
          kind: "notifier",
          send: typeof n === "function" ? n : n.send.bind(n),
          ...(typeof n !== "function" && n.inDoubt ? { inDoubt: n.inDoubt } : {}),
        },
        "notifier",
      );
    }
    for (const [kind, s] of Object.entries(definition.steps ?? {})) {
      if ((STEP_KINDS as readonly string[]).includes(kind) || COMMON_KEYS.includes(kind)) {
        clashes.push(`step kind ${kind} (a built-in step key)`);
        continue;
      }
      put(this.byKind.step, { ...base(kind, s), kind: "step", impl: s }, "step kind");
    }
    return clashes;
  }
}

const COMMON_KEYS = ["id", "name", "timeout", "when", "continueOnError"];

export interface LoadPluginsOptions {
  /** The runbook file: local entries and npm packages are resolved from its folder. */
  runbookFile: string;
  /** The runbook's `plugins:` entries, in order. */
  entries: readonly string[];
  /** Built-ins to load: all (default), none, or only those providing these `use:` names. */
  builtins?: "all" | "none" | readonly string[];
  /** The built-in table (tests replace it). */
  builtinTable?: readonly BuiltinPlugin[];
  /**
   * Import the `plugins:` entries (default true). False for `syncbook lint`: importing runs a
   * plugin's top-level code, which a dry run must not; entries are then only resolved (a missing
   * file is still an error) and calls to their hooks are left to the run.
   */
  importEntries?: boolean;
}

function describeSource(s: PluginSource, runbookFile: string): string {
  if (s.kind === "builtin") return `built-in plugin ${s.name}`;
  if (s.kind === "package") return `npm package ${s.name}`;
  const rel = relative(dirname(runbookFile), s.path);
  return `plugin file ${rel.startsWith(".") ? rel : `./${rel}`}`;
}

export async function loadPlugins(
  opts: LoadPluginsOptions,
): Promise<{ registry: PluginRegistry; problems: PluginProblem[] }> {
  const table = opts.builtinTable ?? BUILTIN_PLUGINS;
  const wanted = opts.builtins ?? "all";
  const builtins = table.filter(
    (b) =>
      wanted === "all" ||
      (wanted !== "none" && [...(b.hooks ?? []), ...(b.notifiers ?? [])].some((n) => wanted.includes(n))),
  );
  const problems: PluginProblem[] = [];

  // import everything at once, register in a fixed order (built-ins, then entries as written)
  const builtinDefs = await Promise.all(
    builtins.map(async (b) => pluginFromModule(await b.load(), `built-in plugin ${b.name}`)),
  );
  const importEntries = opts.importEntries ?? true;
  const entryDefs = await Promise.all(
    opts.entries.map(
      async (
        entry,
      ): Promise<
        { def: PluginDefinition<Opts>; source: PluginSource } | { unimported: PluginSource } | PluginLoadError
      > => {
        let source: Exclude<PluginSource, { kind: "builtin" }> | undefined;
        try {
          source = resolveEntry(entry, opts.runbookFile);
          if (!importEntries) return { unimported: source };
          const mod = await importFile(source.path);
          return {
            def: pluginFromModule(mod, describeSource(source, opts.runbookFile)),
            source,
          };
        } catch (err) {
          if (err instanceof PluginLoadError) return err;
          const what = source ? describeSource(source, opts.runbookFile) : entry;
          const msg = oneLine(err);
          const hint = /Cannot find (package|module) 'syncbook'/.test(msg)
            ? "Install syncbook next to the runbooks (npm install --save-dev syncbook), or drop the import: definePlugin only adds types."
            : /Cannot find (package|module) 'tsx'/.test(msg)
              ? "TypeScript plugins are loaded through tsx: install it (npm install --save-dev tsx), or write the plugin in JavaScript (.mjs)."
              : source && /\.(ts|cts)$/i.test(source.path) && !isEsmScope(source.path)
                ? 'This TypeScript file is loaded as CommonJS (no package.json with "type": "module" encloses it), which breaks `import "syncbook"`: add {"type": "module"} to the package.json next to your runbooks, or name the file .mts.'
                : "Fix the error in the plugin (run it with `node` or `npx tsx` to see the whole stack).";
          return new PluginLoadError(`${what} failed to load: ${msg}`, hint);
        }
      },
    ),
  );

  const registry = new PluginRegistry();
  for (const b of table) {
    if (builtins.includes(b)) continue;
    for (const n of b.hooks ?? []) registry.unloaded.hook.add(n);
    for (const n of b.notifiers ?? []) registry.unloaded.notifier.add(n);
  }
  builtins.forEach((b, i) => {
    const clashes = registry.add(builtinDefs[i] as PluginDefinition<Opts>, { kind: "builtin", name: b.name });
    if (clashes.length) throw new Error(`built-in plugins clash: ${clashes.join(", ")}`);
  });
  // names of built-ins that were not loaded still cannot be taken by a local plugin
  const reserved = new Map<string, string>();
  for (const b of table) for (const n of [...(b.hooks ?? []), ...(b.notifiers ?? [])]) reserved.set(n, b.name);
  entryDefs.forEach((r, i) => {
    const path = ["plugins", i];
    if (r instanceof PluginLoadError) {
      problems.push({ rule: "plugin-load", path, message: r.message, hint: r.hint });
      return;
    }
    if ("unimported" in r) {
      registry.unimported.push(r.unimported);
      problems.push({
        rule: "plugin-not-loaded",
        path,
        message: `${describeSource(r.unimported, opts.runbookFile)} was found but not imported: lint runs no plugin code, so the options of its hooks, notifiers and steps are checked when the runbook runs`,
        hint: "`syncbook lint --load-plugins` imports it (its top-level code runs) and checks them now.",
      });
      return;
    }
    const taken = [...Object.keys(r.def.hooks ?? {}), ...Object.keys(r.def.notifiers ?? {})].filter(
      (n) =>
        reserved.has(n) && !registry.plugins.some((p) => p.source.kind === "builtin" && p.name === reserved.get(n)),
    );
    const clashes = [...taken.map((n) => `${n} (a built-in: ${reserved.get(n)})`), ...registry.add(r.def, r.source)];
    if (clashes.length) {
      problems.push({
        rule: "plugin-duplicate",
        path,
        message: `${describeSource(r.source, opts.runbookFile)} (plugin ${r.def.name}) redefines ${clashes.join(", ")}`,
        hint: "Every plugin name and every `use:` name must be unique; rename the entries of this plugin.",
      });
    }
  });
  return { registry, problems };
}

function oneLine(err: unknown): string {
  const msg =
    err instanceof Error ? `${err.name && err.name !== "Error" ? `${err.name}: ` : ""}${err.message}` : String(err);
  return msg
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(0, 3)
    .join(" | ");
}

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
}

function rec(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Every plugin call of a runbook document (hooks and undos, notify steps, notify entries, plugin steps). */
export function findPluginCalls(doc: unknown, stepKinds: ReadonlySet<string> = new Set()): PluginCall[] {
  const calls: PluginCall[] = [];
  const steps = rec(doc)?.steps;
  if (Array.isArray(steps)) {
    steps.forEach((s, i) => {
      const step = rec(s);
      if (!step) return;
      for (const kind of ["stopWrites", "hook"]) {
        const body = rec(step[kind]);
        if (!body) continue;
        if (typeof body.use === "string")
          calls.push({
            kind: "hook",
            use: body.use,
            options: body.with,
            path: ["steps", i, kind],
            optionsPath: ["steps", i, kind, "with"],
          });
        const undo = rec(body.undo);
        if (undo && typeof undo.use === "string")
          calls.push({
            kind: "hook",
            use: undo.use,
            options: undo.with,
            path: ["steps", i, kind, "undo"],
            optionsPath: ["steps", i, kind, "undo", "with"],
          });
      }
      const n = step.notify;
      // a plain-string notify step prints its text (the runner's own stdout line): no plugin to check or load
      if (rec(n) && typeof rec(n)?.use === "string")
        calls.push({
          kind: "notifier",
          use: rec(n)?.use as string,
          options: rec(n)?.with,
          path: ["steps", i, "notify"],
          optionsPath: ["steps", i, "notify", "with"],
        });
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

/** A `stopWrites` call (`["steps", i, "stopWrites"]`), or the `undo` of one. */
function writesRole(path: YamlPath): "stop" | "undo" | undefined {
  if (path[2] !== "stopWrites") return undefined;
  return path.length === 3 ? "stop" : path[3] === "undo" ? "undo" : undefined;
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
  const role = writesRole(call.path);
  if (!entry.writes || !role) return undefined;
  // judged whenever the values are known (a run reads the environment); lint skips what it cannot see
  const prefix = JSON.stringify(call.optionsPath).slice(0, -1);
  const unknown = placeholders?.unresolved
    ? [...placeholders.unresolved].some((p) => p === `${prefix}]` || p.startsWith(`${prefix},`)) ||
      unresolvedAt(placeholders.unresolved, call.optionsPath)
    : JSON.stringify(valueAt(raw, call.optionsPath) ?? null).includes("${");
  if (unknown) return undefined;
  const effect = entry.writes(options);
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
  raw: unknown = doc,
  placeholders?: PlaceholderInfo,
): Promise<PluginProblem[]> {
  const problems: PluginProblem[] = [];
  const calls = findPluginCalls(doc, new Set(registry.names("step")));
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
      continue;
    }
    const hasOptions = valueAt(raw, call.optionsPath) !== undefined;
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
export function usedNames(doc: unknown): string[] {
  return [...new Set(findPluginCalls(doc).map((c) => c.use))];
}

/**
 * Loads the plugins a runbook names (and the built-ins it uses) and checks every plugin call.
 * `plugins:` entries are taken from the raw document, so a runbook that fails schema validation
 * elsewhere still gets its plugin findings.
 */
export async function loadRunbookPlugins(
  loaded: PluginLintInput,
  opts: { builtins?: "all" | "used"; builtinTable?: readonly BuiltinPlugin[]; importEntries?: boolean } = {},
): Promise<{ registry: PluginRegistry; diagnostics: Diagnostic[] }> {
  const doc = loaded.runbook ?? loaded.raw;
  const list = rec(doc)?.plugins;
  const entries = Array.isArray(list) ? list.map((e) => (typeof e === "string" ? e : String(e))) : [];
  const loadOpts: LoadPluginsOptions = {
    runbookFile: loaded.file,
    entries,
    builtins: opts.builtins === "all" ? "all" : usedNames(doc),
  };
  if (opts.builtinTable) loadOpts.builtinTable = opts.builtinTable;
  if (opts.importEntries !== undefined) loadOpts.importEntries = opts.importEntries;
  const { registry, problems } = await loadPlugins(loadOpts);
  problems.push(
    ...(await checkPluginCalls(registry, doc, loaded.raw, { unresolved: loaded.unresolved, whole: loaded.whole })),
  );
  return { registry, diagnostics: toDiagnostics(loaded, problems) };
}

/** Plugin diagnostics of a loaded runbook, for `syncbook lint` (imports local plugin files). */
export async function lintPlugins(
  loaded: PluginLintInput,
  opts: { importEntries?: boolean } = {},
): Promise<Diagnostic[]> {
  return (await loadRunbookPlugins(loaded, opts)).diagnostics;
}
