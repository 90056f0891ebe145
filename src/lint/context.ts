/**
 * What a rule family sees: the validated runbook, positions into the source text, and one
 * `report` call. Severity comes from the catalogue (one severity per rule id, so a rule id
 * means the same thing in every run), and every message and hint runs through
 * `loaded.redact` here, in one place, so no rule can leak a secret into CI output.
 */
import type { Diagnostic, RuleInfo } from "../diagnostics.js";
import type { Span } from "../runbook/positions.js";
import type { Runbook } from "../runbook/types.js";
import { diagnosticAt, spanAt, type RunbookView, type YamlPath } from "../runbook/view.js";
import { lintSteps, type LintStep } from "./kinds.js";

export type { Span, RuleInfo, YamlPath };

/** What lint reads of a loaded runbook (a `LoadedRunbook` satisfies it). */
export type LintInput = RunbookView;

export interface ReportOptions {
  hint?: string;
  /** Point at the mapping key instead of its value (for "this field should not be here"). */
  key?: boolean;
}

export class LintContext {
  readonly diagnostics: Diagnostic[] = [];
  private bound: readonly LintStep[] | undefined;

  constructor(
    readonly loaded: LintInput,
    readonly runbook: Runbook,
    private readonly catalogue: ReadonlyMap<string, RuleInfo>,
  ) {}

  /**
   * The runbook's steps bound to their kinds, once per runbook: every family asks them (binding
   * them again in each cost about 5 % of linting a folder of runbooks).
   */
  get steps(): readonly LintStep[] {
    return (this.bound ??= lintSteps(this.runbook));
  }

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
    this.diagnostics.push(
      diagnosticAt(this.loaded, {
        rule,
        severity: info.severity,
        path,
        key: opts.key ?? false,
        message,
        hint: opts.hint ?? info.hint,
      }),
    );
  }

  /** The position of a path; falls back to the nearest ancestor that exists. */
  private position(path: YamlPath, key: boolean): Span {
    return spanAt(this.loaded, path, key);
  }
}

export { serviceAtLeast } from "../api/versions.js";
export { closest } from "../suggest.js";
export { plural, q } from "../text.js";
