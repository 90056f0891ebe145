/**
 * `syncbook lint --format sarif`: a SARIF 2.1.0 log, so findings show in GitHub code scanning
 * (github/codeql-action/upload-sarif) and other SARIF viewers.
 *
 * - `tool.driver.rules`: the rule catalogue (`--list-rules`: the loader's ids, the plugin
 *   checks', lint's rules; preflight passes its own), each with its description
 *   (shortDescription), the spec sentence it enforces (fullDescription) and the fix (help).
 * - Each result at its file, line and column: `artifactLocation.uri` relative to the repository
 *   root under `uriBaseId: "%SRCROOT%"` (GitHub resolves it against the checkout), the root given
 *   in `originalUriBaseIds`; a file outside the root gets an absolute `file:` URI instead.
 * - `level` from the severity: error → error, warning → warning, info → note.
 *
 * Validated against the official SARIF 2.1.0 JSON Schema in test/lint/sarif.e2e.test.ts.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { ruleDocumentation, type RuleInfo, type Severity } from "../../diagnostics.js";
import { SYNCBOOK_VERSION } from "../../version.js";
import { RULE_CATALOGUE } from "../catalogue.js";
import type { FormatInput } from "./types.js";

const SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";
const LEVEL: Record<Severity, "error" | "warning" | "note"> = { error: "error", warning: "warning", info: "note" };

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

/** An id this catalogue does not know yet (a newer finding): still a rule, never a dangling ruleId. */
type Descriptor = Pick<RuleInfo, "id" | "severity" | "description" | "spec" | "hint"> & Partial<RuleInfo>;

function descriptor(r: Descriptor) {
  // the public documentation, never the project's internal copy of it
  const doc = r.source ? ruleDocumentation({ source: r.source, docs: r.docs }) : undefined;
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
  const rules: ReturnType<typeof descriptor>[] = (catalogue ?? RULE_CATALOGUE).map(descriptor);
  const index = new Map(rules.map((r, i) => [r.id, i]));
  const ruleIndex = (d: { rule: string; severity: Severity }): number => {
    let i = index.get(d.rule);
    if (i === undefined) {
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
            semanticVersion: SYNCBOOK_VERSION,
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
