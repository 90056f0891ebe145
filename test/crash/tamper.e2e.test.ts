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

describe("a tampered journal", () => {
  it("the undo's two lines deleted: --resume refuses at the gap (exit 2), no command is sent, writes stay as they are", async () => {
    s = await fastSim({ instances: 2, timeScale: 100 });
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    // a confirm without a terminal fails after the write stop: the run undoes it (writes back on)
    const go = '  - { id: go, confirm: "Commit?" }\n';
    writeFileSync(
      file,
      cutoverYaml(s, {
        defaults: "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 2s, retry: { giveUpAfter: 3s } }",
        steps: START + READY + stopVia(s.verifierUrl) + go + COMMIT + COMMITTED,
      }),
    );
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(1);
    expect(s.control.state().writes.enabled).toBe(true);
    const folder = join(dir, ".syncbook", "crash");
    const journal = join(
      folder,
      readdirSync(folder).find((f) => f.endsWith(".jsonl"))!,
    );
    const lines = readFileSync(journal, "utf8").trimEnd().split("\n");
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
});
