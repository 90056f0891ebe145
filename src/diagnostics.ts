/** A finding about a runbook: from YAML parsing, schema validation, interpolation, a plugin, a lint rule or a preflight check. */
export type Severity = "error" | "warning" | "info";

export interface Diagnostic {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  endLine?: number;
  endColumn?: number;
  /** Stable rule id, e.g. `schema`, `yaml-syntax`, `sharding-required`. */
  rule: string;
  severity: Severity;
  message: string;
  hint?: string;
  /** A warning the runbook accepts (`accept:`), with the team's reason: reported as info, not counted. */
  accepted?: string;
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

export function countBySeverity(diags: readonly Diagnostic[]): Record<Severity, number> {
  const out: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const d of diags) out[d.severity]++;
  return out;
}

/** One entry of the rule catalogue. */
export interface RuleInfo {
  /** Stable kebab-case id, printed with every finding. */
  id: string;
  severity: Severity;
  /** One line: what the rule finds. */
  description: string;
  /** The sentence of the spec (or of the documented service facts) the rule enforces. */
  spec: string;
  /** Where that sentence is. */
  source: RuleSource;
  /** Hint used when a finding gives none of its own. */
  hint: string;
  /** The public page of the rule, when one is more precise than its source's. */
  docs?: string;
  /** Where in the project's own copy of the source (for maintainers; never printed). */
  ref?: string;
}

/** The documents a rule's sentence comes from (the project's copies; output names their public versions). */
export type RuleSource =
  "sync-service-api.md" | "service-facts.md" | "DESIGN.md" | "runbook.schema.json" | "docs/waves.md";

/**
 * Where a rule's sentence is documented for users: the public documentation of the service, or
 * syncbook's own safety rules (README). The `source` names are the project's internal copies of
 * those texts; output never cites them (a user has no such file).
 */
export const RULE_DOCUMENTATION: Readonly<Record<RuleInfo["source"], { title: string; url?: string }>> = {
  "sync-service-api.md": {
    title: "mongosync API reference",
    url: "https://www.mongodb.com/docs/cluster-to-cluster-sync/current/reference/api/",
  },
  "service-facts.md": {
    title: "mongosync documentation",
    url: "https://www.mongodb.com/docs/cluster-to-cluster-sync/current/",
  },
  "DESIGN.md": { title: 'syncbook\'s safety rules (its README, "Running a cutover")' },
  "runbook.schema.json": { title: "the runbook format (`syncbook schema` prints it)" },
  "docs/waves.md": { title: "syncbook's wave files (docs/waves.md)" },
};

/** Where a rule is documented for users: its own page, else its source's. */
export function ruleDocumentation(r: Pick<RuleInfo, "source" | "docs">): { title: string; url?: string } {
  const doc = RULE_DOCUMENTATION[r.source];
  return r.docs ? { title: doc.title, url: r.docs } : doc;
}
