/**
 * `syncbook lint --format sarif`: a SARIF 2.1.0 log, so findings show in GitHub code scanning
 * (github/codeql-action/upload-sarif) and other SARIF viewers.
 *
 * - `tool.driver.rules`: every lint rule (`--list-rules`), plus the loader's and the plugin
 *   loader's own ids (schema, yaml, interpolation, plugin-*), each with its description
 *   (shortDescription), the spec sentence it enforces (fullDescription) and the fix (help).
 * - Each result at its file, line and column: `artifactLocation.uri` relative to the repository
 *   root under `uriBaseId: "%SRCROOT%"` (GitHub resolves it against the checkout), the root given
 *   in `originalUriBaseIds`; a file outside the root gets an absolute `file:` URI instead.
 * - `level` from the severity: error → error, warning → warning, info → note.
 *
 * Validated against the official SARIF 2.1.0 JSON Schema in test/lint/sarif.test.ts.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import type { Severity } from "../../diagnostics.js";
import { RULE_DOCUMENTATION, type RuleInfo } from "../context.js";
import { RULES } from "../rules.js";
import type { CatalogueEntry, FormatInput } from "./types.js";

const SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";
const TOOL_VERSION = "0.1.0";
const LEVEL: Record<Severity, "error" | "warning" | "note"> = { error: "error", warning: "warning", info: "note" };

/** Findings that come from loading a runbook (not from a rule of `--list-rules`). */
const LOADER_RULES: readonly Omit<RuleInfo, "source">[] = [
  {
    id: "yaml",
    severity: "error",
    description: "The file is not valid YAML.",
    spec: "A runbook is a YAML document.",
    hint: "Fix the YAML syntax at the position shown.",
  },
  {
    id: "schema",
    severity: "error",
    description: "The runbook does not match the runbook format (schemas/runbook.schema.json).",
    spec: "The runbook format is schemas/runbook.schema.json; `syncbook schema` prints it.",
    hint: "Fix the field named at the position; editors check it as you type with the `$schema` modeline.",
  },
  {
    id: "interpolation",
    severity: "error",
    description: "A `${vars.*}` or `${env.*}` reference is unknown or malformed.",
    spec: "`${vars.x}` and `${env.NAME}` interpolate; values from `env` are secrets by default.",
    hint: "Declare the variable under `vars:` or pass it with --var name=value.",
  },
  {
    id: "reserved-key",
    severity: "error",
    description: "A key named `__proto__`, `constructor` or `prototype` anywhere in the runbook.",
    spec: "JavaScript gives these names a meaning of their own: `__proto__` replaces an object's prototype, so what lint checks and what is sent would differ.",
    hint: "Remove or rename the key: no field of the format or of a plugin has this name.",
  },
  {
    id: "secret-too-short",
    severity: "warning",
    description: "An `${env.*}` value shorter than 3 characters: it cannot be redacted from output.",
    spec: "Secrets (values from `${env.*}`) never reach output, journals or reports; a value this short cannot be removed without mangling ordinary text.",
    hint: "Use a longer secret, or pass a value that is not secret with --var.",
  },
  {
    id: "plugin-load",
    severity: "error",
    description: "A plugin named under `plugins:` cannot be loaded.",
    spec: "A plugin is an ES module whose default export is `definePlugin({ name, ... })`.",
    hint: "Check the path (relative to the runbook) and the plugin's default export.",
  },
  {
    id: "plugin-unknown",
    severity: "error",
    description: "A `use:` names no hook, notifier or step of any loaded plugin.",
    spec: "Hooks, notifiers and plugin steps are called by the name their plugin gives them.",
    hint: "Load the plugin under `plugins:`, or fix the name.",
  },
  {
    id: "plugin-options",
    severity: "error",
    description: "A plugin call's `with:` options do not match the plugin's options schema.",
    spec: "A plugin's options are validated by its own JSON Schema.",
    hint: "Fix the option named at the position (see the plugin's documentation).",
  },
  {
    id: "plugin-duplicate",
    severity: "error",
    description: "Two plugins provide the same name.",
    spec: "Every hook, notifier and step name must be unique across the loaded plugins.",
    hint: "Remove one of the plugins, or rename its export.",
  },
  {
    id: "plugin-not-loaded",
    severity: "info",
    description:
      "A `plugins:` entry lint left unimported, since it runs no plugin code: its options are checked when the runbook runs.",
    spec: "Lint is a dry run: it sends nothing and runs nothing of the runbook's.",
    hint: "Run `syncbook lint --load-plugins` to import the plugin and check its options too.",
  },
  {
    id: "notify-event",
    severity: "error",
    description: "A top-level `notify:` entry listens to an event that does not exist.",
    spec: "The runbook's `notify:` block picks the run events that fire each notifier.",
    hint: "Use one of the event names listed in docs/plugins.md.",
  },
];

/**
 * The repository root: `GITHUB_WORKSPACE` when the working directory is inside it (GitHub
 * Actions), else the nearest folder up from `cwd` holding `.git`, else `cwd`.
 */
export function repositoryRoot(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): string {
  const ws = env.GITHUB_WORKSPACE;
  if (ws && !relative(resolve(ws), cwd).startsWith("..")) return resolve(ws);
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return resolve(cwd);
  }
}

/** A path relative to the root as a relative URI reference: `/`-separated, each segment percent-encoded. */
function relativeUri(rel: string): string {
  return rel.split(sep).map(encodeURIComponent).join("/");
}

function artifactLocation(file: string, root: string, cwd: string): { uri: string; uriBaseId?: string } {
  const abs = resolve(cwd, file);
  const rel = relative(root, abs);
  // a uriBaseId only goes with a relative reference: a file outside the root is named absolutely
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return { uri: pathToFileURL(abs).href };
  return { uri: relativeUri(rel), uriBaseId: "%SRCROOT%" };
}

function descriptor(r: CatalogueEntry) {
  // the public documentation, never the project's internal copy of it
  const doc = r.source ? RULE_DOCUMENTATION[r.source as RuleInfo["source"]] : undefined;
  const where = doc ? ` (${doc.title}${doc.url ? `: ${doc.url}` : ""})` : "";
  return {
    id: r.id,
    shortDescription: { text: r.description },
    fullDescription: { text: `${r.description} It enforces: ${r.spec}${where}` },
    help: {
      text: `${r.spec}${where}\nFix: ${r.hint}`,
      markdown: `**Enforces** (${doc ? (doc.url ? `[${doc.title}](${doc.url})` : doc.title) : "syncbook"}): ${r.spec}\n\n**Fix:** ${r.hint}`,
    },
    ...(doc?.url ? { helpUri: doc.url } : {}),
    defaultConfiguration: { level: LEVEL[r.severity] },
    properties: { tags: ["syncbook"] },
  };
}

export interface SarifOptions {
  /** Where relative paths are resolved from (default `process.cwd()`). */
  cwd?: string;
  /** The repository root URIs are relative to (default: see `repositoryRoot`). */
  root?: string;
}

/** The SARIF log as an object (tests validate it; `formatSarif` prints it). */
export function sarifLog(
  { diagnostics, rules: catalogue }: Pick<FormatInput, "diagnostics" | "rules">,
  opts: SarifOptions = {},
) {
  const cwd = opts.cwd ?? process.cwd();
  const root = opts.root ?? repositoryRoot(cwd);
  const rules: ReturnType<typeof descriptor>[] = [...(catalogue ?? RULES), ...LOADER_RULES].map(descriptor);
  const index = new Map(rules.map((r, i) => [r.id, i]));
  const ruleIndex = (d: { rule: string; severity: Severity }): number => {
    let i = index.get(d.rule);
    if (i === undefined) {
      // an id this table does not know yet (a newer finding): still a rule, never a dangling ruleId
      i = rules.push(descriptor({ id: d.rule, severity: d.severity, description: d.rule, spec: "", hint: "" })) - 1;
      index.set(d.rule, i);
    }
    return i;
  };
  const results = diagnostics.map((d) => {
    const region: Record<string, number> = { startLine: d.line, startColumn: d.column };
    if (d.endLine !== undefined && d.endColumn !== undefined && (d.endLine > d.line || d.endColumn > d.column)) {
      region.endLine = d.endLine;
      region.endColumn = d.endColumn;
    }
    return {
      ruleId: d.rule,
      ruleIndex: ruleIndex(d),
      level: LEVEL[d.severity],
      message: { text: d.hint ? `${d.message}\nhint: ${d.hint}` : d.message },
      locations: [{ physicalLocation: { artifactLocation: artifactLocation(d.file, root, cwd), region } }],
    };
  });
  const rootUri = pathToFileURL(root).href;
  return {
    $schema: SCHEMA,
    version: "2.1.0" as const,
    runs: [
      {
        tool: {
          driver: {
            name: "syncbook",
            semanticVersion: TOOL_VERSION,
            rules,
          },
        },
        originalUriBaseIds: { "%SRCROOT%": { uri: rootUri.endsWith("/") ? rootUri : `${rootUri}/` } },
        columnKind: "utf16CodeUnits" as const,
        results,
      },
    ],
  };
}

export function formatSarif(input: FormatInput): string {
  return `${JSON.stringify(sarifLog(input), null, 2)}\n`;
}
