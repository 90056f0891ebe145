/**
 * Reports for people and CI, from the runner's one event stream (live) or from a journal (after
 * the fact). Three files per run, written atomically (temp file + rename) into one directory:
 *   report.json  the timeline: steps, every request and answer (redacted), decisions, samples
 *   junit.xml    one test case per step, so CI shows a rehearsal like a test run
 *   report.html  one self-contained page: outcome, timeline, inline SVG charts
 *
 *   const report = createReportListener("out/");
 *   await runRunbook(…, { listeners: [report.listener] });
 *   await report.finish();
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { UserError } from "../errors.js";
import type { RunEvent, RunListener } from "../events.js";
import { renderHtml } from "./html.js";
import { renderJson } from "./json.js";
import { renderJunit } from "./junit.js";
import { ReportBuilder, buildReport } from "./model.js";
import { shiftEvent } from "../model/fold.js";
import type { Report } from "./contract.js";

export { buildReport, ReportBuilder, formatDuration, progressFields, verifierFields } from "./model.js";
export { REPORT_VERSION } from "./contract.js";
export type {
  Report,
  ReportRun,
  ReportMarker,
  ReportPolls,
  ReportPollFailure,
  ReportRecord,
  StepAttempt,
  ReportStep,
  ReportRequest,
  ReportDecision,
  ReportHook,
  ReportCommit,
  ReportLog,
  ReportPrompt,
  ProgressSample,
  InstanceSeries,
  VerifierSample,
  StepOutcome,
  RunOutcome,
} from "./contract.js";
export { renderJson } from "./json.js";
export { renderJunit } from "./junit.js";
export { renderHtml, chartSeries } from "./html.js";
export { readJournal, isRunEvent, type JournalRead } from "../journal/index.js";
export { redactSecretFields as redactValue, stripUserinfo } from "../redact.js";

export const REPORT_FILES = { json: "report.json", junit: "junit.xml", html: "report.html" } as const;

export interface WrittenReport {
  report: Report;
  /** Absolute paths of the files written. */
  files: { json: string; junit: string; html: string };
}

/** Writes a file whole or not at all (temp file + rename): a reader never sees half a report. */
export async function atomicWrite(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text, "utf8");
  await rename(tmp, path);
}

/** Writes report.json, junit.xml and report.html of a built report into `dir` (created if missing). */
export async function writeReportFiles(report: Report, dir: string): Promise<WrittenReport> {
  const abs = resolve(dir);
  const files = {
    json: join(abs, REPORT_FILES.json),
    junit: join(abs, REPORT_FILES.junit),
    html: join(abs, REPORT_FILES.html),
  };
  try {
    await mkdir(abs, { recursive: true });
    await atomicWrite(files.json, renderJson(report));
    await atomicWrite(files.junit, renderJunit(report));
    await atomicWrite(files.html, renderHtml(report));
  } catch (err) {
    throw new UserError(`cannot write the report to ${dir}: ${(err as Error).message ?? String(err)}`, {
      hint: "check that --report names a writable directory",
      cause: err,
    });
  }
  return { report, files };
}

/** Builds the report of `events` and writes the three files into `dir`. */
export async function writeReport(
  events: readonly RunEvent[],
  dir: string,
  options: { warnings?: readonly string[] } = {},
): Promise<WrittenReport> {
  const report = buildReport(events, options);
  return writeReportFiles(report, dir);
}

export interface ReportListener {
  /** Add to the runner's listeners. Never throws into the runner. */
  listener: RunListener;
  /**
   * Waits for the report to be written and returns where. The listener writes on `run.finished`
   * already; `finish()` writes whatever arrived when the run ended without it (a crash, an
   * abort before the runner could say so). Rejects with a UserError if the files cannot be written.
   */
  finish(): Promise<WrittenReport>;
  /** The report of the events so far (e.g. for a summary line). */
  snapshot(): Report;
}

export interface ReportListenerOptions {
  /**
   * The earlier runs' events (a resumed journal's), folded in first: the report of a resumed run
   * is the whole cutover on one time axis. The live events' seq and request ids are shifted past
   * them, as the journal shifts its resumed lines.
   */
  history?: readonly RunEvent[];
  /** The command that builds the cutover's report from every run of it (`syncbook report <folder>`). */
  cutoverReport?: string;
}

/** Collects a run's events (folded into the model, not kept raw) and writes the report at the end. */
export function createReportListener(dir: string, options: ReportListenerOptions = {}): ReportListener {
  const builder = new ReportBuilder(
    options.cutoverReport !== undefined ? { cutoverReport: options.cutoverReport } : {},
  );
  let seqBase = 0;
  let idBase = 0;
  for (const e of [...(options.history ?? [])].sort((x, y) => x.seq - y.seq || x.at - y.at)) {
    builder.add(e);
    seqBase = Math.max(seqBase, e.seq);
    if (e.type === "request.sent" || e.type === "response.received") idBase = Math.max(idBase, e.id);
  }
  // the live events after the journal's own, as the journal shifts its resumed lines
  const shift = (e: RunEvent): RunEvent => shiftEvent(e, seqBase, idBase);
  let pending: Promise<WrittenReport> | undefined;
  let writtenAt = -1;
  const write = (): Promise<WrittenReport> => {
    writtenAt = builder.eventCount;
    const report = builder.build();
    const p = (pending ?? Promise.resolve(undefined)).catch(() => undefined).then(() => writeReportFiles(report, dir));
    pending = p;
    return p;
  };
  return {
    listener(event: RunEvent): Promise<void> | void {
      builder.add(shift(event));
      if (event.type === "run.finished") {
        // runners that await listeners get the files before the run returns; errors surface in finish()
        return write().then(
          () => undefined,
          () => undefined,
        );
      }
    },
    async finish(): Promise<WrittenReport> {
      if (pending && writtenAt === builder.eventCount) return pending;
      return write();
    },
    snapshot: () => structuredClone(builder.build()),
  };
}
