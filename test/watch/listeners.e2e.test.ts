/**
 * `syncbook watch` on a fleet of 64 simulated instances prints nothing on stderr: each live read
 * sends 64 progress requests at once, and each request listens to the signal it is given. On
 * watch's own signal that was 64 'abort' listeners at once, and Node printed
 * MaxListenersExceededWarning on the operator's terminal at every start; a read now has a signal
 * of its own (`fanOutSignal`, src/timers.ts). Several reads are waited for, so a listener left
 * behind by one read would add up past the fan-out's own limit and warn here too.
 */
import { defaultMaxListeners, getEventListeners, getMaxListeners } from "node:events";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { fanOutSignal } from "../../src/timers.js";
import type { WatchState } from "../../src/watch/index.js";
import { cli, runbookFor, sim, startCli, START, tempDir, writeRunbook } from "../support/run.js";

const INSTANCES = 64;

describe("64 instances: watch's live read and the runner's fleet read", () => {
  let s: Simulator;
  let dir: string;

  beforeAll(async () => {
    s = await sim({ instances: INSTANCES });
    dir = tempDir();
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads every instance, again and again, and prints no warning", async () => {
    const file = writeRunbook(dir, runbookFor(s, START));
    const watch = startCli(["watch", file], { cwd: dir });
    let out = "";
    watch.child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    try {
      await watch.waitFor(/syncbook watch: http:\/\/127\.0\.0\.1:\d+\//);
      const url = /syncbook watch: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)![1]!;
      // three reads of the whole fleet (at most one a second), each seen answered by all 64
      const seen = new Set<number>();
      const end = Date.now() + 20_000;
      while (seen.size < 3 && Date.now() < end) {
        const st = (await (await fetch(new URL("state.json", url))).json()) as WatchState;
        if (st.live.at !== undefined && st.live.instances.filter((i) => i.state === "IDLE").length === INSTANCES)
          seen.add(st.live.at);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(seen.size).toBe(3);
    } finally {
      watch.child.kill("SIGINT");
    }
    const done = await watch.done;
    expect(done.code).toBe(0);
    expect(done.stderr).not.toMatch(/Warning/);
    expect(done.stderr).toBe("");
  }, 60_000);

  it("`run --dry-run --probe` and `status` read every instance and print no warning", async () => {
    // the fleet's read hands one fan-out signal to its 64 requests (src/fleet/fleet.ts): one
    // listener each on the caller's signal made Node warn on these commands
    const file = writeRunbook(dir, runbookFor(s, START));
    const probe = await cli(["run", file, "--dry-run", "--probe"], { cwd: dir });
    expect(probe.stderr).not.toMatch(/Warning/);
    expect(probe.code).toBe(0);
    const status = await cli(["status", file], { cwd: dir });
    expect(status.stderr).not.toMatch(/Warning/);
  }, 60_000);
});

describe("fanOutSignal: one listener on the caller's signal, `width` on the fan-out's", () => {
  it("follows the caller's abort, and lets go of the caller's signal when released", () => {
    const caller = new AbortController();
    const fan = fanOutSignal(caller.signal, INSTANCES);
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(1);
    fan.release();
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
    const again = fanOutSignal(caller.signal, INSTANCES);
    caller.abort(new Error("Ctrl-C"));
    expect(again.signal.aborted).toBe(true);
    expect((again.signal.reason as Error).message).toBe("Ctrl-C");
    expect(fanOutSignal(caller.signal, 2).signal.aborted).toBe(true);
  });

  it("takes `width` listeners without a warning, and no more (a leak past them still warns)", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const fan = fanOutSignal(undefined, INSTANCES);
      for (let i = 0; i < INSTANCES; i++) fan.signal.addEventListener("abort", () => undefined);
      await new Promise((r) => setImmediate(r));
      expect(warnings).toEqual([]);
      expect(getMaxListeners(fan.signal)).toBe(INSTANCES);
      // a narrow fan-out keeps Node's own limit
      expect(getMaxListeners(fanOutSignal(undefined, 2).signal)).toBe(defaultMaxListeners);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
