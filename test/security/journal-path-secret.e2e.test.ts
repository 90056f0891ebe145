/**
 * A journal's path holds a secret when `--journal-dir` names a folder that does (a runbook's name
 * cannot: the loader refuses `${env.*}` there, `secret-in-name`, test/runbook/placeholders*): what
 * `run`, `status` and `watch` print of it, their refusals (a `UserError`, printed by src/cli.ts)
 * included, goes through the runbook's redactor (`loaded.redact`), as every other output does.
 */
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli, type CliResult } from "../support/run.js";
import { READY, START, cutoverYaml, fastSim, tempDir } from "../support/crash-harness.js";

const SECRET = `Tenant7s3cret${Date.now().toString(36)}`;
const env = { SB_TENANT: SECRET };
// the runbook reads the secret (so its redactor knows it) in a hook that fails: the cutover stays unfinished
const FAIL =
  '  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(1)", "${env.SB_TENANT}"] } } }\n';

describe("a journal path made of a secret", () => {
  let sim: Simulator | undefined;
  afterAll(async () => {
    await sim?.close();
  });

  it("is never printed: run's journal line, its refusals (the unfinished cutover, a witness lost, a --journal-dir in the way), status and watch", async () => {
    sim = await fastSim({ instances: 1, timeScale: 100 });
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    writeFileSync(file, cutoverYaml(sim, { name: "sales", steps: START + READY + FAIL }));
    const journals = join(dir, `j-${SECRET}`);
    const run = (...a: string[]): Promise<CliResult> =>
      cli(["run", file, "--renderer", "simple", ...a], { cwd: dir, env });
    const inJournals = (...a: string[]): Promise<CliResult> => run("--journal-dir", journals, ...a);
    const outputs: CliResult[] = [];
    const labels: string[] = [];
    const seen = (r: CliResult, label: string): CliResult => (outputs.push(r), labels.push(label), r);

    const first = seen(await inJournals(), "run");
    expect(first.code, first.all).toBe(1);
    expect.soft(first.all).toMatch(/journal: .*\/j-\*\*\*\/sales\/[^/]+\.jsonl/);
    // a UserError that names the journal: the cutover that did not finish
    const again = seen(await inJournals(), "the unfinished cutover");
    expect(again.code, again.all).toBe(2);
    expect
      .soft(again.all)
      .toMatch(/syncbook: the runbook's last cutover did not finish: .*\(journal .*\/j-\*\*\*\/sales\//);
    // a --journal-dir whose path holds the secret, where a file is in the way: message and hint
    const inTheWay = join(dir, `k-${SECRET}`);
    writeFileSync(inTheWay, "not a folder");
    const io = seen(await run("--journal-dir", inTheWay), "--journal-dir in the way");
    expect(io.code, io.all).toBe(2);
    expect.soft(io.all).toMatch(/syncbook: cannot create the journal folder .*\/k-\*\*\*/);
    expect.soft(io.all).toMatch(/hint: .*\/k-\*\*\*/);
    // the witness lost: --resume refuses, naming the journal and its witness
    const folder = join(journals, "sales");
    for (const f of readdirSync(folder)) if (f.endsWith(".witness")) rmSync(join(folder, f));
    const resume = seen(await inJournals("--resume"), "--resume, its witness lost");
    expect(resume.code, resume.all).toBe(2);
    expect.soft(resume.all).toMatch(/syncbook: cannot trust .*\/j-\*\*\*\/sales\//);
    const status = seen(await cli(["status", file, "--journal-dir", journals], { cwd: dir, env }), "status");
    expect.soft(status.all).toMatch(/journal: .*\/j-\*\*\*\/sales\//);
    const watching = startCli(["watch", file, "--journal-dir", journals, "--no-notify"], { cwd: dir, env });
    await watching.waitFor(/following/, 30_000);
    watching.child.kill("SIGINT");
    const watch = seen(await watching.done, "watch");
    expect.soft(watch.all).toMatch(/following .*\/j-\*\*\*\/sales/);

    outputs.forEach((r, i) => expect.soft(r.all, labels[i]).not.toContain(SECRET));
  }, 120_000);
});
