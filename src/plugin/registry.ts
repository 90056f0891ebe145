/**
 * Loading plugins: built-ins + the runbook's `plugins:` entries → a `PluginRegistry` of hooks,
 * notifiers and step kinds by `use:` name (`loadPlugins({ runbookFile, entries, builtins })`),
 * plus problems (`plugin-load`, `plugin-duplicate`, `plugin-not-loaded`) at the entries. The
 * checks of a runbook's plugin calls against the registry are `calls.ts`.
 */
import { dirname, relative } from "node:path";
import { STEP_KINDS } from "../runbook/types.js";
import type {
  HookCommand,
  HookFn,
  InDoubtPolicy,
  JsonSchema,
  Notifier,
  PluginDefinition,
  StepImpl,
  WritesEffect,
} from "./api.js";
import { BUILTIN_PLUGINS, type BuiltinPlugin } from "./builtins.js";
import type { PluginRule } from "./rules.js";
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
  /** It starts processes, which can outlive a runner that is killed (the hook's `startsProcesses`). */
  startsProcesses?: boolean;
  /** The call as a command an operator can run by hand (the hook's `command`). */
  command?: HookCommand<Opts>;
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
          ...(typeof h !== "function" && h.startsProcesses === true ? { startsProcesses: true } : {}),
          ...(typeof h !== "function" && h.command ? { command: h.command.bind(h) } : {}),
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
