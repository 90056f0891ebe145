/** A finding about a runbook: from YAML parsing, schema validation, interpolation or a lint rule. */
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
}

export function countBySeverity(diags: readonly Diagnostic[]): Record<Severity, number> {
  const out: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const d of diags) out[d.severity]++;
  return out;
}
