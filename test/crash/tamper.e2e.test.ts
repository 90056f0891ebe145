/**
 * Issue 12, item 4, the reproduction: "Deleting two lines (an undo) made `--resume` skip
 * `stopWrites` and commit with writes on (42,726 lost)." A real run stops writes, fails before
 * commit, and undoes the write stop; the two undo lines are deleted from its journal; `--resume`
 * must refuse (exit 2), naming the line, and send nothing: the simulator counts no commit.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli } from "../support/run.js";
import {
  COMMIT,
  COMMITTED,
  READY,
  START,
  cutoverYaml,
  fastSim,
  posts,
  stopVia,
  tempDir,
  totalPosts,
} from "../support/crash-harness.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** A real run that stops writes, fails before commit (a confirm without a terminal) and undoes the stop. */
async function undoneRun(sim: Simulator): Promise<{ dir: string; file: string; journal: string; lines: string[] }> {
  const dir = tempDir();
  const file = join(dir, "rb.yaml");
  const go = '  - { id: go, confirm: "Commit?" }\n';
  writeFileSync(
    file,
    cutoverYaml(sim, {
      defaults: "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 2s, retry: { giveUpAfter: 3s } }",
      steps: START + READY + stopVia(sim.verifierUrl) + go + COMMIT + COMMITTED,
    }),
  );
  const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
  expect(first.code, first.all).toBe(1);
  expect(sim.control.state().writes.enabled).toBe(true);
  const folder = join(dir, ".syncbook", "crash");
  const journal = join(
    folder,
    readdirSync(folder).find((f) => f.endsWith(".jsonl"))!,
  );
  return { dir, file, journal, lines: readFileSync(journal, "utf8").trimEnd().split("\n") };
}

describe("a tampered journal", () => {
  it("the undo's two lines deleted: --resume refuses at the gap (exit 2), no command is sent, writes stay as they are", async () => {
    s = await fastSim({ instances: 2, timeScale: 100 });
    const { dir, file, journal, lines } = await undoneRun(s);
    const undo = lines.flatMap((l, i) =>
      /"type":"hook\.(started|finished)"/.test(l) && l.includes('"undo":true') ? [i] : [],
    );
    expect(undo).toHaveLength(2);
    writeFileSync(journal, `${lines.filter((_, i) => !undo.includes(i)).join("\n")}\n`);
    const before = totalPosts(s);

    const r = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toContain(`${journal}:${undo[0]! + 1}: gap at line ${undo[0]! + 1}: `);
    expect(r.stderr).toMatch(/: \d line\(s\) are missing/);
    expect(r.stderr).toMatch(/hint: the journal was changed after syncbook wrote it/);
    expect(totalPosts(s), "a refused resume sent a command").toBe(before);
    expect(posts(s, "commit")).toEqual([0, 0]);
    expect(s.control.state().writes.lost).toBe(0);
  });

  // issue 30, "a shortened journal": "Delete the journal's tail from the undo on (a storage
  // snapshot restored, .syncbook/ copied around): --resume believes writes are stopped, commits
  // with writes on (156,070 lost) and exits 0. The hash chain cannot see lines cut off the end."
  it("the tail cut from the undo on: --resume refuses by the journal's witness (exit 2), sends nothing; status says so with a hint", async () => {
    s = await fastSim({ instances: 2, timeScale: 100 });
    const { dir, file, journal, lines } = await undoneRun(s);
    const undo = lines.findIndex((l) => /"type":"hook\.started"/.test(l) && l.includes('"undo":true'));
    expect(undo).toBeGreaterThan(0);
    // what is left reads as a crash right after the write stop: writes stopped, commit next
    writeFileSync(journal, `${lines.slice(0, undo).join("\n")}\n`);
    const before = totalPosts(s);

    const r = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toContain(
      `cannot trust ${journal}: the journal is shorter than its last fsynced point: it ends at seq `,
    );
    expect(r.stderr).toMatch(/hint: what the cut lines said .* is unknown; do not resume from it/);
    expect(totalPosts(s), "a refused resume sent a command").toBe(before);
    expect(posts(s, "commit")).toEqual([0, 0]);
    expect(s.control.state().writes.enabled, "writes stay on: nothing was stopped again").toBe(true);
    expect(s.control.state().writes.lost).toBe(0);

    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain(`--resume would refuse it: cannot trust ${journal}: the journal is shorter`);
    expect(st.stdout).toMatch(/\n {4}hint: what the cut lines said/);

    // the same journal copied elsewhere without its witness, resumed by name: refused as well
    const copy = join(dir, "copied.jsonl");
    writeFileSync(copy, lines.join("\n") + "\n");
    const c = await cli(["run", file, "--resume", copy, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(c.code, c.all).toBe(2);
    expect(c.stderr).toContain(`its witness ${copy}.witness is missing`);
    expect(totalPosts(s)).toBe(before);
  });
});
