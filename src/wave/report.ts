/**
 * The wave report: one line per runbook (its verdict or outcome, why it was skipped, a link to
 * its own report), in three files as a run's report is: wave.json, junit.xml (a test case per
 * runbook) and wave.html. Built the same way from a rehearsal (`wave rehearse --report`) and
 * from the per-runbook reports or journals an engine's jobs upload (`report --wave`).
 */
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { UserError } from "../errors.js";
import { escapeXml as esc } from "../text.js";
import { renderJunitXml, type JunitCase } from "../junit.js";
import { atomicWrite } from "../report/index.js";
import { formatDuration } from "../runbook/duration.js";

export const WAVE_REPORT_VERSION = 1;
export const WAVE_REPORT_FILES = { json: "wave.json", junit: "junit.xml", html: "wave.html" } as const;

/**
 * SAFE / UNSAFE: a rehearsal's verdict. DONE / FAILED / INTERRUPTED: a run's outcome (a real
 * run has no verdict). SKIPPED: a runbook it comes after did not succeed. NOT RUN: no report
 * or journal of it was found. UNFINISHED: its journal ends before the run did (the job died).
 */
export type WaveStatus = "SAFE" | "UNSAFE" | "DONE" | "FAILED" | "INTERRUPTED" | "UNFINISHED" | "SKIPPED" | "NOT RUN";

/** The statuses a wave passes with. */
export const PASSED: ReadonlySet<WaveStatus> = new Set(["SAFE", "DONE"]);

export interface WaveReportEntry {
  name: string;
  /** The runbook file. */
  runbook?: string;
  stage?: number;
  after: string[];
  status: WaveStatus;
  exitCode?: number;
  /** Commit was accepted by at least one instance. */
  committed?: boolean;
  /** Not committed, and a commit sent may hold (the report's `commitInDoubt`): "no" would say writes may go back on the source. */
  commitInDoubt?: true;
  /**
   * A `verify` step passed on this cutover's verification result (src/steps/kit/earned.ts): a
   * SAFE or DONE runbook without it is shown "not verified", never SAFE alone.
   */
  verified?: boolean;
  durationMs?: number;
  /** What went wrong, or why it was skipped. */
  message?: string;
  /** Its own report.html, relative to the wave report's folder. */
  report?: string;
}

export interface WaveReport {
  version: typeof WAVE_REPORT_VERSION;
  wave: string;
  /** rehearse: from `wave rehearse`; artifacts: from `report --wave`. */
  source: "rehearse" | "artifacts";
  maxParallel?: number;
  generatedAt: string;
  /**
   * PASSED when every runbook of the wave is SAFE or DONE; FAILED when one is not; UNKNOWN when
   * none failed but the wave's list was not given (`report --wave` without `--wave-file`): a
   * runbook that never ran and uploaded nothing cannot be seen, so a wave cut short would pass.
   */
  outcome: "PASSED" | "FAILED" | "UNKNOWN";
  counts: Partial<Record<WaveStatus, number>>;
  runbooks: WaveReportEntry[];
  warnings: string[];
}

export function buildWaveReport(input: {
  wave: string;
  source: WaveReport["source"];
  maxParallel?: number;
  runbooks: WaveReportEntry[];
  /** Whether `runbooks` is the whole wave (from the wave file); otherwise the wave never PASSED. */
  complete: boolean;
  warnings?: string[];
  now?: Date;
}): WaveReport {
  const counts: Partial<Record<WaveStatus, number>> = {};
  for (const r of input.runbooks) counts[r.status] = (counts[r.status] ?? 0) + 1;
  const allPassed = input.runbooks.length > 0 && input.runbooks.every((r) => PASSED.has(r.status));
  const failed = input.runbooks.some((r) => !PASSED.has(r.status));
  return {
    version: WAVE_REPORT_VERSION,
    wave: input.wave,
    source: input.source,
    ...(input.maxParallel !== undefined ? { maxParallel: input.maxParallel } : {}),
    generatedAt: (input.now ?? new Date()).toISOString(),
    outcome: failed || input.runbooks.length === 0 ? "FAILED" : allPassed && input.complete ? "PASSED" : "UNKNOWN",
    counts,
    runbooks: input.runbooks,
    warnings: input.warnings ?? [],
  };
}

/** One line per status count: `3 SAFE, 1 FAILED, 2 SKIPPED`, and how many of them are not verified. */
export function countsText(report: WaveReport): string {
  const unverified = notVerified(report).length;
  return (
    Object.entries(report.counts)
      .map(([s, n]) => `${n} ${s}`)
      .join(", ") + (unverified ? `; ${unverified} not verified` : "")
  );
}

/** The runbooks that passed (SAFE or DONE) without a verification of their cutover. */
export const notVerified = (report: WaveReport): WaveReportEntry[] =>
  report.runbooks.filter((r) => PASSED.has(r.status) && r.verified === false);

/** The wave's outcome as shown: `PASSED`, or `PASSED · 1 NOT VERIFIED` where runbooks passed unverified. */
export function outcomeText(report: WaveReport): string {
  const n = notVerified(report).length;
  return `${report.outcome}${n ? ` · ${n} NOT VERIFIED` : ""}`;
}

/** A status as shown: `SAFE`, or `SAFE · NOT VERIFIED` where the runbook passed unverified. */
export const statusText = (r: WaveReportEntry): string =>
  `${r.status}${PASSED.has(r.status) && r.verified === false ? " · NOT VERIFIED" : ""}`;

export function renderWaveJson(report: WaveReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

// JUnit's `time` attribute: seconds as a number, a machine format (not a duration for people)

/** A test case per runbook: FAILED/UNSAFE/INTERRUPTED/UNFINISHED/NOT RUN a failure, SKIPPED skipped. */
export function renderWaveJunit(report: WaveReport): string {
  const cases = report.runbooks.map((r): JunitCase => {
    const base = { classname: report.wave, name: r.name, timeMs: r.durationMs ?? 0 };
    if (PASSED.has(r.status))
      return r.verified === false ? { ...base, systemOut: `not verified${r.message ? `: ${r.message}` : ""}` } : base;
    if (r.status === "SKIPPED") return { ...base, skipped: r.message ?? "skipped" };
    const text = `${r.status}${r.message ? `: ${r.message}` : ""}`;
    return {
      ...base,
      failure: { tag: "failure", message: text, text: `${text}${r.report ? `\nreport: ${r.report}` : ""}` },
    };
  });
  // the one JUnit writer (src/junit.ts)
  return renderJunitXml(`syncbook wave ${report.wave}`, [{ name: report.wave, cases }]);
}

const COLORS: Record<WaveStatus, string> = {
  SAFE: "#1a7f37",
  DONE: "#1a7f37",
  UNSAFE: "#cf222e",
  FAILED: "#cf222e",
  INTERRUPTED: "#bf8700",
  UNFINISHED: "#bf8700",
  SKIPPED: "#6e7781",
  "NOT RUN": "#6e7781",
};

/** One self-contained page: the outcome, the counts, a row per runbook linking its report. */
export function renderWaveHtml(report: WaveReport): string {
  const rows = report.runbooks
    .map(
      (r) =>
        `<tr><td>${r.stage ?? ""}</td><td>${r.report ? `<a href="${esc(r.report)}">${esc(r.name)}</a>` : esc(r.name)}</td>` +
        `<td><b style="color:${COLORS[r.status]}">${esc(statusText(r))}</b>${r.exitCode !== undefined ? ` (exit ${r.exitCode})` : ""}</td>` +
        `<td>${r.committed === undefined ? "" : r.committed ? "yes" : r.commitInDoubt ? "in doubt" : "no"}</td><td>${r.durationMs === undefined ? "" : formatDuration(r.durationMs)}</td>` +
        `<td>${esc(r.after.join(", "))}</td><td>${esc(r.runbook ?? "")}</td><td>${esc(r.message ?? "")}</td></tr>`,
    )
    .join("\n");
  const warnings = report.warnings.length
    ? `<h2>Warnings</h2><ul>${report.warnings.map((w) => `<li>${esc(w)}</li>`).join("")}</ul>`
    : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>wave ${esc(report.wave)}: ${outcomeText(report)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f6f8fa}</style>
</head><body>
<h1>wave ${esc(report.wave)}: <span style="color:${report.outcome === "PASSED" ? COLORS.SAFE : report.outcome === "UNKNOWN" ? COLORS["NOT RUN"] : COLORS.FAILED}">${outcomeText(report)}</span></h1>
<p>${esc(countsText(report))}; ${report.runbooks.length} runbook(s)${report.maxParallel !== undefined ? `, at most ${report.maxParallel} at once` : ""}; ${report.source === "rehearse" ? "rehearsed against simulated fleets" : "from the jobs' reports and journals"}; ${esc(report.generatedAt)}</p>
<table><thead><tr><th>stage</th><th>runbook</th><th>status</th><th>committed</th><th>time</th><th>after</th><th>file</th><th>detail</th></tr></thead>
<tbody>
${rows}
</tbody></table>
${warnings}
</body></html>
`;
}

/** GitHub-flavoured Markdown for a job summary. */
export function renderWaveMarkdown(report: WaveReport): string {
  const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const rows = report.runbooks.map(
    (r) =>
      `| ${r.stage ?? ""} | ${cell(r.name)} | **${statusText(r)}**${r.exitCode !== undefined ? ` (exit ${r.exitCode})` : ""} | ${cell(r.after.join(", "))} | ${cell(r.message ?? "")} |`,
  );
  return [
    `### wave ${cell(report.wave)}: ${outcomeText(report)}`,
    "",
    countsText(report),
    "",
    "| stage | runbook | status | after | detail |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

/** Writes wave.json, junit.xml and wave.html into `dir`; returns their absolute paths. */
export async function writeWaveReport(
  report: WaveReport,
  dir: string,
): Promise<Record<"json" | "junit" | "html", string>> {
  const abs = resolve(dir);
  const files = {
    json: join(abs, WAVE_REPORT_FILES.json),
    junit: join(abs, WAVE_REPORT_FILES.junit),
    html: join(abs, WAVE_REPORT_FILES.html),
  };
  try {
    await mkdir(abs, { recursive: true });
    await atomicWrite(files.json, renderWaveJson(report));
    await atomicWrite(files.junit, renderWaveJunit(report));
    await atomicWrite(files.html, renderWaveHtml(report));
  } catch (err) {
    throw new UserError(`cannot write the wave report to ${dir}: ${(err as Error).message ?? String(err)}`, {
      hint: "Check that the folder is writable.",
      cause: err,
    });
  }
  return files;
}
