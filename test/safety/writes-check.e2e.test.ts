/**
 * Issue 30, point 4: "a resumed commit re-checks what it relies on (the write switch state, where
 * a hook can report it)". A stopWrites may carry a `check:` that reads the switch; it runs right
 * after the stop and again right before every commit. The journal says what the run did; when the
 * world changed behind it (a person at the switch, an undo that outlived its runner, a journal and
 * witness restored together from a snapshot), only the check can tell, and commit is refused.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunEventOf } from "../../src/events.js";
import type { Simulator } from "../../src/sim/index.js";
import { startServer } from "../support/http-server.js";
import { lineOf, lintCalls, runbook } from "../support/plugin.js";
import {
  cli,
  COMMIT,
  decisions,
  posts,
  READY,
  runbookFor,
  runYaml,
  sim,
  START,
  startCli,
  tempDir as runDir,
  writeRunbook,
} from "../support/run.js";

let sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

async function started(): Promise<Simulator> {
  const s = await sim();
  sims.push(s);
  return s;
}

/** The write stop through the simulator's switch, with (or without) the switch's reader as its check. */
const stop = (check: string | undefined): string =>
  `  - id: stop-writes\n    stopWrites:\n      use: sim-writes\n      undo: { use: sim-writes, with: { enabled: true } }\n${check ? `      check: ${check}\n` : ""}`;
const CHECKED = stop("{ use: sim-writes-stopped }");

describe("lint: a check only reads", () => {
  it("the switch's reader as the check: no findings", async () => {
    expect(await lintCalls(runbook(CHECKED))).toEqual([]);
  });

  it("a check that turns writes off (sim-writes) is an error at it: it would run again before every commit", async () => {
    const text = runbook(stop("{ use: sim-writes }"));
    const d = await lintCalls(text);
    expect(d.map((x) => x.at)).toEqual([`plugin-options@${lineOf(text, "check: { use: sim-writes }")}`]);
    expect(d[0]!.severity).toBe("error");
    expect(d[0]!.message).toMatch(/a `check` must only read the write switch/);
  });

  it("a check whose hook does not exist, or whose options are wrong, is found like any hook call", async () => {
    const unknown = await lintCalls(runbook(stop("{ use: sim-writes-stoped }")));
    expect(unknown.map((x) => x.rule)).toEqual(["plugin-unknown"]);
    expect(unknown[0]!.message).toMatch(/unknown hook `sim-writes-stoped`/);
    const bad = await lintCalls(runbook(stop("{ use: sim-writes-stopped, with: { rate: 3 } }")));
    expect(bad.map((x) => x.rule)).toEqual(["plugin-options"]);
  });
});

describe("the runner: commit reads the switch, it does not only remember it", () => {
  it("writes turned back on after the stop (a person at the switch): commit is refused by the check (exit 3), nothing sent, nothing lost", async () => {
    const s = await started();
    const { result, events } = await runYaml(runbookFor(s, START + READY + CHECKED + COMMIT), {
      onEvent: (e) => {
        if (e.type === "step.finished" && e.id === "stop-writes") s.control.setWrites({ enabled: true });
      },
    });
    expect(result.exitCode, result.message).toBe(3);
    expect(result.failedStep).toBe("commit");
    expect(result.message).toContain(
      "refused (writes-stopped): application writes are not seen stopped now: the check of step 3: hook sim-writes-stopped failed: the simulated application writes (1000/s)",
    );
    const d = decisions(events).filter((x) => x.check === "writes-stopped");
    // the stop's own check passed; the memory of it passed; the read before commit did not
    expect(d.map((x) => x.ok)).toEqual([true, true, false]);
    expect(d[0]!.reason).toMatch(/and seen stopped: the check of step 3 \(sim-writes-stopped\) passed/);
    expect(posts(s, "commit")).toEqual([0]);
    expect(s.control.state().writes.lost).toBe(0);
    // each read journaled with its step, hook and outcome: the report charges it to the runbook's
    // hooks, not the runner (src/fleet/window.ts; test/report/window-check.e2e.test.ts)
    const reads = events.filter((e): e is RunEventOf<"writes.checked"> => e.type === "writes.checked");
    expect(reads.map(({ index, id, use, ok }) => ({ index, id, use, ok }))).toEqual([
      { index: 2, id: "stop-writes", use: "sim-writes-stopped", ok: true },
      { index: 3, id: "commit", use: "sim-writes-stopped", ok: false },
    ]);
    for (const r of reads) expect(r.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("the same run without a check: the journal is all commit has, and writes are lost (what the check is for)", async () => {
    const s = await started();
    const { result } = await runYaml(runbookFor(s, START + READY + stop(undefined) + COMMIT), {
      onEvent: (e) => {
        if (e.type === "step.finished" && e.id === "stop-writes") s.control.setWrites({ enabled: true });
      },
    });
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(s, "commit")).toEqual([1]);
    expect(s.control.state().writes.lost).toBeGreaterThan(0);
  });

  it("writes still stopped: the check passes before commit, and the cutover finishes", async () => {
    const s = await started();
    const { result, events } = await runYaml(runbookFor(s, START + READY + CHECKED + COMMIT));
    expect(result.exitCode, result.message).toBe(0);
    const d = decisions(events).filter((x) => x.check === "writes-stopped" && x.id === "commit");
    expect(d.map((x) => [x.ok, x.reason])).toEqual([
      [true, "a stopWrites step of this cutover held, and no undo of it ran since"],
      [true, "application writes are seen stopped now: the check of step 3 (sim-writes-stopped) passed"],
    ]);
    expect(posts(s, "commit")).toEqual([1]);
    expect(s.control.state().writes.lost).toBe(0);
  });

  it("a check that cannot answer (nothing listens at its URL) fails the stop: its undo runs, commit is never sent", async () => {
    const s = await started();
    const { result } = await runYaml(
      runbookFor(
        s,
        START + READY + stop('{ use: sim-writes-stopped, with: { url: "http://127.0.0.1:9", timeout: 2s } }') + COMMIT,
      ),
    );
    expect(result.exitCode).toBe(1);
    expect(result.failedStep).toBe("stop-writes");
    expect(result.message).toMatch(
      /hook sim-writes succeeded, but writes are not seen stopped \(the check of step 3: hook sim-writes-stopped failed: /,
    );
    expect(s.control.state().writes.enabled, "the stop's undo ran").toBe(true);
    expect(posts(s, "commit")).toEqual([0]);
  });
});

// issue 39, point 2: a flag that takes a while to reach every application instance
describe("a check that waits (until:), comparing what it read (expect:)", () => {
  /** A flag service whose answer says writes are off only from the `after`-th read on. */
  async function slowFlag(after: number) {
    const f = await startServer((_req, n, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ enabled: n < after, appServers: { writing: n < after ? 3 : 0 } }));
    });
    closers.push(() => f.close());
    return f;
  }
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.map((c) => c()));
    closers.length = 0;
  });
  const check = (url: string, until?: string) =>
    `{ use: http, with: { method: GET, url: "${url}", timeout: 2s }, expect: [{ path: enabled, equals: false }, { path: appServers.writing, below: 1 }]${until ? `, until: ${until}, pollInterval: 100ms` : ""} }`;

  it("the flag reaches every server after a few reads: the stop waits for it, says what it waits for, and the cutover commits", async () => {
    const s = await started();
    const flag = await slowFlag(4);
    const { result, events } = await runYaml(runbookFor(s, START + READY + stop(check(flag.url, "20s")) + COMMIT));
    expect(result.exitCode, result.message).toBe(0);
    const logs = events.filter((e) => e.type === "log").map((e) => (e as { message: string }).message);
    expect(logs).toContain(
      "waiting for the check of step 3 (http: enabled equals false, appServers.writing below 1), at most 20s: enabled equals false: now true, appServers.writing below 1: now 3",
    );
    // read until it held after the stop (reads 1-4), then once more right before commit (5)
    expect(flag.seen.length).toBe(5);
    expect(posts(s, "commit")).toEqual([1]);
  });

  it("the same flag without until: one read, the stop is refused and undone, commit never sent", async () => {
    const s = await started();
    const flag = await slowFlag(4);
    const { result } = await runYaml(runbookFor(s, START + READY + stop(check(flag.url)) + COMMIT));
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /the check of step 3: enabled equals false: now true, appServers.writing below 1: now 3/,
    );
    expect(flag.seen.length).toBe(1);
    expect(s.control.state().writes.enabled, "the stop's undo ran").toBe(true);
    expect(posts(s, "commit")).toEqual([0]);
  });

  it("a flag that never flips within until: refused as today, after the bound, with the last reading", async () => {
    const s = await started();
    const flag = await slowFlag(1_000_000);
    const { result } = await runYaml(runbookFor(s, START + READY + stop(check(flag.url, "1s")) + COMMIT));
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /enabled equals false: now true, appServers.writing below 1: now 3 \(still, after (\d+ms|1s) of its 1s\)/,
    );
    expect(flag.seen.length).toBeGreaterThan(3);
    expect(posts(s, "commit")).toEqual([0]);
  });
});

describe("kill -9 after the stop, writes back on, then --resume (the built CLI)", () => {
  it("the resumed commit reads the switch: refused (exit 3) while writes flow; once stopped again, --resume commits", async () => {
    const s = await started();
    const dir = runDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + CHECKED + "  - { id: hold, sleep: 3s }\n" + COMMIT));
    const run = startCli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    await run.waitFor(/▶ \[4\/6\] sleep/, 30_000);
    run.child.kill("SIGKILL");
    expect((await run.done).signal).toBe("SIGKILL");
    // the journal (and its witness) say writes are stopped; the world says otherwise
    s.control.setWrites({ enabled: true });

    const r = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(3);
    expect(r.all).toMatch(
      /refused \(writes-stopped\): application writes are not seen stopped now: the check of step 3/,
    );
    expect(posts(s, "commit")).toEqual([0]);
    expect(s.control.state().writes.lost).toBe(0);

    s.control.setWrites({ enabled: false });
    const again = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir });
    expect(again.code, again.all).toBe(0);
    expect(posts(s, "commit")).toEqual([1]);
    expect(s.control.state().writes.lost).toBe(0);
  }, 90_000);
});

describe("the example runbooks' switch script reads the switch (runbooks/hooks/app-writes.mjs status)", () => {
  const script = join(process.cwd(), "runbooks/hooks/app-writes.mjs");
  const status = (url: string) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      execFile(process.execPath, [script, "status", url], (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, out: stdout + stderr }),
      );
    });

  it("exit 0 only while the switch answers enabled: false; writes on, a 404 or nothing listening is exit 1", async () => {
    const s = await started();
    const url = `${s.instances[0]!.url}/sim/writes`;
    expect(await status(url)).toEqual({
      code: 1,
      out: "app-writes: writes not seen stopped: the application writes\n",
    });
    s.control.setWrites({ enabled: false });
    expect(await status(url)).toEqual({ code: 0, out: "application writes are stopped\n" });
    expect((await status(`${s.instances[0]!.url}/sim/nothing`)).out).toMatch(/writes not seen stopped: HTTP 404/);
    expect((await status("http://127.0.0.1:9/")).code).toBe(1);
  });

  it("an example runbook rehearsed with its own hooks (--keep-hooks): the check passes after the stop and again before commit", async () => {
    const r = await cli(
      ["rehearse", "rs-to-sharded.yaml", "--keep-hooks", "--time-scale", "200", "--renderer", "simple"],
      { cwd: join(process.cwd(), "runbooks") },
    );
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(
      /and seen stopped: the simulated application writes nothing; the check of step \d+ \(shell\) passed/,
    );
    expect(r.all).toMatch(
      /interlock writes-stopped: application writes are seen stopped now: .*the check of step \d+ \(shell\) passed/,
    );
  }, 60_000);
});

describe("the README's runbook, as an operator copies it", () => {
  it("rehearsed with its own hooks (--keep-hooks): the switch script gets its URL, and the check passes after the stop and before commit", async () => {
    const readme = readFileSync(join(process.cwd(), "README.md"), "utf8");
    const yaml = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(yaml).toContain("check: { use: shell");
    const dir = runDir();
    mkdirSync(join(dir, "hooks"));
    copyFileSync(join(process.cwd(), "runbooks/hooks/app-writes.mjs"), join(dir, "hooks", "app-writes.mjs"));
    writeRunbook(dir, yaml!);
    const r = await cli(["rehearse", "rb.yaml", "--keep-hooks", "--time-scale", "200", "--renderer", "simple"], {
      cwd: dir,
    });
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(
      /interlock writes-stopped: application writes are seen stopped now: .*the check of step \d+ \(shell\) passed/,
    );
  }, 60_000);
});
