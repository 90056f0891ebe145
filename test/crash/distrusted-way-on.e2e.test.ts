/**
 * A journal that cannot be trusted (edited: a line deleted; cut short of its witness) is refused
 * by `--resume`, `--abort` and `status` with the commands that help next, as one pastes them: the
 * fleet (`syncbook status <runbook> --journal-dir <dir>`), then, the fleet IDLE, the journal set
 * aside (`mv <journal> <journal>.set-aside`) and a new cutover (`syncbook run <runbook>
 * --journal-dir <dir> --new-cutover`, whose start checks the fleet is IDLE). A previous review:
 * the hints said "(syncbook status)" and "start a new run", no runbook, no `--journal-dir`, no way
 * past the journal that refused. Each command printed is run here, and accepted.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli } from "../support/run.js";
import { READY, START, cutoverYaml, fastSim, posts, tempDir } from "../support/crash-harness.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** A hook that fails the first time it runs (it leaves `mark`), and passes after. */
const FAIL_ONCE = `import { existsSync, writeFileSync } from "node:fs";
const mark = process.argv[2];
if (!existsSync(mark)) { writeFileSync(mark, ""); process.exit(1); }
`;

/** A run that acted (a hook ran) and failed before its start: the fleet stays IDLE. */
async function failedBeforeStart(sim: Simulator): Promise<{ dir: string; journal: string; lines: string[] }> {
  const dir = tempDir();
  writeFileSync(join(dir, "fail-once.mjs"), FAIL_ONCE);
  const node = JSON.stringify(process.execPath);
  const steps =
    `  - { id: prep, hook: { use: shell, with: { command: [${node}, "-e", "0"] } } }\n` +
    `  - { id: flaky, hook: { use: shell, with: { command: [${node}, ${JSON.stringify(join(dir, "fail-once.mjs"))}, ${JSON.stringify(join(dir, "failed"))}] } } }\n` +
    START +
    READY;
  writeFileSync(join(dir, "rb.yaml"), cutoverYaml(sim, { steps }));
  const first = await cli(["run", "rb.yaml", "--journal-dir", "jd", "--renderer", "simple"], { cwd: dir });
  expect(first.code, first.all).toBe(1);
  const folder = join(dir, "jd", "crash");
  const journal = join(
    folder,
    readdirSync(folder).find((f) => f.endsWith(".jsonl"))!,
  );
  return { dir, journal, lines: readFileSync(journal, "utf8").trimEnd().split("\n") };
}

/**
 * The hint's commands, exact, then each run: status answers, the journal is set aside, and the
 * new cutover runs to its end (its start sent once to the IDLE fleet).
 */
async function wayOnWorks(sim: Simulator, dir: string, journal: string, hint: string): Promise<void> {
  const status = "syncbook status rb.yaml --journal-dir jd";
  const aside = `mv ${journal} ${journal}.set-aside`;
  const run = "syncbook run rb.yaml --journal-dir jd --new-cutover";
  expect(hint).toContain(`See the fleet and check the application's writes: ${status};`);
  expect(hint).toContain(`start a new cutover, whose start checks the fleet is IDLE: ${aside}, then ${run};`);

  const st = await cli(status.split(" ").slice(1), { cwd: dir });
  expect(st.code, st.all).toBe(0);
  expect(st.stdout).toContain(`--resume would refuse it: `);
  expect(st.stdout).toContain(`hint: ${hint}`);
  execFileSync("sh", ["-c", aside], { cwd: dir });
  expect(existsSync(journal)).toBe(false);
  expect(posts(sim, "start")).toEqual([0]);
  const again = await cli([...run.split(" ").slice(1), "--renderer", "simple"], { cwd: dir });
  expect(again.code, again.all).toBe(0);
  expect(posts(sim, "start")).toEqual([1]);
}

const hintOf = (stderr: string): string => /\n {2}hint: (.*)\n/.exec(stderr)?.[1] ?? "";

describe("a journal that cannot be trusted: the way on as commands", () => {
  it("a line deleted: --resume and --abort refuse (exit 2) naming status, the set-aside and the new cutover with --journal-dir", async () => {
    s = await fastSim({ timeScale: 200 });
    const { dir, journal, lines } = await failedBeforeStart(s);
    const gone = lines.findIndex((l) => /"type":"hook\.finished"/.test(l));
    expect(gone).toBeGreaterThan(0);
    writeFileSync(journal, `${lines.filter((_, i) => i !== gone).join("\n")}\n`);

    const r = await cli(["run", "rb.yaml", "--journal-dir", "jd", "--resume", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toContain(`${journal}:${gone + 1}: gap at line ${gone + 1}`);
    const hint = hintOf(r.stderr);
    expect(hint).toMatch(/^the journal was changed after syncbook wrote it, .*: do not resume from it\. See the fleet/);
    const a = await cli(["run", "rb.yaml", "--journal-dir", "jd", "--abort", "--renderer", "simple"], { cwd: dir });
    expect(a.code, a.all).toBe(2);
    expect(hintOf(a.stderr)).toBe(hint);
    // a plain run is refused by the unfinished cutover: it offers no --resume or --abort that refuse
    const plain = await cli(["run", "rb.yaml", "--journal-dir", "jd", "--renderer", "simple"], { cwd: dir });
    expect(plain.code, plain.all).toBe(2);
    expect(plain.stderr).toContain("the runbook's last cutover did not finish: ");
    expect(hintOf(plain.stderr)).toBe(`--resume and --abort refuse its journal: ${hint}`);
    await wayOnWorks(s, dir, journal, hint);
  }, 120_000);

  it("cut short of its witness: --resume refuses (exit 2) with the same commands", async () => {
    s = await fastSim({ timeScale: 200 });
    const { dir, journal, lines } = await failedBeforeStart(s);
    writeFileSync(journal, `${lines.slice(0, -2).join("\n")}\n`);

    const r = await cli(["run", "rb.yaml", "--journal-dir", "jd", "--resume", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toContain(`cannot trust ${journal}: the journal is shorter than its last fsynced point`);
    const hint = hintOf(r.stderr);
    expect(hint).toMatch(/^what the cut lines said .* is unknown; do not resume from it\. See the fleet/);
    await wayOnWorks(s, dir, journal, hint);
  }, 120_000);
});
