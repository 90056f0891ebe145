/**
 * The rule catalogue and the entry point that runs every rule family on one loaded runbook.
 * Rule ids are stable: CI configurations and `--max-warnings` budgets depend on them.
 */
import { sortDiagnostics, type Diagnostic } from "../diagnostics.js";
import type { Runbook } from "../runbook/types.js";
import { LintContext, type LintInput, type RuleInfo } from "./context.js";
import * as accept from "./accept.js";
import * as clusters from "./clusters.js";
import * as filters from "./filters.js";
import * as instances from "./instances.js";
import * as polling from "./polling.js";
import * as sequence from "./sequence.js";
import * as startBody from "./start-body.js";
import * as versions from "./versions.js";

const FAMILIES = [startBody, filters, versions, instances, clusters, polling, sequence] as const;

/**
 * Every lint rule family's rules: id, severity, one-line description, the spec sentence it
 * enforces (each has a fixture). The whole catalogue, with the loader's and the plugin checks'
 * ids, is `RULE_CATALOGUE` (catalogue.ts).
 */
export const RULES: readonly LintRule[] = Object.freeze([
  ...FAMILIES.flatMap((f) => [...f.rules] as LintRule[]),
  ...accept.rules,
]);

/** A lint rule family's entry, its id a literal (src/rule-catalogue.ts types every id). */
type LintRule = (typeof FAMILIES)[number]["rules"][number] | (typeof accept.rules)[number];

const CATALOGUE: ReadonlyMap<string, RuleInfo> = new Map(RULES.map((r) => [r.id, r]));

export { sortDiagnostics };

/**
 * Run the lint rules on one loaded runbook; the loader's own diagnostics (YAML syntax, schema,
 * unknown `${vars.*}`) are not included: merge them, or use `lintFiles`, which does.
 *
 * A runbook the schema refused is still judged, so that one pass reports everything (a CI round
 * trip per finding is slow): the rules run on the interpolated value as it is, each family on
 * its own (one that trips over the broken part is skipped), and a finding inside a step (or on a
 * line) the schema already complained about is dropped: it would judge what is not there.
 */
export function lintRunbook(loaded: LintInput): Diagnostic[] {
  return judge(loaded).rules;
}

/**
 * The loader's findings (the plugin checks' included) and the rules', with the runbook's
 * `accept:` applied over both: a loader's or a plugin check's warning is accepted like a rule's
 * (issue 39, point 5), and an entry is unused only when neither has its warning.
 */
export function lintWithLoader(loaded: LintInput): Diagnostic[] {
  const j = judge(loaded);
  return sortDiagnostics([...j.loader, ...j.rules]);
}

function judge(loaded: LintInput): { loader: Diagnostic[]; rules: Diagnostic[] } {
  const loader = [...(loaded.diagnostics ?? [])];
  if (loaded.runbook) {
    const ctx = new LintContext(loaded, loaded.runbook, CATALOGUE);
    for (const family of FAMILIES) family.check(ctx);
    // the team's accepted warnings (`accept:`), then the entries that accept nothing
    const found = ctx.diagnostics.splice(0);
    const judged = accept.applyAccepts(ctx, [...loader, ...found]);
    return {
      loader: judged.slice(0, loader.length),
      rules: sortDiagnostics([...judged.slice(loader.length), ...ctx.diagnostics]),
    };
  }
  return { loader, rules: unchecked(loaded) };
}

/** A runbook the schema refused: each family on the value as it is (see `lintRunbook`). */
function unchecked(loaded: LintInput): Diagnostic[] {
  const candidate = loaded.unchecked as Partial<Runbook> | undefined;
  if (
    !candidate ||
    typeof candidate !== "object" ||
    !Array.isArray(candidate.steps) ||
    !Array.isArray(candidate.instances) ||
    !candidate.steps.every((s) => s !== null && typeof s === "object" && !Array.isArray(s))
  )
    return [];
  const schemaLines = (loaded.diagnostics ?? []).filter((d) => d.severity === "error").map((d) => d.line);
  // the lines of each step with a schema error: nothing inside it is judged
  const broken: { from: number; to: number }[] = [];
  candidate.steps.forEach((_s, i) => {
    try {
      const span = loaded.locate(["steps", i]);
      const to = span.endLine ?? span.line;
      if (schemaLines.some((l) => l >= span.line && l <= to)) broken.push({ from: span.line, to });
    } catch {
      // no position: judged as is
    }
  });
  const kept: Diagnostic[] = [];
  for (const family of FAMILIES) {
    const ctx = new LintContext(loaded, candidate as Runbook, CATALOGUE);
    try {
      family.check(ctx);
    } catch {
      continue; // it tripped over what the schema refused
    }
    kept.push(
      ...ctx.diagnostics.filter(
        (d) => !schemaLines.includes(d.line) && !broken.some((b) => d.line >= b.from && d.line <= b.to),
      ),
    );
  }
  return sortDiagnostics(kept);
}
