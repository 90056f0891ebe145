/**
 * `syncbook preflight <runbook>`: the runbook checked against the real clusters (read-only),
 * with lint's formats. The driver is loaded only here, at run time (src/preflight/connect.ts).
 *
 * Exit codes as lint: 0 no errors (and no more warnings than `--max-warnings`), 1 errors (a
 * cluster unreachable is one), too many warnings, or nothing checked (no cluster has a `uri`), 2 usage or a runbook
 * that does not load (schema errors, an unset `${env.*}`), 130 interrupted. Reports go to stdout;
 * usage errors to stderr. Nothing printed contains a connection string's secret parts.
 */
import { countBySeverity } from "../diagnostics.js";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import { terminalText } from "../text.js";
import { FORMATS, type Format, type FormatInput } from "../lint/format/types.js";
import { PREFLIGHT_CHECKS } from "../preflight/catalogue.js";
import { PLUGIN_RULES } from "../plugin/rules.js";
import { LOADER_RULES } from "../runbook/rules.js";
import type { NamespaceList } from "../preflight/index.js";
import { durationMs } from "../runbook/duration.js";
import { loadRunbook, type LoadedRunbook } from "../runbook/load.js";
import { FORMATTERS, checkMaxWarnings, tooManyWarnings, useColor, writeOut } from "./lint.js";
import { lintCommand } from "../next-run.js";

export interface PreflightCliOptions {
  format?: string;
  listNamespaces?: boolean;
  connectTimeout?: string;
  copyRate?: string;
  color?: boolean;
  maxWarnings?: number;
}

function usage(message: string, hint: string): UserError {
  return new UserError(message, { hint, exitCode: ExitCode.usage });
}

/** The namespace set as a table (pretty). */
export function namespaceTable(list: NamespaceList): string {
  const rows = list.namespaces.map((n) => [
    `${n.database}.${n.collection}`,
    n.type,
    n.documents === null ? "?" : String(n.documents),
    n.bytes === null ? "?" : String(n.bytes),
    n.shardKey ? JSON.stringify(n.shardKey) : "",
  ]);
  const head = ["namespace", "type", "documents", "bytes", "shard key"];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]): string =>
    r
      .map((c, i) => (i === 2 || i === 3 ? c.padStart(w[i] ?? 0) : c.padEnd(w[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const t = list.totals;
  return `\nSynced namespaces of \`${list.source}\` → \`${list.destination}\`${list.complete ? "" : " (incomplete: some could not be read)"}:\n${[line(head), ...rows.map(line)].join("\n")}\n${t.collections} namespaces, ${t.documents} documents, ${t.bytes} bytes\n`;
}

export async function main(file: string, opts: PreflightCliOptions = {}): Promise<number> {
  const controller = new AbortController();
  const stop = (): void => controller.abort(new UserError("interrupted", { exitCode: ExitCode.interrupted }));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const format = (opts.format ?? "pretty") as Format;
    if (!FORMATS.includes(format))
      throw usage(`unknown format ${JSON.stringify(opts.format)}`, `Use one of: ${FORMATS.join(", ")}.`);
    if (opts.listNamespaces && (format === "github" || format === "junit" || format === "sarif"))
      throw usage(
        `--list-namespaces prints a list, which the ${format} format cannot carry`,
        "Use --format json (for a rehearsal or a script) or pretty (to read).",
      );
    checkMaxWarnings(opts.maxWarnings);
    let connectTimeoutMs: number | undefined;
    if (opts.connectTimeout !== undefined) {
      const v = /^\d+(\.\d+)?$/.test(opts.connectTimeout) ? Number(opts.connectTimeout) : opts.connectTimeout;
      connectTimeoutMs = durationMs(v);
      if (connectTimeoutMs === undefined || connectTimeoutMs <= 0)
        throw usage(
          `--connect-timeout ${JSON.stringify(opts.connectTimeout)} is not a duration`,
          "For example: --connect-timeout 30s",
        );
    }
    let loaded: LoadedRunbook;
    try {
      loaded = await loadRunbook(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw usage(`cannot read ${file}: ${code ?? errorMessage(err)}`, "Check that the file exists and is readable.");
    }
    const formatter = await FORMATTERS[format]();
    const input = (diagnostics: FormatInput["diagnostics"]): FormatInput => ({
      diagnostics,
      files: [loaded.file],
      sources: new Map([[loaded.file, loaded.text]]),
      color: format === "pretty" && useColor(opts.color),
      command: "preflight",
      // what preflight can report: its checks, and the loader's and plugin checks' ids
      rules: [...PREFLIGHT_CHECKS, ...LOADER_RULES, ...PLUGIN_RULES],
    });
    const broken = loaded.diagnostics.filter((d) => d.severity === "error");
    if (broken.length > 0 || !loaded.runbook) {
      writeOut(formatter(input(loaded.diagnostics)));
      process.stderr.write(`syncbook: ${file} does not load, so its clusters were not checked\n`);
      process.stderr.write(`  hint: fix the errors above (${lintCommand(file)}); export every \${env.*} it names\n`);
      return ExitCode.usage;
    }
    const { runPreflight } = await import("../preflight/index.js");
    const { firstStartRequest, stepsSending } = await import("../steps/index.js");
    const result = await runPreflight(loaded, {
      start: firstStartRequest(loaded.runbook),
      reverses: stepsSending(loaded.runbook, "reverse"),
      signal: controller.signal,
      ...(connectTimeoutMs !== undefined ? { connectTimeoutMs } : {}),
      ...(opts.copyRate !== undefined ? { copyRate: opts.copyRate } : {}),
    });
    const diagnostics = [...loaded.diagnostics, ...result.diagnostics];
    let text = formatter(input(diagnostics));
    if (opts.listNamespaces) {
      if (format === "json") {
        // lint's JSON keys, plus `namespaces` (null when the set could not be read): docs in README
        const doc = JSON.parse(text) as Record<string, unknown>;
        text = `${JSON.stringify({ ...doc, namespaces: result.namespaces ?? null })}\n`;
      } else
        text += result.namespaces
          ? loaded.redact(namespaceTable(result.namespaces))
          : "\nSynced namespaces: not known (no start step, or the source could not be read).\n";
    }
    writeOut(text);
    if (countBySeverity(diagnostics).error > 0) return ExitCode.failed;
    // a CI gate must not go green on a preflight that proved nothing
    if (result.checked.length === 0) {
      process.stderr.write(
        `syncbook: preflight checked nothing: no cluster of ${file} has a \`uri\`, so no cluster was reached\n`,
      );
      process.stderr.write(
        "  hint: give the source and destination clusters a `uri` from the environment (see the warnings above) and export the connection strings\n",
      );
      return ExitCode.failed;
    }
    return tooManyWarnings(countBySeverity(diagnostics).warning, opts.maxWarnings) ? ExitCode.failed : ExitCode.ok;
  } catch (err) {
    if (err instanceof UserError) {
      process.stderr.write(`syncbook: ${terminalText(err.message, { lines: true })}\n`);
      if (err.hint) process.stderr.write(`  hint: ${terminalText(err.hint, { lines: true })}\n`);
      return err.exitCode;
    }
    if (controller.signal.aborted) {
      process.stderr.write("syncbook: preflight interrupted; every connection it opened is closed\n");
      return ExitCode.interrupted;
    }
    throw err;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
