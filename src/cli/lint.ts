/**
 * `syncbook lint <files or folders...>`: the dry run for CI.
 *
 * Exit codes: 0 no errors (and no more warnings than `--max-warnings`), 1 errors or too
 * many warnings, 2 usage or I/O errors (missing path, unreadable file, folder without
 * runbooks). Reports go to stdout in the chosen format; usage and I/O errors to stderr.
 *
 * Start-up budget: this module imports only the lint code, the loader (yaml and the
 * build-time generated validator) and picocolors: no ajv compile, no undici, no listr2.
 */
import { writeOut } from "../write-out.js";
import { countBySeverity } from "../diagnostics.js";
import { ExitCode, UserError } from "../errors.js";
import { terminalText } from "../text.js";
import { mayBeTerminal } from "../ui/cursor.js";
import { FORMATS, type Format, type FormatInput } from "../lint/format/types.js";
import { ruleDocumentation } from "../diagnostics.js";
import { RULE_CATALOGUE as RULES } from "../lint/catalogue.js";
import { lintFiles } from "../lint/run.js";

export { writeOut };

/** Each format's module, imported only when chosen (start-up budget). */
export const FORMATTERS: Record<Format, () => Promise<(input: FormatInput) => string>> = {
  pretty: async () => (await import("../lint/format/pretty.js")).formatPretty,
  json: async () => (await import("../lint/format/json.js")).formatJson,
  github: async () => (await import("../lint/format/github.js")).formatGithub,
  junit: async () => (await import("../lint/format/junit.js")).formatJunit,
  sarif: async () => (await import("../lint/format/sarif.js")).formatSarif,
};

export interface LintCliOptions {
  format?: string;
  maxWarnings?: number;
  listRules?: boolean;
  /** Import the runbooks' own plugins to check their options (their top-level code runs). */
  loadPlugins?: boolean;
  /** Force colors on or off (default: on for a TTY, unless NO_COLOR; FORCE_COLOR turns them on). */
  color?: boolean;
}

/**
 * Colors on a terminal only: fd 1 may be one (`mayBeTerminal`, without loading the stream and tty
 * modules). /dev/null is a character device too, where colors are harmless.
 */
export function useColor(opt: boolean | undefined): boolean {
  if (opt !== undefined) return opt;
  const env = process.env;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false")
    return true;
  return mayBeTerminal(1) && env.TERM !== "dumb";
}

function usage(message: string, hint: string): UserError {
  return new UserError(message, { hint, exitCode: ExitCode.usage });
}

/** `--list-rules`: the catalogue as a table (JSON with `--format json`, a SARIF log without results with `sarif`). */
async function listRules(format: Format): Promise<string> {
  if (format === "sarif") return (await FORMATTERS.sarif())({ diagnostics: [], files: [] });
  const doc = ruleDocumentation;
  if (format === "json")
    return `${JSON.stringify({
      rules: RULES.map((r) => ({
        id: r.id,
        severity: r.severity,
        description: r.description,
        spec: r.spec,
        source: doc(r).title,
        ...(doc(r).url ? { documentation: doc(r).url } : {}),
      })),
    })}\n`;
  const w = Math.max(...RULES.map((r) => r.id.length));
  const lines = RULES.map((r) => `${r.id.padEnd(w)}  ${r.severity.padEnd(7)}  ${r.description}`);
  const sources = [...new Set(RULES.map((r) => doc(r)).map((d) => `  ${d.title}${d.url ? `: ${d.url}` : ""}`))];
  return `${"rule".padEnd(w)}  ${"severity"}  description\n${lines.join("\n")}\n\n${RULES.length} rules. Each enforces a sentence of:\n${sources.join("\n")}\n(--format json gives each rule's sentence and where it is documented)\n`;
}

/** `--max-warnings` (lint and preflight): a whole number, 0 or more, or -1 for no limit. */
export function checkMaxWarnings(max: number | undefined): void {
  if (max !== undefined && (!Number.isInteger(max) || max < -1))
    throw usage("--max-warnings needs a whole number (0 or more; -1 for no limit)", "For example: --max-warnings 0");
}

/** More warnings than `--max-warnings` allows: said on stderr. */
export function tooManyWarnings(warnings: number, max: number | undefined): boolean {
  if (max === undefined || max < 0 || warnings <= max) return false;
  process.stderr.write(`syncbook: ${warnings} warning${warnings === 1 ? "" : "s"}, more than --max-warnings ${max}\n`);
  return true;
}

export async function main(paths: string[], opts: LintCliOptions = {}): Promise<number> {
  try {
    const format = (opts.format ?? "pretty") as Format;
    if (!FORMATS.includes(format))
      throw usage(`unknown format ${JSON.stringify(opts.format)}`, `Use one of: ${FORMATS.join(", ")}.`);
    if (opts.listRules) {
      writeOut(await listRules(format));
      return ExitCode.ok;
    }
    const max = opts.maxWarnings;
    checkMaxWarnings(max);
    const [{ files, diagnostics, sources }, formatter] = await Promise.all([
      lintFiles(paths, { importPlugins: opts.loadPlugins === true }),
      FORMATTERS[format](),
    ]);
    writeOut(formatter({ diagnostics, files, sources, color: format === "pretty" && useColor(opts.color) }));
    const n = countBySeverity(diagnostics);
    let code: number = ExitCode.ok;
    if (n.error > 0) code = ExitCode.failed;
    else if (tooManyWarnings(n.warning, max)) code = ExitCode.failed;
    // GitHub Actions job summary: the module is loaded only when asked for (start-up budget)
    if (process.env.GITHUB_STEP_SUMMARY) {
      const { appendSummary, lintSummary } = await import("./step-summary.js");
      appendSummary(lintSummary({ diagnostics, files, exitCode: code, maxWarnings: max }));
    }
    return code;
  } catch (err) {
    if (err instanceof UserError) {
      process.stderr.write(`syncbook: ${terminalText(err.message, { lines: true })}\n`);
      if (err.hint) process.stderr.write(`  hint: ${terminalText(err.hint, { lines: true })}\n`);
      if (process.env.GITHUB_STEP_SUMMARY && !opts.listRules) {
        const { appendSummary, failedSummary } = await import("./step-summary.js");
        const message = `${err.message}${err.hint ? `\nhint: ${err.hint}` : ""}`;
        appendSummary(failedSummary("lint", paths.join(" "), message, err.exitCode));
      }
      return err.exitCode;
    }
    throw err;
  }
}
