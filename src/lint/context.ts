/**
 * What a rule family sees: the validated runbook, positions into the source text, and one
 * `report` call. Severity comes from the catalogue (one severity per rule id, so a rule id
 * means the same thing in every run), and every message and hint runs through
 * `loaded.redact` here, in one place, so no rule can leak a secret into CI output.
 */
import type { Diagnostic, RuleInfo } from "../diagnostics.js";
import type { Span } from "../runbook/positions.js";
import type { Runbook } from "../runbook/types.js";
import { compareVersions } from "../api/versions.js";

export type YamlPath = readonly (string | number)[];

export type { Span, RuleInfo };

/** The part of the loader's `LoadedRunbook` that lint uses (a `LoadedRunbook` satisfies it). */
export interface LintInput {
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

export interface ReportOptions {
  hint?: string;
  /** Point at the mapping key instead of its value (for "this field should not be here"). */
  key?: boolean;
}

export class LintContext {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    readonly loaded: LintInput,
    readonly runbook: Runbook,
    private readonly catalogue: ReadonlyMap<string, RuleInfo>,
  ) {}

  /** The raw (pre-interpolation) value at a path, or undefined. */
  rawAt(path: YamlPath): unknown {
    let node: unknown = this.loaded.raw;
    for (const seg of path) {
      if (node === null || typeof node !== "object") return undefined;
      node = (node as Record<string | number, unknown>)[seg];
    }
    return node;
  }

  /** 1-based line of a path, for messages that point at another step ("the commit at line 40"). */
  lineOf(path: YamlPath, opts: { key?: boolean } = {}): number {
    return this.position(path, opts.key ?? false).line;
  }

  report(rule: string, path: YamlPath, message: string, opts: ReportOptions = {}): void {
    const info = this.catalogue.get(rule);
    if (!info) throw new Error(`lint rule ${rule} is not in the RULES catalogue`);
    const pos = this.position(path, opts.key ?? false);
    const redact = (s: string): string => this.loaded.redact(s);
    const d: Diagnostic = {
      file: this.loaded.file,
      line: pos.line,
      column: pos.column,
      rule,
      severity: info.severity,
      message: redact(message),
      hint: redact(opts.hint ?? info.hint),
    };
    if (pos.endLine !== undefined) d.endLine = pos.endLine;
    if (pos.endColumn !== undefined) d.endColumn = pos.endColumn;
    this.diagnostics.push(d);
  }

  /** The position of a path; falls back to the nearest ancestor that exists. */
  private position(path: YamlPath, key: boolean): Span {
    for (let n = path.length; n >= 0; n--) {
      try {
        const span = this.loaded.locate(path.slice(0, n), n === path.length && key ? { key: true } : undefined);
        if (span && span.line >= 1) return span;
      } catch {
        // not found: try the parent
      }
    }
    return { line: 1, column: 1 };
  }
}

/** The runbook's `serviceVersion` is at least `v` (false when not declared). */
export function serviceAtLeast(runbook: Runbook, v: string): boolean {
  return runbook.serviceVersion !== undefined && compareVersions(runbook.serviceVersion, v) >= 0;
}

export { compareVersions } from "../api/versions.js";
export { closest } from "../suggest.js";
export { plural, q } from "../text.js";
