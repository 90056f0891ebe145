/**
 * `report --wave <dir>`: the wave report from what an engine's jobs upload as artifacts, in any
 * folder layout: each runbook's report.json (with verdict.json beside it after a rehearsal) or
 * its journal (*.jsonl, a job that died before writing a report). A journal's report is built
 * into `<out>/<name>/`. With the wave file, runbooks with nothing uploaded are listed too:
 * SKIPPED when a runbook they come after did not pass, NOT RUN otherwise.
 */
import { readdir, readFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import { buildReport, readJournal, writeReportFiles, type Report } from "../report/index.js";
import type { WavePlan } from "./lint.js";
import { PASSED, buildWaveReport, type WaveReport, type WaveReportEntry, type WaveStatus } from "./report.js";
import { VERDICT_FILE, reportFolder, type VerdictFile } from "./rehearse.js";

interface Found {
  name: string;
  at: number;
  entry: Omit<WaveReportEntry, "after">;
}

/** Folders deeper than this are not an artifact layout. */
const MAX_DEPTH = 8;

async function walk(dir: string, depth = 0): Promise<string[]> {
  if (depth > MAX_DEPTH) return [];
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p, depth + 1)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const STATUS_OF: Record<Report["outcome"], WaveStatus> = {
  ok: "DONE",
  failed: "FAILED",
  interrupted: "INTERRUPTED",
  skipped: "FAILED",
  unfinished: "UNFINISHED",
};

function fromReport(report: Report, html: string | undefined, verdict: VerdictFile | undefined, out: string): Found {
  const failed = report.steps.find((s) => s.index === report.failedStep);
  const status: WaveStatus = verdict?.status ?? STATUS_OF[report.outcome];
  const unverified = report.verification?.verified === false ? report.verification.why : undefined;
  const message =
    verdict?.message ??
    (PASSED.has(status)
      ? unverified // the status says NOT VERIFIED (statusText), the message why
      : `${failed ? `step ${failed.id}: ` : ""}${report.message ?? failed?.error ?? report.outcome}`);
  return {
    name: report.runbook,
    at: report.finishedAt ?? report.startedAt,
    entry: {
      name: report.runbook,
      ...(report.file ? { runbook: report.file } : {}),
      status,
      ...(verdict
        ? { exitCode: verdict.exitCode }
        : report.exitCode !== undefined
          ? { exitCode: report.exitCode }
          : {}),
      committed: report.committed,
      ...(report.commitInDoubt ? { commitInDoubt: true as const } : {}),
      // a report or verdict of an older syncbook does not say: nothing is claimed either way
      ...(typeof report.verification?.verified === "boolean" ? { verified: report.verification.verified } : {}),
      durationMs: report.durationMs,
      ...(message ? { message } : {}),
      ...(html ? { report: relative(out, html).split("\\").join("/") } : {}),
    },
  };
}

export async function collectWaveReport(
  dir: string,
  opts: { out: string; plan?: WavePlan; say?: (line: string) => void },
): Promise<WaveReport> {
  const say = opts.say ?? (() => undefined);
  let files: string[];
  try {
    files = await walk(resolve(dir));
  } catch (err) {
    throw new UserError(`${dir}: cannot read the folder (${errorMessage(err)})`, {
      hint: "Pass the folder the jobs' artifacts were downloaded into (each runbook's report.json or journal).",
      exitCode: ExitCode.usage,
    });
  }
  const out = resolve(opts.out);
  const warnings: string[] = [];
  const found: Found[] = [];
  for (const f of files.filter((x) => basename(x) === "report.json")) {
    let report: Report;
    try {
      report = JSON.parse(await readFile(f, "utf8")) as Report;
      if (typeof report?.runbook !== "string" || typeof report.outcome !== "string") throw new Error("not a report");
    } catch (err) {
      warnings.push(`${relative(process.cwd(), f)}: not a run's report.json (${errorMessage(err)}): left out`);
      continue;
    }
    const verdict = await readVerdict(join(dirname(f), VERDICT_FILE));
    const html = files.find((x) => x === join(dirname(f), "report.html"));
    found.push(fromReport(report, html, verdict, out));
  }
  const journals = files.filter((x) => x.endsWith(".jsonl"));
  const used = new Set<string>();
  for (const j of journals) {
    const read = await readJournal(j).catch((err: unknown) => {
      warnings.push(`${relative(process.cwd(), j)}: not a journal (${errorMessage(err)}): left out`);
      return undefined;
    });
    if (!read || read.events.length === 0) continue;
    const report = buildReport(read.events, read);
    let folder = reportFolder(report.runbook);
    for (let i = 2; used.has(folder); i++) folder = `${reportFolder(report.runbook)}-${i}`;
    used.add(folder);
    const written = await writeReportFiles(report, join(out, "journals", folder));
    say(`${relative(process.cwd(), j)}: report of ${report.runbook} in ${relative(process.cwd(), written.files.html)}`);
    found.push(fromReport(report, written.files.html, undefined, out));
  }
  // per runbook, the latest word (a later job resumed what an earlier one left)
  const latest = new Map<string, Found>();
  for (const f of found) {
    const prev = latest.get(f.name);
    if (!prev || f.at > prev.at) latest.set(f.name, f);
  }
  if (latest.size === 0 && !opts.plan)
    throw new UserError(`${dir}: no report.json and no journal (*.jsonl) in it`, {
      hint: "Download the jobs' report and journal artifacts into that folder first.",
      exitCode: ExitCode.usage,
    });

  let runbooks: WaveReportEntry[];
  if (opts.plan) {
    const byName = new Map<string, WaveReportEntry>();
    for (const item of opts.plan.items) {
      const f = latest.get(item.name);
      const base = { name: item.name, runbook: item.runbook, stage: item.stage, after: [...item.after] };
      if (f) byName.set(item.name, { ...f.entry, ...base });
    }
    // stages in order, so a skip is known before what comes after it
    for (const item of [...opts.plan.items].sort((a, b) => a.stage - b.stage)) {
      if (byName.has(item.name)) continue;
      const failed = item.after.filter((a) => !PASSED.has(byName.get(a)?.status ?? "NOT RUN"));
      byName.set(item.name, {
        name: item.name,
        runbook: item.runbook,
        stage: item.stage,
        after: [...item.after],
        status: failed.length ? "SKIPPED" : "NOT RUN",
        message: failed.length
          ? failed.map((a) => `${a} was ${byName.get(a)?.status ?? "?"}`).join(", ")
          : "no report or journal of it was found",
      });
    }
    for (const name of latest.keys())
      if (!byName.has(name)) warnings.push(`${name}: a report of a runbook that is not in the wave: left out`);
    runbooks = opts.plan.items.map((i) => byName.get(i.name) as WaveReportEntry);
  } else {
    runbooks = [...latest.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((f) => ({ ...f.entry, after: [] }));
    // a runbook whose job never ran uploaded nothing: only the wave file says it belongs to the wave
    if (runbooks.every((r) => PASSED.has(r.status)))
      warnings.push(
        "without --wave-file the runbooks that never ran (or uploaded nothing) cannot be seen: the wave is UNKNOWN, never PASSED; pass --wave-file <wave> for its verdict",
      );
  }
  return buildWaveReport({
    wave: opts.plan?.name ?? basename(resolve(dir)),
    source: "artifacts",
    ...(opts.plan ? { maxParallel: opts.plan.maxParallel } : {}),
    runbooks,
    complete: opts.plan !== undefined,
    warnings,
  });
}

async function readVerdict(file: string): Promise<VerdictFile | undefined> {
  try {
    const v = JSON.parse(await readFile(file, "utf8")) as VerdictFile;
    return v && v.wave === 1 && typeof v.status === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}
