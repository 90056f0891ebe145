/**
 * `syncbook wave lint|plan|rehearse <wave>` and `syncbook report --wave <dir>`: many cutovers
 * planned together for the engine that runs them (docs/waves.md). Imported only by those
 * commands.
 *
 * Exit codes as lint's and rehearse's: lint 0 clean, 1 errors or too many warnings, 2 usage or
 * unreadable; plan 0 printed, 2 the wave does not lint or usage; rehearse 0 every runbook SAFE,
 * 1 any other verdict, 2 the wave does not lint, 130 interrupted.
 */
import { existsSync, statSync } from "node:fs";
import { relative } from "node:path";
import { countBySeverity, type Diagnostic } from "../diagnostics.js";
import { ExitCode, UserError } from "../errors.js";
import { FORMATS, type Format } from "../lint/format/types.js";
import type { WaveLintResult, WavePlan } from "../wave/lint.js";
import { FORMATTERS, useColor, writeOut } from "./lint.js";
import { stderr, stdout } from "./execute.js";
import { formatDuration } from "../runbook/duration.js";

export interface WaveLintOptions {
  format?: string;
  maxWarnings?: number;
  color?: boolean;
}

function usage(message: string, hint: string): UserError {
  return new UserError(message, { hint, exitCode: ExitCode.usage });
}

/** The wave file must exist and be a file: anything else is a usage error (exit 2). */
function checkWaveFile(file: string): void {
  if (!existsSync(file))
    throw usage(`${file}: no such file`, "Pass the path of a wave file (YAML with `wave: 1`; docs/waves.md).");
  if (statSync(file).isDirectory())
    throw usage(`${file} is a folder: pass the wave file`, "A wave file lists the runbooks (docs/waves.md).");
}

async function lintWaveFile(file: string): Promise<WaveLintResult> {
  checkWaveFile(file);
  const { lintWave } = await import("../wave/lint.js");
  return lintWave(file);
}

/** The findings in lint's chosen format (SARIF names the wave's rules along with lint's). */
async function formatFindings(result: WaveLintResult, format: Format, color: boolean): Promise<string> {
  const [formatter, { RULES }, { WAVE_RULES }] = await Promise.all([
    FORMATTERS[format](),
    import("../lint/rules.js"),
    import("../wave/lint.js"),
  ]);
  return formatter({
    diagnostics: result.diagnostics,
    files: result.files,
    sources: result.sources,
    color,
    rules: [...RULES, ...WAVE_RULES],
  });
}

/** `wave lint`: the wave's rules and every runbook's lint, in lint's formats and exit codes. */
export async function lintMain(file: string, opts: WaveLintOptions = {}): Promise<number> {
  const format = (opts.format ?? "pretty") as Format;
  if (!FORMATS.includes(format))
    throw usage(`unknown format ${JSON.stringify(opts.format)}`, `Use one of: ${FORMATS.join(", ")}.`);
  const max = opts.maxWarnings;
  if (max !== undefined && (!Number.isInteger(max) || max < -1))
    throw usage("--max-warnings needs a whole number (0 or more; -1 for no limit)", "For example: --max-warnings 0");
  const result = await lintWaveFile(file);
  writeOut(await formatFindings(result, format, format === "pretty" && useColor(opts.color)));
  const n = countBySeverity(result.diagnostics);
  if (n.error > 0) return ExitCode.failed;
  if (max !== undefined && max >= 0 && n.warning > max) {
    stderr(`syncbook: ${n.warning} warning${n.warning === 1 ? "" : "s"}, more than --max-warnings ${max}`);
    return ExitCode.failed;
  }
  return ExitCode.ok;
}

/** A wave that does not lint is never planned nor rehearsed: its findings, then exit 2. */
async function planOrRefuse(file: string): Promise<{ plan: WavePlan; result: WaveLintResult }> {
  const result = await lintWaveFile(file);
  const errors = result.diagnostics.filter((d: Diagnostic) => d.severity === "error");
  if (errors.length || !result.plan) {
    const shown = result.diagnostics.filter((d) => d.severity !== "info");
    stderr(await formatFindings({ ...result, diagnostics: shown }, "pretty", false));
    throw usage(
      `${file} has ${errors.length} error(s): nothing was planned`,
      `Fix them (syncbook wave lint ${file}); a wave that does not lint clean is never planned or rehearsed.`,
    );
  }
  return { plan: result.plan, result };
}

export interface WavePlanOptions {
  format?: string;
  stage?: string;
}

export const PLAN_FORMATS = ["github", "argo", "json"] as const;

/** `wave plan`: the GitHub Actions matrix (one JSON line) or the Argo Workflow (YAML). */
export async function planMain(file: string, opts: WavePlanOptions = {}): Promise<number> {
  const format = opts.format ?? "github";
  if (!(PLAN_FORMATS as readonly string[]).includes(format))
    throw usage(`unknown format ${JSON.stringify(format)}`, `Use one of: ${PLAN_FORMATS.join(", ")}.`);
  let stage: number | undefined;
  if (opts.stage !== undefined) {
    if (format !== "github") throw usage("--stage goes with --format github", "It picks one stage's matrix.");
    if (!/^\d+$/.test(opts.stage.trim()))
      throw usage(`--stage ${opts.stage}: not a stage number`, "Stages are 0, 1, 2…");
    stage = Number(opts.stage);
  }
  const { plan } = await planOrRefuse(file);
  const { argoWorkflow, githubMatrix } = await import("../wave/plan.js");
  if (format === "argo") {
    const { stringify } = await import("yaml");
    writeOut(stringify(argoWorkflow(plan), { lineWidth: 0 }));
  } else if (format === "json") writeOut(`${JSON.stringify(plan)}\n`);
  else writeOut(`${JSON.stringify(githubMatrix(plan, stage))}\n`);
  return ExitCode.ok;
}

export interface WaveRehearseOptions {
  report?: string;
  timeScale?: string;
  maxParallel?: string;
}

/** `wave rehearse`: every runbook against its own simulated fleet, in `after` order, a verdict each. */
export async function rehearseMain(file: string, opts: WaveRehearseOptions = {}): Promise<number> {
  const { parseTimeScale } = await import("./sim.js");
  const timeScale = opts.timeScale === undefined ? undefined : parseTimeScale(opts.timeScale, { frozen: false });
  let maxParallel: number | undefined;
  if (opts.maxParallel !== undefined) {
    if (!/^\d+$/.test(opts.maxParallel.trim()) || Number(opts.maxParallel) < 1)
      throw usage(`--max-parallel ${opts.maxParallel}: not a positive whole number`, "For example: --max-parallel 4");
    maxParallel = Number(opts.maxParallel);
  }
  const { plan } = await planOrRefuse(file);
  const [
    { rehearseWave },
    { buildWaveReport, countsText, notVerified, statusText, writeWaveReport },
    { interruptOnSignals, keepRunningWithoutOutput },
  ] = await Promise.all([import("../wave/rehearse.js"), import("../wave/report.js"), import("./execute.js")]);
  const width = Math.max(...plan.items.map((i) => i.name.length));
  stderr(
    `wave ${plan.name}: ${plan.items.length} runbook(s), at most ${maxParallel ?? plan.maxParallel} at once, each against its own simulated fleet`,
  );
  keepRunningWithoutOutput();
  const controller = new AbortController();
  const off = interruptOnSignals(controller, stderr);
  const started = Date.now();
  let entries;
  try {
    entries = await rehearseWave(plan, {
      ...(opts.report ? { reportDir: opts.report } : {}),
      ...(timeScale !== undefined ? { timeScale } : {}),
      ...(maxParallel !== undefined ? { maxParallel } : {}),
      signal: controller.signal,
      say: (l) => stderr(`  ${l}`),
    });
  } finally {
    off();
  }
  const report = buildWaveReport({
    wave: plan.name,
    source: "rehearse",
    maxParallel: plan.maxParallel,
    runbooks: entries,
    complete: true,
  });
  // never a bare SAFE where a runbook passed without a verification of its cutover
  const word = report.outcome !== "PASSED" ? "NOT SAFE" : notVerified(report).length > 0 ? "NOT VERIFIED" : "SAFE";
  stdout(`wave ${plan.name}: ${word} (${countsText(report)}) in ${formatDuration(Date.now() - started)}`);
  for (const e of entries)
    stdout(
      `  ${e.name.padEnd(width)}  ${statusText(e).padEnd(11)}${e.durationMs !== undefined ? ` ${formatDuration(e.durationMs).padStart(8)}` : "         "}${e.message ? `  ${e.message}` : ""}`,
    );
  if (opts.report) {
    const files = await writeWaveReport(report, opts.report);
    stderr(`report: ${relative(process.cwd(), files.html) || files.html} (also wave.json, junit.xml)`);
  }
  if (controller.signal.aborted) return ExitCode.interrupted;
  return report.outcome === "PASSED" ? ExitCode.ok : ExitCode.failed;
}

export interface WaveReportOptions {
  out?: string;
  waveFile?: string;
  quiet?: boolean;
}

/** `report --wave <dir>`: the wave report from the artifacts the engine's jobs uploaded. */
export async function reportMain(dir: string, opts: WaveReportOptions = {}): Promise<number> {
  const plan = opts.waveFile ? (await planOrRefuse(opts.waveFile)).plan : undefined;
  const { collectWaveReport } = await import("../wave/collect.js");
  const { countsText, writeWaveReport, renderWaveMarkdown } = await import("../wave/report.js");
  const out = opts.out ?? dir;
  const report = await collectWaveReport(dir, { out, ...(plan ? { plan } : {}), say: opts.quiet ? undefined : stderr });
  for (const w of report.warnings) stderr(`syncbook: warning: ${w}`);
  const files = await writeWaveReport(report, out);
  if (process.env.GITHUB_STEP_SUMMARY) {
    const { appendSummary } = await import("./step-summary.js");
    appendSummary(renderWaveMarkdown(report));
  }
  if (!opts.quiet) {
    const rel = (p: string): string => relative(process.cwd(), p) || p;
    stdout(
      `wave ${report.wave}: ${report.outcome} (${countsText(report)})\n  ${rel(files.html)}\n  ${rel(files.json)}\n  ${rel(files.junit)}`,
    );
  }
  // the report is written whatever the wave's outcome (as `syncbook report`); the outcome is in it
  return ExitCode.ok;
}
