/**
 * A `--new-cutover` whose last cutover's journal is cut short (lines lost off its end, as its
 * witness tells) goes on when its range sends no start, commit or reverse; but that journal's lost
 * lines may have held a commit still on its way, so no undo of this run's write stop turns writes
 * back on for it (an outside review of 2026-12-01: the unwind read what was left of the journal as
 * whole, saw no commit, and turned writes on). Built CLI, simulator, a cutover-only runbook.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";
import {
  CLI_CUTOVER_DEFAULTS,
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  cutoverYaml,
  fastSim,
  posts,
  READY,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

describe("--new-cutover after a journal cut short", () => {
  it("its write stop's undo keeps writes stopped, naming the journal: what it lost cannot be told", async () => {
    const sim = await fastSim({ timeScale: 100 });
    made.sims.push(sim);
    const dir = tempDir();
    made.dirs.push(dir);
    const go = '  - { id: go, confirm: "Commit?" }\n';
    writeFileSync(
      join(dir, "rb.yaml"),
      cutoverYaml(sim, {
        defaults: CLI_CUTOVER_DEFAULTS,
        steps: READY + stopVia(sim.verifierUrl) + go + COMMIT + COMMITTED,
      }),
    );
    const run = (...a: string[]) => cli(["run", "rb.yaml", "--renderer", "simple", ...a], { cwd: dir });
    const started = await fetch(`${sim.instances[0]!.url}/api/v1/start`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ source: "cluster0", destination: "cluster1" }),
    });
    expect(started.ok).toBe(true);
    // stops writes, fails at the confirm (no terminal), undoes the write stop
    const first = await run();
    expect(first.code, first.all).toBe(1);
    expect(sim.control.state().writes.enabled).toBe(true);
    const folder = join(dir, ".syncbook", "crash");
    const journal = join(
      folder,
      readdirSync(folder).find((f) => f.endsWith(".jsonl"))!,
    );
    // its last lines lost (its end among them): shorter than its witness says
    const lines = readFileSync(journal, "utf8").trimEnd().split("\n");
    writeFileSync(journal, `${lines.slice(0, -4).join("\n")}\n`);

    // sends no commit: goes on; stops writes, fails at the confirm again: the undo is due
    const again = await run("--new-cutover", "--to", "go");
    expect(again.code, again.all).not.toBe(0);
    expect(again.stderr).toContain("cutover: starting a new cutover (--new-cutover)");
    expect(sim.control.state().writes.enabled, "writes stay stopped").toBe(false);
    expect(again.stderr).toContain(journal);
    expect(again.stderr).toContain(
      "whether an earlier cutover's commit may still take effect on the fleet cannot be told",
    );
    expect(posts(sim, "commit")).toEqual([0]);
  }, 120_000);
});
