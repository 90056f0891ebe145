/**
 * `syncbook rehearse <runbook>`: the whole cutover against an in-process simulated fleet shaped
 * like the runbook, ending with a verdict: committed or not, writes lost, the verifier's result,
 * time taken. Confirms are answered yes (a rehearsal runs unattended); interlocks still apply.
 * Exit 1 when the run failed or the verdict is unsafe (writes lost, a fleet error, a failed
 * verification), 3 when an interlock stopped it (as `syncbook run`).
 */
import { ExitCode, UserError } from "../errors.js";
import type { Verdict } from "../rehearse/index.js";
import { execute, failureText } from "./run.js";
import type { CommandSummary } from "./step-summary.js";
import { loadForRun, loadPluginsFor, parseForce, stderr, stdout, type ExecuteFlags } from "./execute.js";

export interface RehearseFlags extends ExecuteFlags {
  keepHooks?: boolean;
  timeScale?: string;
  data?: string;
  fault?: string[];
  seed?: string;
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
  const loaded = await loadForRun(file, flags, stderr);
  const { prepareRehearsal, formatVerdict } = await import("../rehearse/index.js");
  const timeScale = flags.timeScale ? Number(flags.timeScale) : undefined;
  const reh = await prepareRehearsal(loaded, {
    keepHooks: flags.keepHooks === true,
    ...(timeScale && Number.isFinite(timeScale) && timeScale > 0 ? { timeScale } : {}),
    ...(flags.data ? { data: flags.data } : {}),
    ...(flags.fault?.length ? { faults: flags.fault } : {}),
    ...(flags.seed ? { seed: Number(flags.seed) } : {}),
  });
  const started = Date.now();
  try {
    const registry = await loadPluginsFor(reh.loaded, stderr);
    stderr(
      `simulator: ${reh.sim.instances.map((i) => i.url).join(", ")}; verifier ${reh.sim.verifierUrl}; time ×${reh.timeScale}`,
    );
    let verdict: Verdict | undefined;
    const code = await execute(reh.loaded, registry, flags, force, summary ? [summary.listener] : [], {
      mode: "rehearse",
      timeScale: reh.timeScale,
      yes: true,
      ...(json ? { json } : {}),
      after: async (ui) => {
        verdict = await reh.verdict();
        // the json renderer's last line, after run.finished; other renderers ignore it
        ui.line("rehearsal.verdict", { ...verdict, wallMs: Date.now() - started });
      },
    });
    verdict ??= await reh.verdict();
    for (const l of formatVerdict(verdict, Date.now() - started)) (json ? stderr : stdout)(l);
    const exit = code !== ExitCode.ok ? code : verdict.safe ? ExitCode.ok : ExitCode.failed;
    summary?.finish(exit, verdict);
    return exit;
  } finally {
    await reh.close();
  }
}
