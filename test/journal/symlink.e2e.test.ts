/**
 * Issue 12, item 5: "Two runners, one runbook, through a symlink. The journal folder comes from the
 * path as given, so two paths to one runbook get two locks; start was sent twice in 2 of 5 rounds.
 * Use the real path." The second runner, started through a symlink to the runbook's folder while
 * the first holds the lock, must be refused before it sends anything.
 */
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, posts, runbookFor, sim, startCli, tempDir, writeRunbook, START } from "../support/run.js";

let s: Simulator | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await s?.close();
  s = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("one lock per runbook, whatever the path", () => {
  it("a second runner through a symlink to the runbook, from another folder, is refused while the first holds the lock; start is sent once", async () => {
    s = await sim({ instances: 1 });
    s.control.addFault("lag-floor=30");
    const root = tempDir();
    dirs.push(root);
    const real = join(root, "real");
    mkdirSync(real);
    const file = writeRunbook(
      real,
      runbookFor(s, `${START}  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n`),
    );
    const other = join(root, "other");
    mkdirSync(other);
    symlinkSync(file, join(other, "rb.yaml"));
    const first = startCli(["run", file, "--renderer", "simple"], { cwd: root });
    try {
      await first.waitFor(/waiting \(ready\)|▶ \[2\/2\]/, 20_000);
      const second = await cli(["run", join(other, "rb.yaml"), "--renderer", "simple"], { cwd: root });
      expect(second.code, second.all).toBe(1);
      expect(second.stderr).toMatch(
        /another syncbook run \(pid \d+, started .*\) holds .*real\/\.syncbook\/e2e\/syncbook\.lock/,
      );
      // the way on is a command one pastes: the runbook as this runner was given it
      expect(second.stderr).toContain(
        `then see where that run stopped and the exact way on: syncbook status ${join(other, "rb.yaml")}`,
      );
      expect(posts(s, "start")).toEqual([1]);
    } finally {
      first.child.kill("SIGINT");
      await first.done;
    }
  });
});
