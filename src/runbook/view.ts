/**
 * A loaded runbook as the checks read it (lint's rules, preflight's checks, the plugin checks),
 * and the one way a finding finds its place in the runbook's text.
 */
import type { Diagnostic, Severity } from "../diagnostics.js";
import type { Span } from "./positions.js";
import type { Runbook } from "./types.js";

/** A path into the runbook's YAML: keys and sequence indexes. */
export type YamlPath = readonly (string | number)[];

/** The part of the loader's `LoadedRunbook` the checks use (a `LoadedRunbook` satisfies it). */
export interface RunbookView {
  file: string;
  text: string;
  runbook: Runbook | undefined;
  raw: unknown;
  /** The interpolated value the schema refused (lint judges the rest of it in the same pass). */
  unchecked?: unknown;
  diagnostics?: Diagnostic[];
  locate(path: (string | number)[], opts?: { key?: boolean }): Span;
  redact: (text: string) => string;
}

type Locator = Pick<RunbookView, "locate">;

/**
 * Where a path is: its span (its key's with `key`), or, when it does not exist (a field the
 * runbook left out), its nearest ancestor's; line 1, column 1 when none is found.
 */
export function spanAt(view: Locator, path: YamlPath, key = false): Span {
  for (let n = path.length; n >= 0; n--) {
    try {
      const span = view.locate(path.slice(0, n), n === path.length && key ? { key: true } : undefined);
      if (span && span.line >= 1) return span;
    } catch {
      // not found: try the parent
    }
  }
  return { line: 1, column: 1 };
}

/** A finding of any check, before it has a place. */
export interface Finding {
  rule: string;
  severity: Severity;
  path: YamlPath;
  /** Point at the mapping key instead of its value. */
  key?: boolean;
  message: string;
  hint?: string;
}

/** A finding as a diagnostic at its place in the runbook, its message and hint redacted. */
export function diagnosticAt(view: Pick<RunbookView, "file" | "locate" | "redact">, f: Finding): Diagnostic {
  const pos = spanAt(view, f.path, f.key ?? false);
  const d: Diagnostic = {
    file: view.file,
    line: pos.line,
    column: pos.column,
    rule: f.rule,
    severity: f.severity,
    message: view.redact(f.message),
  };
  if (f.hint !== undefined) d.hint = view.redact(f.hint);
  if (pos.endLine !== undefined) d.endLine = pos.endLine;
  if (pos.endColumn !== undefined) d.endColumn = pos.endColumn;
  return d;
}
