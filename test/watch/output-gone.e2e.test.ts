/**
 * `syncbook watch` goes on when its output goes away (as a run does: test/run/output-gone.e2e.test.ts):
 * its stdout and stderr pipes closed (a `| tee` stopped, a terminal gone), a runner killed (kill -9)
 * in the write-stop window is still told to the runbook's notifiers by the dead-man's switch, and
 * watch is still running after it. Before, the alarm's own line on stderr met the closed pipe and
 * the watch process crashed (EPIPE) at the moment it was there for.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { startCli, type CliRun } from "../support/run.js";
import {
  COMMIT,
  CLI_CUTOVER_DEFAULTS,
  DRAINED,
  READY,
  START,
  cutoverYaml,
  fastSim,
  stopVia,
  tempDir,
  until,
} from "../support/crash-harness.js";

describe("syncbook watch with its output gone", () => {
  let s: Simulator | undefined;
  let dir = "";
  const procs: CliRun[] = [];

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("tells the notifiers of a runner killed in the window, and keeps running", async () => {
    s = await fastSim({ instances: 1, timeScale: 100, graceMs: 120_000 });
    dir = tempDir("syncbook-watch-out-");
    const file = join(dir, "rb.yaml");
    const told = join(dir, "told.jsonl");
    const hold = `  - { id: hold, hook: { use: shell, with: { command: [node, -e, "console.log('holding'); setTimeout(() => {}, 4000)"] } } }\n`;
    writeFileSync(
      file,
      cutoverYaml(s, {
        name: "watched",
        defaults: CLI_CUTOVER_DEFAULTS,
        head: `notify:\n  - { use: file, with: { path: ${told} }, on: [run.finished] }\n`,
        steps: START + READY + stopVia(s.verifierUrl) + hold + DRAINED + COMMIT,
      }),
    );
    const watch = startCli(["watch", file, "--no-live"], { cwd: dir });
    procs.push(watch);
    await watch.waitFor(/syncbook watch: http:\/\/127\.0\.0\.1:\d+\//);
    watch.child.stdout!.destroy();
    watch.child.stderr!.destroy();
    const runner = startCli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    procs.push(runner);
    await runner.waitFor(/holding/, 60_000);
    runner.child.kill("SIGKILL");
    await runner.done;
    await until(
      "the notifiers hear the runner is lost",
      () => existsSync(told) && readFileSync(told, "utf8").includes("runner.lost"),
      30_000,
    );
    // the alarm's own lines went to the closed pipes: watch is still there
    await new Promise((r) => setTimeout(r, 1000));
    expect(watch.child.exitCode, "watch still running").toBeNull();
    watch.child.kill("SIGINT");
    expect((await watch.done).code).toBe(0);
  }, 120_000);
});
