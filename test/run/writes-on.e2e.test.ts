/**
 * Issue 42, invariant 1: "Nothing turns application writes on while a commit may have reached any
 * instance: before any undo of a write stop, read the fleet; if an instance is COMMITTING,
 * COMMITTED or cannot be read, refuse to turn writes on and say what to do."
 *
 * The commit that reached the fleet is one this cutover's journal does not know: sent by hand
 * (the test posts it to every instance) while the runner waits in a hook, or after it died. Every
 * entry point that can undo a write stop: the unwind of a failing run, Ctrl-C, `--resume`'s
 * reopened undos, a `--from` run, `--abort`. And an instance that cannot be read: refused as well,
 * with `--abort` named as the way on, which then turns writes on once the fleet reads whole.
 *
 * The simulator is at 1.8.0: source writes after commit are lost (service facts, "From 1.17 the
 * service fails the migration if it sees writes on the source during commit (before, such writes
 * could be lost)").
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli, type CliResult, type CliRun } from "../support/run.js";
import { until } from "../support/sim.js";
import {
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  cutoverYaml,
  DRAINED,
  fastSim,
  posts,
  READY,
  START,
  tempDir,
} from "../support/crash-harness.js";

const { sims, dirs } = cleanedUpAfterAll();

/** Writes `<mark>.<n>` when it starts (n counts its runs), then waits for `<mark>.go` and fails. */
const HOLD = `import { existsSync, readFileSync, writeFileSync } from "node:fs";
const mark = process.argv[2];
let n = 1;
while (existsSync(mark + "." + n)) n++;
writeFileSync(mark + "." + n, String(process.pid));
while (!existsSync(mark + ".go")) await new Promise((r) => setTimeout(r, 50));
process.exit(3);
`;

interface Case {
  s: Simulator;
  dir: string;
  file: string;
  args: string[];
  env: Record<string, string>;
  mark: string;
}

async function setUp(): Promise<Case> {
  const s = await fastSim({ instances: 2, timeScale: 100 });
  sims.push(s);
  const dir = tempDir();
  dirs.push(dir);
  writeFileSync(join(dir, "hold.mjs"), HOLD);
  const mark = join(dir, "held");
  const node = JSON.stringify(process.execPath);
  const url = JSON.stringify(s.verifierUrl);
  const steps =
    START +
    READY +
    `  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: ${url} }, undo: { use: sim-writes, with: { url: ${url}, enabled: true } } } }\n` +
    `  - { id: hold, hook: { use: shell, with: { command: [${node}, ${JSON.stringify(join(dir, "hold.mjs"))}, ${JSON.stringify(mark)}] } } }\n` +
    DRAINED +
    COMMIT +
    COMMITTED;
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(s, {
      steps,
      defaults: "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 2s, retry: { giveUpAfter: 10s } }",
    }),
  );
  return {
    s,
    dir,
    file,
    mark,
    args: ["run", file, "--renderer", "simple", "--journal-dir", join(dir, "journals")],
    env: { SYNCBOOK_STATE_DIR: join(dir, "state") },
  };
}

/** A commit the journal does not know: posted by hand to every instance, then waited for. */
async function commitByHand(s: Simulator): Promise<void> {
  await Promise.all(
    s.instances.map((i) =>
      fetch(`${i.url}/api/v1/commit`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
    ),
  );
  await until(
    () => s.control.state().instances.every((i) => i.state === "COMMITTING" || i.state === "COMMITTED"),
    30_000,
  );
}

/** The runner killed (kill -9) at `hold`; its hook process, which outlives it, killed too (a resume would wait it out). */
async function killAtHold(c: Case, run: CliRun): Promise<CliResult> {
  run.child.kill("SIGKILL");
  const r = await run.done;
  process.kill(Number(readFileSync(`${c.mark}.1`, "utf8")), "SIGKILL");
  return r;
}

/** Starts the run and waits until its `hold` hook runs for the `n`-th time. */
async function atHold(c: Case, extra: string[] = [], n = 1): Promise<CliRun> {
  const run = startCli([...c.args, ...extra], { cwd: c.dir, env: c.env });
  await until(() => existsSync(`${c.mark}.${n}`), 60_000);
  return run;
}

/** Writes stayed stopped, nothing was lost, and the output says why and what to do. */
function keptOff(c: Case, r: CliResult, where: string): void {
  expect(r.all, where).toMatch(
    /the undo of step 3 "stop-writes" was not run, so application writes stay STOPPED: a commit has taken effect on the fleet \(sync0 is COMMITT(ING|ED)/,
  );
  expect(r.all, where).toMatch(
    /hint: Do not turn the source's writes back on\. See where the fleet is \(syncbook status /,
  );
  // no other way on is offered (a --resume would meet a fleet the journal does not explain)
  expect(r.stderr, where).not.toMatch(/resume with:|run again with:/);
  const st = c.s.control.state();
  expect(st.writes.enabled, where).toBe(false);
  expect(st.writes.lost, where).toBe(0);
  expect(posts(c.s, "commit"), where).toEqual([1, 1]);
}

const transcript = (runs: [string, CliResult][]): string =>
  runs.map(([name, r]) => `--- ${name}: exit ${r.code}\n${r.all}`).join("\n");

describe("no undo of a write stop turns writes on once a commit reached the fleet", () => {
  it("the unwind of a failing run", async () => {
    const c = await setUp();
    const run = await atHold(c);
    await commitByHand(c.s);
    writeFileSync(`${c.mark}.go`, "");
    const r = await run.done;
    const where = transcript([["run", r]]);
    expect(r.code, where).toBe(1);
    keptOff(c, r, where);
  }, 90_000);

  it("Ctrl-C", async () => {
    const c = await setUp();
    const run = await atHold(c);
    await commitByHand(c.s);
    run.child.kill("SIGINT");
    const r = await run.done;
    const where = transcript([["run (Ctrl-C)", r]]);
    expect(r.code, where).toBe(130);
    keptOff(c, r, where);
  }, 90_000);

  it("--abort after the runner died", async () => {
    const c = await setUp();
    const first = await killAtHold(c, await atHold(c));
    await commitByHand(c.s);
    const summary = join(c.dir, "summary.md");
    const out = join(c.dir, "out");
    const r = await cli([...c.args, "--abort", "--report", out], {
      cwd: c.dir,
      env: { ...c.env, GITHUB_STEP_SUMMARY: summary },
    });
    const where = transcript([
      ["run (killed)", first],
      ["--abort", r],
    ]);
    expect(r.code, where).toBe(1);
    expect(r.all, where).toMatch(/aborted by the operator \(--abort\), but nothing was undone/);
    keptOff(c, r, where);
    // nothing undone on purpose, not an undo that failed (the summary said "AN UNDO FAILED" here,
    // where someone reading it might turn writes on by hand), in the summary and the report alike
    expect(readFileSync(summary, "utf8"), where).toMatch(
      /^### syncbook run crash: ⛔ ABORTED, NOTHING UNDONE: WRITES STAY STOPPED/,
    );
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html, where).toMatch(/<title>ABORTED, NOTHING UNDONE: WRITES STAY STOPPED · /);
    expect(html, where).not.toMatch(/UNDO FAILED|NOT EVERY UNDO/);
  }, 90_000);

  it("--resume's reopened undo", async () => {
    const c = await setUp();
    const first = await killAtHold(c, await atHold(c));
    // the resumed run holds again at `hold`, and the commit reaches the fleet then
    const resumed = await atHold(c, ["--resume"], 2);
    await commitByHand(c.s);
    writeFileSync(`${c.mark}.go`, "");
    const r = await resumed.done;
    const where = transcript([
      ["run (killed)", first],
      ["--resume", r],
    ]);
    expect(r.code, where).toBe(1);
    keptOff(c, r, where);
  }, 90_000);

  it("--from stop-writes", async () => {
    const c = await setUp();
    const run = await atHold(c);
    run.child.kill("SIGTERM");
    const first = await run.done;
    const again = await atHold(c, ["--from", "stop-writes"], 2);
    await commitByHand(c.s);
    writeFileSync(`${c.mark}.go`, "");
    const r = await again.done;
    const where = transcript([
      ["run (Ctrl-C: undone)", first],
      ["--from stop-writes", r],
    ]);
    expect(r.code, where).toBe(1);
    keptOff(c, r, where);
  }, 90_000);
});

describe("an instance that cannot be read keeps writes stopped", () => {
  it("the run says so and names --abort, which turns writes on once every instance answers", async () => {
    const c = await setUp();
    const run = await atHold(c);
    c.s.control.addFault("down=1");
    writeFileSync(`${c.mark}.go`, "");
    const r = await run.done;
    const where1 = transcript([["run", r]]);
    expect(r.code, where1).toBe(1);
    expect(r.all, where1).toMatch(
      /the undo of step 3 "stop-writes" was not run, so application writes stay STOPPED: the fleet could not be read as a whole before commit \(sync1 is unreachable/,
    );
    expect(r.all, where1).toMatch(
      /turn writes back on with: syncbook run .* --abort \(it reads the fleet again first\)/,
    );
    expect(c.s.control.state().writes.enabled, where1).toBe(false);

    c.s.control.clearFaults();
    const abort = await cli([...c.args, "--abort"], { cwd: c.dir, env: c.env });
    const where = transcript([
      ["run", r],
      ["--abort", abort],
    ]);
    expect(abort.code, where).toBe(0);
    expect(abort.all, where).toMatch(/undo fleet-state: no commit has taken effect/);
    expect(c.s.control.state().writes.enabled, where).toBe(true);
    expect(posts(c.s, "commit"), where).toEqual([0, 0]);
  }, 90_000);
});
