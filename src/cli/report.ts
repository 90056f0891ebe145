/**
 * `syncbook report <journal> [--out DIR]`: rebuilds report.json, junit.xml and report.html of a
 * run from its journal, after the fact (the run crashed, or `--report` was not given).
 *
 * Exit codes: 0 report written (whatever the run's outcome: that is in the report), 2 not a
 * journal, unreadable or unwritable. A truncated last line (a crash mid-write) is a warning.
 */
import { basename, dirname, join, relative } from "node:path";
import { ExitCode } from "../errors.js";
import { describeWindow } from "../fleet/window.js";
import { buildReport, readJournal, writeReportFiles } from "../report/index.js";

export interface ReportCliOptions {
  out?: string;
  /** Print nothing but warnings. */
  quiet?: boolean;
}

/** Default output: next to the journal, `<journal name without extension>.report/`. */
export function defaultOutDir(journal: string): string {
  return join(dirname(journal), `${basename(journal).replace(/\.(jsonl|ndjson|journal|json)$/i, "")}.report`);
}

export async function main(journal: string, opts: ReportCliOptions = {}): Promise<number> {
  const read = await readJournal(journal);
  for (const w of read.warnings) process.stderr.write(`syncbook: warning: ${w}\n`);
  const report = buildReport(read.events);
  report.warnings.unshift(...read.warnings);
  const out = opts.out ?? defaultOutDir(read.file);
  const { files } = await writeReportFiles(report, out);
  if (!opts.quiet) {
    const rel = (p: string): string => relative(process.cwd(), p) || p;
    const failed = report.steps.find((s) => s.index === report.failedStep);
    const outcome = `${report.outcome}${report.committed ? ", committed" : ""}${failed ? ` (step ${failed.index + 1} ${failed.id}: ${failed.outcome})` : ""}`;
    const runs = report.runs.length > 1 ? `${report.runs.length} runs, ` : "";
    process.stdout.write(
      `report of ${report.runbook} from ${rel(read.file)}: ${runs}${read.events.length} events, ${report.steps.length} steps, ${report.counts.commands} commands, ${report.counts.polls} progress reads (${report.counts.failedPolls} failed); run ${outcome}\n` +
        (report.window ? `  write-stop window: ${describeWindow(report.window)}\n` : "") +
        `  ${rel(files.html)}\n  ${rel(files.json)}\n  ${rel(files.junit)}\n`,
    );
  }
  return ExitCode.ok;
}
