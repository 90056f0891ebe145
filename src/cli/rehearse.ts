/**
 * `syncbook rehearse <runbook>`: the whole cutover against an in-process simulated fleet shaped
 * like the runbook, ending with a verdict: committed or not, writes lost, the verifier's result,
 * time taken. Confirms are answered yes (a rehearsal runs unattended); interlocks still apply.
 * Exit 1 when the run failed or the verdict is unsafe (writes lost, a fleet error, a failed
 * verification), 3 when an interlock stopped it (as `syncbook run`).
 */
import { readFile } from "node:fs/promises";
import { ExitCode, UserError, errorMessage } from "../errors.js";
import type { Verdict } from "../rehearse/index.js";
import type { RunEvent } from "../events.js";
import { execute, failureText } from "./run.js";
import type { CommandSummary } from "./step-summary.js";
import { loadForRun, loadPluginsFor, parseForce, stderr, stdout, type ExecuteFlags } from "./execute.js";

export interface RehearseFlags extends ExecuteFlags {
  keepHooks?: boolean;
  timeScale?: string;
  data?: string;
  fault?: string[];
  seed?: string;
  /** A file written by `syncbook preflight --list-namespaces --format json`. */
  namespaces?: string;
}

export async function main(file: string, flags: RehearseFlags): Promise<number> {
  // GitHub Actions job summary (src/cli/step-summary.ts), when GITHUB_STEP_SUMMARY is set
  const summary = process.env.GITHUB_STEP_SUMMARY
    ? (await import("./step-summary.js")).commandSummary("rehearse", file)
    : undefined;
  // --renderer json: stdout is the JSON lines' alone from here on (src/ui/json.ts)
  const claimed = flags.renderer === "json" ? (await import("../ui/json.js")).claimStdout() : undefined;
  try {
    return await rehearse(file, flags, claimed?.write, summary);
  } catch (err) {
    summary?.failed(failureText(err), err instanceof UserError ? err.exitCode : ExitCode.failed);
    throw err;
  } finally {
    claimed?.release();
  }
}

async function rehearse(
  file: string,
  flags: RehearseFlags,
  json?: (text: string) => void,
  summary?: CommandSummary,
): Promise<number> {
  const force = await parseForce(flags.force);
  // every flag judged before anything loads or starts: a typo is a usage error (exit 2), never
  // silently replaced by a default nor an internal error from the simulator
  const { parseDataArg, parseFaultArgs, parseSeed, parseTimeScale } = await import("./sim.js");
  const timeScale = flags.timeScale === undefined ? undefined : parseTimeScale(flags.timeScale, { frozen: false });
  if (flags.data !== undefined) await parseDataArg(flags.data);
  const faults = await parseFaultArgs(flags.fault ?? []);
  const seed = parseSeed(flags.seed);
  const { prepareRehearsal, formatVerdict, rehearsalStandIns } = await import("../rehearse/index.js");
  const loaded = await loadForRun(file, flags, stderr, rehearsalStandIns(flags.keepHooks === true));
  if (loaded.stoodIn?.length)
    stderr(
      `rehearsal: not set, and not needed (only hooks or notifiers the rehearsal stands in for use them): ${loaded.stoodIn.join(", ")}`,
    );
  const namespaces = flags.namespaces ? await readNamespaces(flags.namespaces) : undefined;
  if (namespaces)
    stderr(
      `namespaces: ${namespaces.collections} collection(s), ${namespaces.bytes} bytes, as preflight read them (${flags.namespaces})`,
    );
  const reh = await prepareRehearsal(loaded, {
    ...(namespaces ? { namespaces } : {}),
    keepHooks: flags.keepHooks === true,
    ...(timeScale !== undefined ? { timeScale } : {}),
    ...(flags.data !== undefined ? { data: flags.data } : {}),
    ...(faults.length ? { faults } : {}),
    ...(seed !== undefined ? { seed } : {}),
  });
  const started = Date.now();
  try {
    const registry = await loadPluginsFor(reh.loaded, stderr);
    stderr(
      `simulator: ${reh.sim.instances.map((i) => i.url).join(", ")}; verifier ${reh.sim.verifierUrl}; time ×${reh.timeScale}`,
    );
    let verdict: Verdict | undefined;
    // the run's own word on its verification (src/steps/kit/earned.ts), for the verdict
    const run: { verified: boolean; unverified?: string; reversed?: string } = { verified: false };
    const finished = (e: RunEvent): void => {
      if (e.type !== "run.finished") return;
      run.verified = e.verified === true;
      if (e.unverified !== undefined) run.unverified = e.unverified;
      if (e.reversed !== undefined) run.reversed = e.reversed;
    };
    const code = await execute(reh.loaded, registry, flags, force, [finished, ...(summary ? [summary.listener] : [])], {
      mode: "rehearse",
      timeScale: reh.timeScale,
      yes: true,
      writesProbe: reh.writesProbe,
      ...(json ? { json } : {}),
      after: async (ui) => {
        verdict = await reh.verdict(run);
        // the json renderer's last line, after run.finished; other renderers ignore it
        ui.line("rehearsal.verdict", { ...verdict, wallMs: Date.now() - started });
      },
    });
    verdict ??= await reh.verdict(run);
    const exit = code !== ExitCode.ok ? code : verdict.safe ? ExitCode.ok : ExitCode.failed;
    for (const l of formatVerdict(verdict, Date.now() - started, code)) (json ? stderr : stdout)(l);
    summary?.finish(exit, verdict);
    return exit;
  } finally {
    await reh.close();
  }
}

/**
 * The namespace totals of a `syncbook preflight --list-namespaces --format json` output (the
 * whole document, or its `namespaces` value alone): a usage error, with the file, when it is not one.
 */
export async function readNamespaces(file: string): Promise<{ collections: number; bytes: number }> {
  const bad = (why: string): UserError =>
    new UserError(`${file}: ${why}`, {
      hint: "Give the output of `syncbook preflight <runbook> --list-namespaces --format json`.",
      exitCode: ExitCode.usage,
    });
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    throw bad(err instanceof SyntaxError ? `not JSON (${err.message})` : `cannot read it (${errorMessage(err)})`);
  }
  const outer = doc !== null && typeof doc === "object" ? (doc as Record<string, unknown>) : {};
  const list = (outer.format === 1 ? outer : outer.namespaces) as Record<string, unknown> | null | undefined;
  if (list === null) throw bad("preflight could not read the namespace set (`namespaces` is null)");
  if (!list || typeof list !== "object" || list.format !== 1) throw bad("not a namespace list of format 1");
  const totals = list.totals as Record<string, unknown> | undefined;
  const collections = totals?.collections;
  const bytes = totals?.bytes;
  if (typeof collections !== "number" || !Number.isInteger(collections) || collections < 0)
    throw bad("`totals.collections` is not a count");
  if (typeof bytes !== "number" || !Number.isFinite(bytes) || bytes < 0) throw bad("`totals.bytes` is not a size");
  if (collections === 0) throw bad("the namespace set is empty: the sync would copy nothing");
  return { collections, bytes };
}
