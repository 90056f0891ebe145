/**
 * `wave rehearse`: every runbook of a linted wave against its own in-process simulated fleet
 * (src/rehearse/), at most `maxParallel` at once, each only once every runbook it comes after
 * was SAFE; a runbook whose predecessor was not is SKIPPED. No scheduler beyond that bounded
 * loop: the real wave is the engine's to run.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { errorMessage } from "../errors.js";
import { safeSegment } from "../journal/format.js";
import type { WavePlan, WavePlanItem } from "./lint.js";
import type { WaveReportEntry, WaveStatus } from "./report.js";
import type { Verdict } from "../rehearse/index.js";
import { PLUGIN_CALL_KINDS } from "../steps/index.js";

export interface WaveRehearsalOptions {
  /** Write each runbook's report into `<dir>/<name>/` (and its verdict as verdict.json). */
  reportDir?: string;
  /** Simulated seconds per wall second (default the rehearsal's). */
  timeScale?: number;
  /** Ctrl-C: the rehearsals running stop (interrupted), none starts after it. */
  signal?: AbortSignal;
  /** A line per runbook as it starts and ends. */
  say?: (line: string) => void;
  /** Override the concurrency (default the wave's maxParallel). */
  maxParallel?: number;
}

/** The verdict file written next to each runbook's report: `report --wave` reads it back. */
export const VERDICT_FILE = "verdict.json";

export interface VerdictFile {
  wave: 1;
  name: string;
  runbook: string;
  status: WaveStatus;
  exitCode: number;
  verdict?: Verdict;
  message?: string;
}

/** The folder of a runbook's report inside the wave's report folder. */
export const reportFolder = (name: string): string => safeSegment(name);

export async function rehearseWave(plan: WavePlan, opts: WaveRehearsalOptions = {}): Promise<WaveReportEntry[]> {
  const max = Math.max(1, opts.maxParallel ?? plan.maxParallel);
  const say = opts.say ?? (() => undefined);
  const results = new Map<string, WaveReportEntry>();
  const started = new Set<string>();
  const running = new Set<Promise<void>>();
  const passed = (name: string): boolean => results.get(name)?.status === "SAFE";
  const skip = (item: WavePlanItem, message: string): void => {
    started.add(item.name);
    results.set(item.name, { ...entryOf(item), status: "SKIPPED", message });
    say(`${item.name}: SKIPPED (${message})`);
  };
  for (;;) {
    // skips cascade: a runbook after a skipped one is skipped too
    for (let changed = true; changed;) {
      changed = false;
      for (const item of plan.items) {
        if (started.has(item.name)) continue;
        const failed = item.after.filter((a) => results.has(a) && !passed(a));
        if (opts.signal?.aborted) skip(item, "the wave was interrupted before it started");
        else if (failed.length)
          skip(item, `${failed.map((f) => `${f} was ${results.get(f)?.status ?? "?"}`).join(", ")}`);
        else continue;
        changed = true;
      }
    }
    for (const item of plan.items) {
      if (running.size >= max || opts.signal?.aborted) break;
      if (started.has(item.name) || !item.after.every(passed)) continue;
      started.add(item.name);
      say(`${item.name}: rehearsing ${item.runbook}`);
      const p: Promise<void> = rehearseOne(item, opts).then((entry) => {
        results.set(item.name, entry);
        running.delete(p);
        say(`${item.name}: ${entry.status}${entry.message ? ` (${entry.message})` : ""}`);
      });
      running.add(p);
    }
    if (running.size === 0) break;
    await Promise.race(running);
  }
  // in the wave file's order; anything never reached (only possible with a cycle lint refuses) says so
  return plan.items.map(
    (i) => results.get(i.name) ?? { ...entryOf(i), status: "SKIPPED", message: "never became ready" },
  );
}

function entryOf(item: WavePlanItem): Omit<WaveReportEntry, "status"> {
  return { name: item.name, runbook: item.runbook, stage: item.stage, after: [...item.after] };
}

/** One runbook: load (with the environment), plugins, simulator, run, verdict, report. Never throws. */
async function rehearseOne(item: WavePlanItem, opts: WaveRehearsalOptions): Promise<WaveReportEntry> {
  const t0 = Date.now();
  const entry = entryOf(item);
  const dir = opts.reportDir ? join(opts.reportDir, reportFolder(item.name)) : undefined;
  const done = async (e: WaveReportEntry, verdict?: Verdict): Promise<WaveReportEntry> => {
    const out = { ...e, durationMs: Date.now() - t0 };
    if (dir) {
      const file: VerdictFile = {
        wave: 1,
        name: item.name,
        runbook: item.runbook,
        status: out.status,
        exitCode: out.exitCode ?? 1,
        ...(verdict ? { verdict } : {}),
        ...(out.message ? { message: out.message } : {}),
      };
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, VERDICT_FILE), `${JSON.stringify(file, null, 2)}\n`);
        if (out.exitCode !== undefined) out.report = `${reportFolder(item.name)}/report.html`;
      } catch (err) {
        out.message = `${out.message ? `${out.message}; ` : ""}cannot write its verdict: ${errorMessage(err)}`;
      }
    }
    return out;
  };
  try {
    const [
      { loadRunbook },
      { loadRunbookPlugins },
      { prepareRehearsal, rehearsalStandIns, verdictWord },
      { runRunbook },
      { createReportListener },
    ] = await Promise.all([
      import("../runbook/index.js"),
      import("../plugin/index.js"),
      import("../rehearse/index.js"),
      import("../run/runner.js"),
      import("../report/index.js"),
    ]);
    // hooks and notifiers are stood in for: their secrets are not needed (as `syncbook rehearse`)
    const loaded = await loadRunbook(item.runbook, { env: process.env, standIn: rehearsalStandIns(false) });
    const loadErrors = loaded.diagnostics.filter((d) => d.severity === "error");
    if (!loaded.runbook || loadErrors.length)
      return done({
        ...entry,
        status: "FAILED",
        exitCode: 2,
        message: `does not load: ${loadErrors.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`).join("; ") || "invalid"}`,
      });
    const reh = await prepareRehearsal(loaded, opts.timeScale !== undefined ? { timeScale: opts.timeScale } : {});
    try {
      // the plugins of the runbook as rehearsed: its stop-writes hooks are the simulator's switch now
      const plugins = await loadRunbookPlugins(reh.loaded, { callKinds: PLUGIN_CALL_KINDS });
      const pluginErrors = plugins.diagnostics.filter((d) => d.severity === "error");
      if (pluginErrors.length)
        return await done({
          ...entry,
          status: "FAILED",
          exitCode: 2,
          message: `plugin problems: ${pluginErrors.map((d) => d.message).join("; ")}`,
        });
      const report = dir ? createReportListener(dir) : undefined;
      const result = await runRunbook({
        loaded: reh.loaded,
        registry: plugins.registry,
        mode: "rehearse",
        listeners: report ? [report.listener] : [],
        ...(opts.signal ? { signal: opts.signal } : {}),
        yes: true,
        timeScale: reh.timeScale,
        writesProbe: reh.writesProbe,
        // notify lines and stand-ins: in the runbook's report, not interleaved on the terminal
        print: () => undefined,
      });
      const verdict = await reh.verdict(result);
      if (report) await report.finish();
      const status: WaveStatus =
        result.outcome === "interrupted"
          ? "INTERRUPTED"
          : result.exitCode !== 0
            ? "FAILED"
            : verdict.safe
              ? "SAFE"
              : "UNSAFE";
      const message =
        status === "SAFE"
          ? [
              // the status says NOT VERIFIED (statusText), the message why; then what lint knows
              verdict.verified ? undefined : (verdict.unverified ?? "no verification was earned"),
              verdict.lint?.warnings.length ? verdictWord(verdict) : undefined,
            ]
              .filter(Boolean)
              .join("; ") || undefined
          : status === "UNSAFE"
            ? unsafeWhy(verdict)
            : (result.message ?? `step ${result.failedStep ?? "?"} failed`);
      return done(
        {
          ...entry,
          status,
          exitCode: status === "UNSAFE" ? 1 : result.exitCode,
          committed: result.committed,
          ...(result.commitInDoubt ? { commitInDoubt: true as const } : {}),
          verified: result.verified,
          ...(message ? { message: reh.loaded.redact(message) } : {}),
        },
        verdict,
      );
    } finally {
      await reh.close();
    }
  } catch (err) {
    return done({ ...entry, status: "FAILED", exitCode: 1, message: errorMessage(err) });
  }
}

function unsafeWhy(v: Verdict): string {
  return (
    [
      v.writesLost > 0 ? `${v.writesLost} write(s) lost` : "",
      v.fleetErrors.length ? `fleet errors: ${v.fleetErrors.join("; ")}` : "",
      v.verifier.error != null || (v.verifier.failedTasks ?? 0) > 0 || (v.verifier.metadataMismatchTasks ?? 0) > 0
        ? "verification failed"
        : "",
    ]
      .filter(Boolean)
      .join(", ") || "unsafe"
  );
}
