/**
 * Finding and importing one `plugins:` entry, and checking that its default export is a plugin.
 *
 * - A path (`./x.ts`, `../y.mjs`, `/abs/z.js`, or anything ending in a script extension) is
 *   resolved against the runbook's folder. TypeScript files are imported through tsx
 *   (`tsx/esm/api`, loaded only when a `.ts` plugin is named); JavaScript natively.
 * - Anything else is an npm package name (`syncbook-plugin-x`, `@site/syncbook-hooks`, with an
 *   optional subpath), resolved from the runbook's folder upwards through `node_modules`
 *   (the `exports` "import"/"node"/"default" conditions, then `module`, then `main`).
 *
 * Every failure is a `PluginLoadError` whose message says what was tried and whose hint says
 * what to do; the registry turns it into a `plugin-load` diagnostic at the entry.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type * as TsxApi from "tsx/esm/api";
import { runtimeImport } from "../runtime-import.js";
import type { PluginDefinition } from "./api.js";

export class PluginLoadError extends Error {
  override readonly name = "PluginLoadError";
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

export type PluginSource =
  { kind: "builtin"; name: string } | { kind: "file"; path: string } | { kind: "package"; name: string; path: string };

const SCRIPT_EXT = /\.(ts|mts|cts|js|mjs|cjs)$/i;
const TS_EXT = /\.(ts|mts|cts)$/i;
const PACKAGE_NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*(\/[A-Za-z0-9-._~/]+)?$/;

export function isPathEntry(entry: string): boolean {
  return (
    entry.startsWith("./") || entry.startsWith("../") || entry === "." || isAbsolute(entry) || SCRIPT_EXT.test(entry)
  );
}

/** Where an entry points, or a `PluginLoadError`. Does not import anything. */
export function resolveEntry(entry: string, runbookFile: string): Exclude<PluginSource, { kind: "builtin" }> {
  const base = dirname(resolve(runbookFile));
  if (isPathEntry(entry)) {
    const path = resolve(base, entry);
    if (!existsSync(path))
      throw new PluginLoadError(
        `plugin file ${entry} not found (looked for ${path})`,
        "Plugin paths are relative to the runbook's folder; check the spelling and the extension (.ts, .js, .mjs).",
      );
    if (statSync(path).isDirectory())
      throw new PluginLoadError(
        `plugin ${entry} is a folder, not a file`,
        "Name the plugin's entry file, e.g. ./plugins/pager.ts.",
      );
    if (!SCRIPT_EXT.test(path))
      throw new PluginLoadError(
        `plugin file ${entry} is not a TypeScript or JavaScript file`,
        "Use a .ts, .mts, .js or .mjs file.",
      );
    return { kind: "file", path };
  }
  if (!PACKAGE_NAME.test(entry))
    throw new PluginLoadError(
      `plugin ${JSON.stringify(entry)} is neither a path nor an npm package name`,
      "Write a local plugin as ./path/to/plugin.ts (relative to the runbook), or an npm package by its name.",
    );
  return { kind: "package", name: entry, path: resolvePackage(entry, base) };
}

function resolvePackage(spec: string, from: string): string {
  const parts = spec.split("/");
  const nameLen = spec.startsWith("@") ? 2 : 1;
  const name = parts.slice(0, nameLen).join("/");
  const subpath = parts.length > nameLen ? `./${parts.slice(nameLen).join("/")}` : ".";
  for (let dir = from; ; dir = dirname(dir)) {
    const pkgDir = join(dir, "node_modules", name);
    const pkgFile = join(pkgDir, "package.json");
    if (existsSync(pkgFile)) {
      let pkg: { exports?: unknown; module?: string; main?: string };
      try {
        pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as typeof pkg;
      } catch (err) {
        throw new PluginLoadError(
          `npm package ${name}: cannot read ${pkgFile}: ${(err as Error).message}`,
          "Reinstall the package (npm ci).",
        );
      }
      const target =
        exportTarget(pkg.exports, subpath) ?? (subpath === "." ? (pkg.module ?? pkg.main ?? "index.js") : subpath);
      const path = resolve(pkgDir, target);
      if (!existsSync(path))
        throw new PluginLoadError(
          `npm package ${spec}: entry ${target} not found in ${pkgDir}`,
          "Build or reinstall the package.",
        );
      return path;
    }
    if (dirname(dir) === dir) break;
  }
  throw new PluginLoadError(
    `npm package ${name} is not installed (searched node_modules from ${from} upwards)`,
    `Install it next to the runbook: npm install ${name}`,
  );
}

/** The file an `exports` field maps a subpath to (conditions import > node > default). */
function exportTarget(exports: unknown, subpath: string): string | undefined {
  if (exports === undefined || exports === null) return undefined;
  const pick = (v: unknown): string | undefined => {
    if (typeof v === "string") return v;
    if (Array.isArray(v)) {
      for (const x of v) {
        const r = pick(x);
        if (r) return r;
      }
      return undefined;
    }
    if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      for (const c of ["import", "node", "default"]) if (c in o) return pick(o[c]);
    }
    return undefined;
  };
  if (typeof exports === "string" || Array.isArray(exports)) return subpath === "." ? pick(exports) : undefined;
  const o = exports as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length > 0 && keys.every((k) => !k.startsWith("."))) return subpath === "." ? pick(o) : undefined;
  return pick(o[subpath]);
}

// Imported modules by path and modification time: linting 1,000 runbooks that name the same
// plugin imports it once, and an edited file is imported again.
const modules = new Map<string, Promise<unknown>>();

/**
 * True when a `.ts`/`.js` file is an ES module by Node's rules: the nearest package.json says
 * `"type": "module"`. Otherwise tsx loads a `.ts` plugin as CommonJS, and `import "syncbook"`
 * from it can fail deep inside dependencies (undici), so load errors say how to fix it.
 */
export function isEsmScope(path: string): boolean {
  if (/\.m[jt]s$/i.test(path)) return true;
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, "utf8")) as { type?: unknown }).type === "module";
      } catch {
        return false;
      }
    }
    if (dirname(dir) === dir) return false;
  }
}

/** Imports a resolved file (TypeScript through tsx). */
export async function importFile(path: string): Promise<unknown> {
  const key = `${path}\0${statSync(path).mtimeMs}`;
  let p = modules.get(key);
  if (!p) {
    const url = pathToFileURL(path).href;
    p = TS_EXT.test(extname(path))
      ? runtimeImport<typeof TsxApi>("tsx/esm/api").then(
          ({ tsImport }) => tsImport(url, import.meta.url) as Promise<unknown>,
        )
      : runtimeImport<unknown>(url);
    modules.set(key, p);
    p.catch(() => modules.delete(key));
  }
  return p;
}

/** The default export of a module, checked to be a plugin definition. */
export function pluginFromModule(mod: unknown, what: string): PluginDefinition {
  let def: unknown = mod && typeof mod === "object" && "default" in mod ? mod.default : undefined;
  // a CommonJS or transpiled module: { default: { default: plugin } }
  if (def && typeof def === "object" && !("name" in def) && "default" in def) def = def.default;
  const usage =
    'A plugin\'s default export is definePlugin({ name, hooks?, notifiers?, steps? }) (import { definePlugin } from "syncbook").';
  if (def === undefined || def === null) throw new PluginLoadError(`${what} has no default export`, usage);
  if (typeof def !== "object" || Array.isArray(def))
    throw new PluginLoadError(
      `${what}: the default export is a ${Array.isArray(def) ? "list" : typeof def}, not a plugin definition`,
      usage,
    );
  const d = def as Record<string, unknown>;
  if (typeof d.name !== "string" || d.name.trim() === "")
    throw new PluginLoadError(`${what}: the plugin has no \`name\``, usage);
  const problems: string[] = [];
  let entries = 0;
  for (const [group, fnKey] of [
    ["hooks", "run"],
    ["notifiers", "send"],
    ["steps", "run"],
  ] as const) {
    const g = d[group];
    if (g === undefined) continue;
    if (!g || typeof g !== "object" || Array.isArray(g)) {
      problems.push(`\`${group}\` must be an object of named entries`);
      continue;
    }
    for (const [k, v] of Object.entries(g as Record<string, unknown>)) {
      entries++;
      const ok = group === "steps" ? isObjWithFn(v, "run") : typeof v === "function" || isObjWithFn(v, fnKey);
      if (!ok)
        problems.push(
          `${group}.${k} must be ${group === "steps" ? "an object with a run function" : `a function or an object with a ${fnKey} function`}`,
        );
      if (!/^[a-z][a-zA-Z0-9_-]*$/.test(k))
        problems.push(`${group}.${k}: names are lower-case letters, digits, - and _ (what a runbook writes in use:)`);
    }
  }
  if (d.optionsSchema !== undefined && typeof d.optionsSchema !== "object" && typeof d.optionsSchema !== "boolean")
    problems.push("`optionsSchema` must be a JSON Schema object");
  if (problems.length) throw new PluginLoadError(`${what} (plugin ${d.name}): ${problems.join("; ")}`, usage);
  if (entries === 0)
    throw new PluginLoadError(`${what} (plugin ${d.name}) defines no hooks, notifiers or steps`, usage);
  return def as PluginDefinition;
}

function isObjWithFn(v: unknown, key: string): boolean {
  return !!v && typeof v === "object" && typeof (v as Record<string, unknown>)[key] === "function";
}
