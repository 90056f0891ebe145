/**
 * `syncbook watch rb.yaml` reads the runbook's fleet itself, before any run: its canWrite column
 * showed nothing for the first process (no `run.started` told the read model which one it is).
 * Only the first process's canWrite is valid (mongodb/docs reference/cutover-process.txt: "The
 * canWrite status of any subsequent mongosync processes is not valid"): the runbook's
 * `startedFirst` instance's is shown, and never another's. The built CLI against the simulator.
 */
import { afterAll, describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import type { Simulator } from "../../src/sim/index.js";
import type { WatchState } from "../../src/watch/state.js";
import { runbookFor, sim, startCli, tempDir, writeRunbook, type CliRun } from "../support/run.js";

const made: { sims: Simulator[]; dirs: string[]; runs: CliRun[] } = { sims: [], dirs: [], runs: [] };
afterAll(async () => {
  for (const r of made.runs) {
    r.child.kill("SIGINT");
    await r.done;
  }
  await Promise.all(made.sims.map((s) => s.close()));
  for (const d of made.dirs) rmSync(d, { recursive: true, force: true });
});

describe("watch on a runbook before any run: the first process's canWrite", () => {
  it("is shown for the instance the runbook declares startedFirst, and for no other", async () => {
    const s = await sim({ instances: 2 });
    made.sims.push(s);
    const dir = tempDir();
    made.dirs.push(dir);
    // runbookFor declares sync0 the first process of two
    const file = writeRunbook(
      dir,
      runbookFor(s, "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n"),
    );
    const run = startCli(["watch", file], { cwd: dir });
    made.runs.push(run);
    let out = "";
    run.child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    await run.waitFor(/syncbook watch: http:\/\/\S+\//);
    const url = /syncbook watch: (http:\/\/\S+\/)/.exec(out)![1]!;
    let st: WatchState | undefined;
    for (let i = 0; i < 50; i++) {
      st = (await (await fetch(new URL("state.json", url))).json()) as WatchState;
      if (st.live.instances.every((x) => x.answeredAt !== undefined)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // the simulator's IDLE answers canWrite null: shown as it is, for the first process alone
    expect(st!.live.instances.map((x) => [x.label, "canWrite" in x])).toEqual([
      ["sync0", true],
      ["sync1", false],
    ]);
  }, 60_000);
});
