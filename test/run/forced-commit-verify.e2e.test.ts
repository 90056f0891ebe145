/**
 * A commit let through by a forced `writes-stopped` interlock (the write stop's hook failed, and
 * the operator went on past it with `--force=writes-stopped`): the application's writes were not
 * known stopped for it. Before, the verify step counted that commit as writes stopped, sent
 * writesOff and the run ended "verified" (an outside conformance review); the verifier's writesOff
 * goes "after writes on the source have stopped" (its README workflow), and before service 1.20
 * the service does not block the source's writes after commit. The commit's forced interlock is
 * journaled, so a `--resume` and a `--from verify` know it too.
 */
import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, watchState } from "../support/run.js";
import {
  CHECK,
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  VERIFY,
  cleanedUpAfterAll,
  cutoverYaml,
  fastSim,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/** A write stop whose hook always fails: the application's writes are never stopped. */
const FAILING_STOP =
  '  - { id: stop-writes, stopWrites: { use: shell, with: { command: [node, -e, "process.exit(1)"] }, undo: { use: shell, with: { command: [node, -e, "0"] } } } }\n';

async function cutover(): Promise<{
  file: string;
  dir: string;
  run: (...a: string[]) => ReturnType<typeof cli>;
  writesOff: () => number;
  /** The write stop fails; then the application's writes stop another way, which syncbook is not told. */
  failedStop: () => Promise<void>;
  /** The ways on `status --json` offers (`journal.next.runs[].args`). */
  nextRuns: () => Promise<string[]>;
}> {
  const sim = await fastSim({ instances: 1, timeScale: 100, graceMs: 120_000 });
  made.sims.push(sim);
  const dir = tempDir();
  made.dirs.push(dir);
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(sim, {
      defaults: CLI_CUTOVER_DEFAULTS,
      steps: START + READY + CHECK + FAILING_STOP + DRAINED + COMMIT + COMMITTED + VERIFY,
    }),
  );
  const run = (...a: string[]): ReturnType<typeof cli> =>
    cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
  return {
    file,
    dir,
    run,
    writesOff: () => sim.control.counts().verifier["POST /api/v1/writesOff"] ?? 0,
    nextRuns: async () => {
      const st = await cli(["status", file, "--json"], { cwd: dir });
      const j = JSON.parse(st.stdout) as { journal: { next?: { runs: { args: string }[] } } };
      return j.journal.next?.runs.map((r) => r.args) ?? [];
    },
    failedStop: async () => {
      const first = await run();
      expect(first.code, first.all).toBe(1);
      expect(first.all).toMatch(/step stop-writes failed/);
      // the verifier's result then comes out clean: before, the run said "verified" on it
      sim.control.setWrites({ enabled: false });
    },
  };
}

/** A text as a regular expression matches it. */
const esc = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const REFUSED =
  "refused (writes-stopped): writesOff tells the verifier that writes have stopped, and this sync's commit was sent with the application's writes not known stopped (its writes-stopped interlock was forced), and no stopWrites step has held since";
const FORCED_OFF =
  /not verified: this cutover's writesOff was sent with the application's writes not known stopped \(its writes-stopped interlock was forced\)/;

describe("a commit let through by a forced writes-stopped interlock", () => {
  // a review: the --resume --allow-changed-runbook offered left out a secret --var (the verifier's
  // URL with a password), and, the runbook edited, that run read its default: another verifier
  it("the way on with --allow-changed-runbook names the cutover's values, a secret one masked: status, the page, the run's end", async () => {
    const sim = await fastSim({ instances: 1, timeScale: 100, graceMs: 120_000 });
    made.sims.push(sim);
    const dir = tempDir();
    made.dirs.push(dir);
    const file = join(dir, "rb.yaml");
    const secretUrl = sim.verifierUrl.replace("http://", "http://op:Sup3rSecretPw@");
    writeFileSync(
      file,
      cutoverYaml(sim, {
        defaults: CLI_CUTOVER_DEFAULTS,
        head: 'vars: { verifier: "http://127.0.0.1:9" }\n',
        steps: START + READY + CHECK + FAILING_STOP + DRAINED + COMMIT + COMMITTED + VERIFY,
      }).replace(`verifier: "${sim.verifierUrl}"`, 'verifier: "${vars.verifier}"'),
    );
    const run = (...a: string[]) =>
      cli(["run", file, "--renderer", "simple", "--var", `verifier=${secretUrl}`, ...a], { cwd: dir });
    expect((await run()).code).toBe(1);
    sim.control.setWrites({ enabled: false });
    expect((await run("--from", "drained", "--to", "committed", "--force", "writes-stopped", "--yes")).code).toBe(0);
    const again = await run("--resume", "--force", "writes-stopped", "--yes");
    expect(again.code, again.all).toBe(1);
    const kept = `--var 'verifier=http://***@${sim.verifierUrl.slice("http://".length).replace(/\/$/, "")}'`;
    expect(again.all).toContain(
      `  once the hint above is done, resume with: syncbook run ${file} ${kept} --resume --allow-changed-runbook (a --var shown with *** holds a secret: set each as that run did)`,
    );
    // and the hint's own command names it too (it named the runbook alone: that run read the default)
    expect(again.all).toContain(
      `then \`syncbook run ${file} ${kept} --resume --allow-changed-runbook\` (a --var shown with *** holds a secret: set each as that run did): this step sends a new check and writesOff.`,
    );
    // not also "these commands leave out --var verifier": it is shown, masked
    expect(again.all).not.toMatch(/these commands leave out/);
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain(`    syncbook run ${file} --resume --allow-changed-runbook ${kept}\n`);
    const sj = await cli(["status", file, "--json"], { cwd: dir });
    const next = (JSON.parse(sj.stdout) as { journal: { next?: { runs: { args: string }[] } } }).journal.next;
    expect(next?.runs.map((r) => r.args)).toEqual([`--resume --allow-changed-runbook ${kept}`]);
    const page = (await watchState([file], dir)).runner;
    expect(page.next).toMatch(
      new RegExp(
        `^syncbook run ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} --resume --allow-changed-runbook ${kept.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} {3}\\(first, as step 8 verify's failure said: .*a --var shown with \\*\\*\\* holds a secret`,
      ),
    );
    expect(again.all + st.all + sj.all + JSON.stringify(page)).not.toContain("Sup3rSecretPw");
  }, 120_000);

  it('in the run that forced it, verify\'s writesOff is forced too: not verified (it said "committed · verified")', async () => {
    const { run, writesOff, failedStop } = await cutover();
    await failedStop();
    const forced = await run("--from", "drained", "--force", "writes-stopped", "--yes");
    expect(forced.code, forced.all).toBe(1);
    expect(forced.all).toMatch(FORCED_OFF);
    expect(forced.all).not.toMatch(/■ run ok|· verified/);
    expect(writesOff()).toBe(1);
  }, 120_000);

  it("a later run knows it from the journal: --resume and --from verify are refused (exit 3, nothing sent), forced it ends not verified", async () => {
    const { file, dir, run, writesOff, failedStop, nextRuns } = await cutover();
    await failedStop();
    // past the failed write stop, forced at the commit: the run stops after COMMITTED (--to)
    const forced = await run("--from", "drained", "--to", "committed", "--force", "writes-stopped", "--yes");
    expect(forced.code, forced.all).toBe(0);
    expect(forced.all).toMatch(/overridden by --force=writes-stopped/);
    const resumed = await run("--resume", "--yes");
    expect(resumed.code, resumed.all).toBe(3);
    expect(resumed.all).toContain(REFUSED);
    expect(resumed.all).toContain(
      "--resume --force=writes-stopped`: this step runs, and the cutover stays not verified",
    );
    expect(resumed.all).not.toMatch(/· verified/);
    // its end names the refusal's way on, not a write stop missing from the journals (a reread)
    expect(resumed.all).toContain(
      "  the commit was sent past a forced writes-stopped interlock: a write stop in any journal no longer counts for the verifier; the hint above names the way on",
    );
    expect(resumed.all).not.toContain("no write stop of this cutover is in the journals");
    expect(writesOff()).toBe(0);
    // status offers the --resume the refusal names, not a plain one (refused again: a review)
    expect(await nextRuns()).toEqual(["--resume --allow-changed-runbook"]);
    // a run after it that sends nothing and runs no hook (a --from x --to x: it only reads):
    // --resume passes its journal over and meets that refusal again. Its end, status and the page
    // name the --resume the refusal needs (a review: the end and the page offered a plain one,
    // refused again, and the page named that run's step as the last)
    const idle = await run("--from", "committed", "--to", "committed", "--yes");
    expect(idle.code, idle.all).toBe(0);
    expect(idle.all).toMatch(
      new RegExp(
        `  stopped at --to committed: the cutover goes on with: syncbook run ${esc(file)} --resume --allow-changed-runbook \\(syncbook status ${esc(file)} shows where; first, as step 8 verify's failure said: .*writesStoppedExternally`,
      ),
    );
    expect(idle.all).not.toMatch(/goes on with: \S+ \S+ --resume \(/);
    expect(await nextRuns()).toEqual(["--resume --allow-changed-runbook"]);
    const page = (await watchState([file], dir)).runner;
    expect(page.next).toMatch(
      new RegExp(
        `^syncbook run ${esc(file)} --resume --allow-changed-runbook {3}\\(first, as step 8 verify's failure said: `,
      ),
    );
    expect(page.left).toContain("last step: 8 verify, failed");
    expect(writesOff()).toBe(0);
    // a --from run that continues the cutover knows it too
    const from = await run("--from", "verify", "--yes");
    expect(from.code, from.all).toBe(3);
    expect(from.all).toContain(REFUSED);
    expect(writesOff()).toBe(0);
    // forced: writesOff goes, and its result verifies nothing
    const again = await run("--resume", "--force", "writes-stopped", "--yes");
    expect(again.code, again.all).toBe(1);
    expect(again.all).toMatch(FORCED_OFF);
    expect(again.all).not.toMatch(/· verified/);
    expect(writesOff()).toBe(1);
    // its end and status: the --resume its hint names, once the hint is done; not a plain one
    expect(again.all).toContain(
      `  once the hint above is done, resume with: syncbook run ${file} --resume --allow-changed-runbook`,
    );
    expect(again.all).not.toMatch(/resume with: \S+ --resume$/m);
    expect(await nextRuns()).toEqual(["--resume --allow-changed-runbook"]);
    // the stop declared, the verifier not restarted: its restart and a plain --resume (a review:
    // the hint said to declare it again); the run's end says that hint once, not twice
    writeFileSync(file, readFileSync(file, "utf8").replace("\nsteps:\n", "\nwritesStoppedExternally: true\nsteps:\n"));
    const declared = await run("--resume", "--allow-changed-runbook", "--yes");
    expect(declared.code, declared.all).toBe(1);
    expect(declared.all).toContain(
      "The runbook declares the application's writes stopped (`writesStoppedExternally: true`)",
    );
    const end = declared.all.slice(declared.all.lastIndexOf("■ run"));
    expect(end).toContain(`\n  resume with: syncbook run ${file} --resume (first, do what the hint above says)\n`);
    expect(end).not.toContain("The runbook declares");
    expect(await nextRuns()).toEqual(["--resume"]);
  }, 120_000);

  it("the refusal's first way on: writes declared stopped, the --resume it names verifies", async () => {
    const { file, run, failedStop } = await cutover();
    await failedStop();
    const forced = await run("--from", "drained", "--to", "committed", "--force", "writes-stopped", "--yes");
    expect(forced.code, forced.all).toBe(0);
    const resumed = await run("--resume", "--yes");
    expect(resumed.code, resumed.all).toBe(3);
    expect(resumed.all).toContain(
      `declare \`writesStoppedExternally: true\` in the runbook, then \`syncbook run ${file} --resume --allow-changed-runbook\``,
    );
    writeFileSync(file, readFileSync(file, "utf8").replace("\nsteps:\n", "\nwritesStoppedExternally: true\nsteps:\n"));
    const declared = await run("--resume", "--allow-changed-runbook", "--yes");
    expect(declared.code, declared.all).toBe(0);
    expect(declared.all).toMatch(/■ run ok .*· committed · verified/);
  }, 120_000);
});
