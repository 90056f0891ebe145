/**
 * `syncbook report <journal> [--out DIR]`: rebuilds report.json, junit.xml and report.html of a
 * run from its journal, after the fact (the run crashed, or `--report` was not given).
 *
 * Exit codes: 0 report written (whatever the run's outcome: that is in the report), 2 not a
 * journal, unreadable or unwritable. A truncated last line (a crash mid-write) is a warning.
 */
import { basename, dirname, join, relative, resolve } from "node:path";
import { writeFile } from "node:fs/promises";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import type { RunEvent } from "../events.js";
import { describeWindow } from "../fleet/window.js";
import { cutoverJournals, cutoverOfRun } from "../journal/index.js";
import { CUT_OFF_WORDS, joinJournals } from "../model/fold.js";
import { COMMIT_IN_DOUBT_WORDS, reverseInDoubtWords } from "../writes-words.js";
import { buildReport, readJournal, writeReportFiles, type JournalRead } from "../report/index.js";

export interface ReportCliOptions {
  out?: string;
  /** Print nothing but warnings. */
  quiet?: boolean;
  /** Write the run's trace as OTLP JSON to this file instead of the report (docs/tracing.md). */
  otlp?: string;
}

/** Default output: next to the journal, `<journal name without extension>.report/`. */
export function defaultOutDir(journal: string): string {
  return join(dirname(journal), `${basename(journal).replace(/\.(jsonl|ndjson|journal|json)$/i, "")}.report`);
}

export async function main(journal: string, opts: ReportCliOptions = {}): Promise<number> {
  const read = await readJournal(journal);
  for (const w of read.warnings) process.stderr.write(`syncbook: warning: ${w}\n`);
  if (opts.otlp !== undefined) return writeOtlp(read.events, read.file, opts.otlp, opts.quiet === true);
  // the cutover's report: every run of it, in every journal of it in this folder (issue 37)
  const all = await cutoverReads(read);
  for (const r of all) if (r !== read) for (const w of r.warnings) process.stderr.write(`syncbook: warning: ${w}\n`);
  const joined = joinJournals(all);
  const several = all.length > 1;
  // the readers' warnings first, never spread into a call (a damaged journal can give 150,000)
  const warnings = all.flatMap((r) => r.warnings.map((w) => (several ? `${basename(r.file)}: ${w}` : w)));
  const report = buildReport(joined.events, { ...(several ? { journals: joined.journals } : {}), warnings });
  const out =
    opts.out ??
    (several && report.cutover?.id
      ? join(dirname(read.file), `${report.cutover.id}.report`)
      : defaultOutDir(read.file));
  const { files } = await writeReportFiles(report, out);
  if (!opts.quiet) {
    const rel = (p: string): string => relative(process.cwd(), p) || p;
    const failed = report.steps.find((s) => s.index === report.failedStep);
    // as the run's end, status and the page say it: a called-off cutover is "aborted" (its outcome
    // is failed), and a step its killed run left "running" ran no more once a later run finished
    const stepOutcome = (s: { outcome: string }): string =>
      s.outcome === "running" && report.finishedAt !== undefined ? CUT_OFF_WORDS : s.outcome;
    const outcome = `${report.aborted ? "aborted" : report.outcome}${report.committed ? ", committed" : report.commitInDoubt ? `, ${COMMIT_IN_DOUBT_WORDS}` : ""}${report.reverseInDoubt ? `; ${reverseInDoubtWords(report.reverseInDoubt.step)}` : ""}${failed ? ` (step ${failed.index + 1} ${failed.id}: ${stepOutcome(failed)})` : ""}`;
    const runs =
      report.runs.length > 1 || several
        ? `${report.runs.length} runs${several ? ` in ${all.length} journals` : ""}, `
        : "";
    const from = several
      ? `${rel(read.file)} and ${all.length - 1} other journal(s) of cutover ${report.cutover?.id ?? "?"}`
      : rel(read.file);
    process.stdout.write(
      `report of ${report.runbook} from ${from}: ${runs}${joined.events.length} events, ${report.steps.length} steps, ${report.counts.commands} commands, ${report.counts.polls} progress reads (${report.counts.failedPolls} failed); run ${outcome}\n` +
        (report.window ? `  write-stop window: ${describeWindow(report.window)}\n` : "") +
        `  ${rel(files.html)}\n  ${rel(files.json)}\n  ${rel(files.junit)}\n`,
    );
  }
  return ExitCode.ok;
}

/**
 * The journals of the cutover `read` belongs to, in its folder, oldest run first (src/journal/
 * cutover.ts): `read` itself among them. One that cannot be read is left out with a warning.
 */
async function cutoverReads(read: JournalRead): Promise<JournalRead[]> {
  const first = read.events.find((e) => e.type === "run.started");
  // a journal that does not name its cutover (written before ids were journaled) was never
  // continued in another journal: it is its own story
  if (!first || first.type !== "run.started" || first.cutover === undefined) return [read];
  const id = cutoverOfRun(first);
  const files = await cutoverJournals(dirname(read.file), id);
  if (files.length <= 1) return [read];
  const out: JournalRead[] = [];
  for (const f of files) {
    if (resolve(f) === resolve(read.file)) {
      out.push(read);
      continue;
    }
    try {
      out.push(await readJournal(f));
    } catch (err) {
      process.stderr.write(
        `syncbook: warning: ${f} is a journal of cutover ${id} but cannot be read (${errorMessage(err)}): the report leaves it out\n`,
      );
    }
  }
  return out.some((r) => r === read) ? out : [read];
}

/** `--otlp <file>`: the journal's spans as OTLP JSON, for a window run without a collector. */
async function writeOtlp(events: readonly RunEvent[], from: string, file: string, quiet: boolean): Promise<number> {
  const { journalToOtlp } = await import("../trace/index.js");
  const t = await journalToOtlp(events, process.env);
  try {
    await writeFile(file, t.json);
  } catch (err) {
    throw new UserError(`cannot write ${file}: ${errorMessage(err)}`, {
      exitCode: ExitCode.usage,
      hint: "give a path in a folder that exists and that you can write",
    });
  }
  if (!quiet)
    process.stdout.write(
      `trace of ${relative(process.cwd(), from) || from}: ${t.spans} spans, trace id ${t.traceId ?? "-"}\n  ${relative(process.cwd(), file) || file}\n`,
    );
  return ExitCode.ok;
}
