/**
 * The rule catalogue and the entry point that runs every rule family on one loaded runbook.
 * Rule ids are stable: CI configurations and `--max-warnings` budgets depend on them.
 */
import type { Diagnostic } from "../diagnostics.js";
import { LintContext, type LintInput, type RuleInfo } from "./context.js";
import * as clusters from "./clusters.js";
import * as filters from "./filters.js";
import * as instances from "./instances.js";
import * as sequence from "./sequence.js";
import * as startBody from "./start-body.js";
import * as versions from "./versions.js";

const FAMILIES = [startBody, filters, versions, instances, clusters, sequence] as const;

/** Every lint rule: id, severity, one-line description, the spec sentence it enforces. */
export const RULES: readonly RuleInfo[] = Object.freeze(FAMILIES.flatMap((f) => f.rules));

const CATALOGUE: ReadonlyMap<string, RuleInfo> = new Map(RULES.map((r) => [r.id, r]));

export function ruleInfo(id: string): RuleInfo | undefined {
  return CATALOGUE.get(id);
}

/** Order diagnostics by file, line, column, then rule id (stable output for CI diffs). */
export function sortDiagnostics(diags: Diagnostic[]): Diagnostic[] {
  return diags.sort((a, b) =>
    a.file < b.file
      ? -1
      : a.file > b.file
        ? 1
        : a.line - b.line || a.column - b.column || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0),
  );
}

/**
 * Run the lint rules on one loaded runbook. Rules run only on a schema-valid runbook
 * (`loaded.runbook` defined); the loader's own diagnostics (YAML syntax, schema, unknown
 * `${vars.*}`) are not included: merge them, or use `lintFiles`, which does.
 */
export function lintRunbook(loaded: LintInput): Diagnostic[] {
  if (!loaded.runbook) return [];
  const ctx = new LintContext(loaded, loaded.runbook, CATALOGUE);
  for (const family of FAMILIES) family.check(ctx);
  return sortDiagnostics(ctx.diagnostics);
}
