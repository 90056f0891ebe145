/**
 * A `--new-cutover` whose last cutover's journal is cut short (lines lost off its end, as its
 * witness tells) goes on when its range sends no start, commit or reverse; but that journal's lost
 * lines may have held a commit still on its way, so no undo of this run's write stop turns writes
 * back on for it (an outside review of 2026-12-01: the unwind read what was left of the journal as
 * whole, saw no commit, and turned writes on). Built CLI, simulator, a cutover-only runbook.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cleanedUpAfterAll, cutoverOnlyAfterAnUndo, posts } from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

describe("--new-cutover after a journal cut short", () => {
  it("its write stop's undo keeps writes stopped, naming the journal: what it lost cannot be told", async () => {
    // stops writes, fails at the confirm (no terminal), undoes the write stop
    const { sim, run, journal } = await cutoverOnlyAfterAnUndo(made);
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
