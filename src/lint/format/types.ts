import type { Diagnostic, RuleInfo } from "../../diagnostics.js";

export const FORMATS = ["pretty", "json", "github", "junit", "sarif"] as const;
export type Format = (typeof FORMATS)[number];

export interface FormatInput {
  diagnostics: readonly Diagnostic[];
  /** Every file linted, clean ones included (junit lists them; pretty counts them). */
  files: readonly string[];
  /** Source text per file, for the pretty format's source line. */
  sources?: ReadonlyMap<string, string>;
  /** ANSI colors (pretty only). Callers turn them on for a TTY only. */
  color?: boolean;
  /** The command reporting (pretty's summary line, junit's suite name). Default `lint`. */
  command?: "lint" | "preflight";
  /** The reporting command's catalogue of checks (SARIF's rules); default: lint's rules. */
  rules?: readonly RuleInfo[];
}
