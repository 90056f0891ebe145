/**
 * Issue 14, point 1: "`syncbook status <runbook>`: every instance and the verifier at a glance
 * (state, canCommit, lag, copy, coordinator, direction, identity problems, the verifier's phase and
 * counters, what the journal last did), `--json` for machines, `--watch` to refresh." and point 4:
 * "`syncbook status` names the journal `--resume` would use." Tested with `status --json` against
 * a simulated fleet in each state (a frozen clock moved by hand).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openJournal } from "../../src/journal/index.js";
import type { Simulator } from "../../src/sim/index.js";
import type { Status } from "../../src/run/status.js";
import { broadcast, call, frozen } from "../support/sim.js";
import {
  cli,
  COMMIT,
  READY,
  runbookFor,
  sim as runSim,
  START,
  startCli,
  STOP,
  tempDir,
  writeRunbook,
} from "../support/run.js";
import { eventFactory, inst } from "../support/journal.js";
import { localServer } from "../support/http-server.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const SHARDED = { topology: "sharded", shards: 2 } as const;

async function fleet(release?: "v0.2.0"): Promise<{
  file: string;
  dir: string;
  journals: string;
  status: () => Promise<{ code: number | null; st: Status; text: string }>;
}> {
  s = await frozen({
    instances: 2,
    clusters: { cluster0: SHARDED, cluster1: SHARDED },
    ...(release ? { verifierRelease: release } : {}),
  });
  const dir = tempDir();
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    `runbook: 1
name: st
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: sharded, shards: 2 }
  cluster1: { topology: sharded, shards: 2 }
instances:
${s.instances.map((i) => `  - { url: "${i.url}", name: sh${i.index} }`).join("\n")}
verifier: "${s.verifierUrl}"
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
`,
  );
  const journals = join(dir, "j");
  return {
    file,
    dir,
    journals,
    status: async () => {
      const r = await cli(["status", file, "--json", "--journal-dir", journals], { cwd: dir });
      return { code: r.code, st: JSON.parse(r.stdout) as Status, text: r.all };
    },
  };
}

describe("syncbook status --json", () => {
  it("follows the fleet through its states: IDLE, copying, change event application, PAUSED, COMMITTING, COMMITTED", async () => {
    const f = await fleet();
    const first = await f.status();
    expect(first.code).toBe(0);
    let st = first.st;
    expect(st).toMatchObject({ format: 3, runbook: "st", identityProblems: [] });
    expect(st.instances.map((i) => [i.place, i.name, i.state, i.reachable])).toEqual([
      [1, "sh0", "IDLE", true],
      [2, "sh1", "IDLE", true],
    ]);
    expect(st.instances[0]).toMatchObject({ lagSeconds: null, copy: null, coordinator: false });
    expect(st.verifier).toMatchObject({ reachable: true, phase: "idle" });
    expect(st.journal).toMatchObject({ passedOver: [] });
    expect(st.journal.resumeWith).toBeUndefined();
    // why not ready, in the words `syncbook watch` uses (src/model/readiness.ts, issue 38)
    expect(st.readiness.map((r) => [r.instance, r.ready, r.eta, r.reasons])).toEqual([
      ["sh0", false, "unknown", ["state IDLE (a commit needs RUNNING)"]],
      ["sh1", false, "unknown", ["state IDLE (a commit needs RUNNING)"]],
    ]);
    const idle = await cli(["status", f.file, "--journal-dir", f.journals], { cwd: f.dir });
    expect(idle.stdout).toMatch(/#1 sh0 .*\n {6}not ready \(ETA unknown\): state IDLE \(a commit needs RUNNING\)\n/);

    await broadcast(s!, "start", { source: "cluster0", destination: "cluster1" });
    s!.control.advance(8);
    ({ st } = await f.status());
    expect(st.instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING"]);
    const copying = st.instances[0]!;
    expect(copying.copy).toMatchObject({ started: true });
    expect(copying.copy).not.toHaveProperty("percent");
    expect(st.copy?.percent).toBeGreaterThan(0);
    expect(st.copy?.percent).toBeLessThan(100);
    expect(copying.direction).toEqual({
      source: expect.stringMatching(/^cluster0: /),
      destination: expect.stringMatching(/^cluster1: /),
    });
    expect(st.instances.filter((i) => i.coordinator)).toHaveLength(1);
    expect(st.instances[0]!.coordinatorId).toBe(st.instances[1]!.coordinatorId);

    s!.control.advance(60);
    ({ st } = await f.status());
    expect(
      st.instances.every((i) => i.state === "RUNNING" && i.canCommit === true && i.info === "change event application"),
    ).toBe(true);
    expect(typeof st.instances[0]!.lagSeconds).toBe("number");
    expect(st.readiness.map((r) => r.ready)).toEqual([true, true]);

    await broadcast(s!, "pause");
    ({ st } = await f.status());
    expect(st.instances.map((i) => [i.state, i.lagSeconds])).toEqual([
      ["PAUSED", null],
      ["PAUSED", null],
    ]);
    await broadcast(s!, "resume");
    s!.control.advance(200);
    await broadcast(s!, "commit");
    ({ st } = await f.status());
    expect(st.instances.map((i) => i.state)).toEqual(expect.arrayContaining(["COMMITTING"]));
    s!.control.advance(60);
    ({ st } = await f.status());
    expect(st.instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
    // the copy as the live view shows it (issue 26): the fleet's 100 %, not each instance's share
    // of it, in the text and in --json alike (one reader)
    const text = await cli(["status", f.file, "--journal-dir", f.journals], { cwd: f.dir });
    expect(text.stdout).toMatch(/^copy \(fleet\): 100% \(/m);
    expect(st.copy?.percent).toBe(100);
    expect(st.instances.map((i) => i.copy)).not.toContainEqual(expect.objectContaining({ percent: expect.anything() }));
    expect(text.stdout).toMatch(/sh0 .*copied [\d.]+ \w+ \(its share\)/);
    expect(text.stdout).not.toMatch(/copy \d+% /);
  });

  it("an unreachable instance and a second fleet's instance: said, exit 1", async () => {
    const f = await fleet();
    await broadcast(s!, "start", { source: "cluster0", destination: "cluster1" });
    s!.control.advance(20);
    s!.control.addFault("identity-change=coordinator@1");
    let r = await f.status();
    expect(r.code).toBe(1);
    expect(r.st.identityProblems).toEqual([expect.stringMatching(/^sh1: sh1 reports coordinatorID "other-fleet-/)]);
    s!.control.clearFaults();
    s!.control.addFault("down=1");
    r = await f.status();
    expect(r.code).toBe(1);
    expect(r.st.instances[1]).toMatchObject({ reachable: false, error: expect.stringMatching(/progress failed/) });
    const text = await cli(["status", f.file, "--journal-dir", f.journals], { cwd: f.dir });
    expect(text.stdout).toMatch(/#2 sh1 +unreachable: /);
    // and what to check (the API client's hint for its error)
    expect(text.stdout).toMatch(/\n {2}hint: \S/);
    expect(r.st.instances[1]?.hint).toEqual(expect.any(String));
    expect(text.stdout).toContain(`  hint: ${r.st.instances[1]!.hint}`);
  });

  it("the verifier's phase and counters while it checks", async () => {
    const f = await fleet();
    await broadcast(s!, "start", { source: "cluster0", destination: "cluster1" });
    s!.control.advance(60);
    await call(`${s!.verifierUrl}/api/v1/check`, "POST", {});
    s!.control.advance(30);
    const { st } = await f.status();
    expect(st.verifier).toMatchObject({ reachable: true, phase: expect.stringMatching(/^(check|recheck)$/) });
    expect(Object.keys(st.verifier!.counters!)).toEqual(
      expect.arrayContaining(["totalTasks", "failedTasks", "metadataMismatchTasks"]),
    );
  });

  // issue 23: "`status` and the report name the release behaviour they saw"; issue 36: that 500 is
  // also the answer of a process holding an earlier verification (facts: "the 500 does not mean
  // "nothing to resume""): never "not started", and no phase
  it("the verifier's release behaviour is named (v0.2.0: an empty HTTP 500 before any check), never 'not started'", async () => {
    const f = await fleet("v0.2.0");
    const r = await f.status();
    expect(r.st.verifier).toEqual({
      url: s!.verifierUrl,
      reachable: true,
      notes: [
        "an empty HTTP 500: verifier releases v0.1.6 to v0.2.0 answer progress with an empty HTTP 500 until their first check (fixed in v0.2.1), whether or not their metadata holds an earlier verification (a check would resume it, or drop it with --clean): which it is cannot be told before a check; use v0.2.1",
      ],
    });
    expect(r.text).not.toMatch(/not started/);
    // the words, as people read them (status without --json)
    const words = await cli(["status", f.file, "--journal-dir", f.journals], { cwd: f.dir });
    expect(words.all).not.toMatch(/not started/);
    expect(words.all).toMatch(/verifier http:\/\/127\.0\.0\.1:\d+: no phase in its answer/);
  });

  // issue 36: an answer without a generation (the contract's) says nothing of a restart
  it("an answer without a generation is not called restarted, nor this cutover's", async () => {
    const f = await fleet();
    // the contract's verifier progress: phase, error, the counters, no generation
    const bare = await localServer(() => ({
      status: 200,
      body: {
        progress: {
          phase: "idle",
          error: null,
          verificationStatus: { totalTasks: 3, completedTasks: 3, failedTasks: 0, metadataMismatchTasks: 0 },
        },
      },
    }));
    try {
      writeFileSync(f.file, readFileSync(f.file, "utf8").replace(/verifier: ".*"/, `verifier: "${bare.url}"`));
      const r = await f.status();
      expect(r.st.verifier).toMatchObject({
        phase: "idle",
        generation: null,
        notes: [
          "no generation in its answer: whether a check ran in this process, or which verification it shows, cannot be told (the migration verifier v0.2.1 reports one)",
        ],
        cutover: { check: false, result: false },
      });
      expect(r.text).not.toMatch(/restarted/);
    } finally {
      await bare.close();
    }
  });

  it("a restart without --clean is named; so is what the journaled run saw", async () => {
    const g = await fleet();
    await broadcast(s!, "start", { source: "cluster0", destination: "cluster1" });
    s!.control.advance(60);
    await call(`${s!.verifierUrl}/api/v1/check`, "POST", {});
    s!.control.advance(30);
    await s!.control.restartVerifier({ clean: false });
    const folder = join(g.journals, "st");
    mkdirSync(folder, { recursive: true });
    const ev = eventFactory();
    const j = openJournal({ dir: folder, runbookName: "st", runbookHash: "h" });
    const idle = {
      phase: "idle",
      generation: 0,
      error: null,
      verificationStatus: { totalTasks: 2, processingTasks: 2 },
    };
    j.write(
      ev("verifier.baseline", { index: 0, id: "v", progress: { phase: "idle" }, adopted: false, oldRelease: true }),
    );
    j.write(ev("verifier.restarted", { index: 0, id: "v", progress: idle, why: "x", followed: 1, limit: 2 }));
    j.close();
    const st = (await g.status()).st;
    // facts: before its check a process shows the same with or without --clean
    expect(st.verifier!.notes).toEqual([
      "idle at generation 0 with tasks: a process whose metadata holds an earlier verification, before its check (with or without --clean: they look the same until a check); started without --clean its next check resumes that verification, started with --clean the check drops it and starts afresh",
    ]);
    expect(st.verifier!.cutover).toEqual({
      check: false,
      result: false,
      why: "no check of this cutover's reached the verifier (a `startVerification` or `verify` step sends it)",
    });
    // why not verified, by the one rule the report and the watch page ask (earned.ts `verification`)
    expect(st.journal.verifier).toEqual({
      restarts: 1,
      oldRelease: true,
      passed: false,
      verified: false,
      why: "the runbook has no `verify` step",
    });
    const text = await cli(["status", g.file, "--journal-dir", g.journals], { cwd: g.dir });
    expect(text.stdout).toMatch(
      /\n {2}idle at generation 0 with tasks: a process whose metadata holds an earlier verification/,
    );
    expect(text.stdout).toMatch(
      /\n {2}not this cutover's verification result: no check of this cutover's reached the verifier/,
    );
    expect(text.stdout).toMatch(/\n {2}verification: not verified/);
    expect(text.stdout).toMatch(/\n {2}verifier: restarted 1 time\(s\) during the run's verification/);
    expect(text.stdout).toMatch(
      /\n {2}verifier: its progress answered an empty HTTP 500 before the check \(releases v0\.1\.6 to v0\.2\.0; use v0\.2\.1\)/,
    );
  });

  it("the journal: the one --resume would use, the ones it passes over, what it last did, an edited one, the lock", async () => {
    const f = await fleet();
    const folder = join(f.journals, "st");
    mkdirSync(folder, { recursive: true });
    const ev = eventFactory();
    const acted = openJournal({ dir: folder, runbookName: "st", runbookHash: "h", now: () => Date.UTC(2026, 0, 1) });
    acted.write(
      ev("run.started", {
        runbook: "st",
        file: "rb.yaml",
        hash: "h",
        instances: [inst(0, "sh0"), inst(1, "sh1")],
        mode: "run",
        steps: [{ index: 0, id: "start", kind: "start", title: "t" }],
      }),
    );
    acted.write(ev("step.started", { index: 0, id: "start", kind: "start", title: "t" }));
    acted.write(
      ev("request.sent", {
        id: 1,
        instance: inst(0, "sh0"),
        target: "service",
        method: "POST",
        path: "/api/v1/start",
        body: {},
      }),
    );
    acted.write(
      ev("request.sent", {
        id: 2,
        instance: inst(1, "sh1"),
        target: "service",
        method: "POST",
        path: "/api/v1/start",
        body: {},
      }),
    );
    acted.write(
      ev("response.received", { id: 1, instance: inst(0, "sh0"), target: "service", ok: true, durationMs: 1 }),
    );
    acted.close();
    await new Promise((r) => setTimeout(r, 20));
    const idle = openJournal({ dir: folder, runbookName: "st", runbookHash: "h", now: () => Date.UTC(2026, 0, 2) });
    idle.write(
      eventFactory()("run.started", {
        runbook: "st",
        file: "rb.yaml",
        hash: "h",
        instances: [],
        mode: "run",
        steps: [],
      }),
    );
    idle.close();
    writeFileSync(
      join(folder, "syncbook.lock"),
      JSON.stringify({ pid: process.pid, host: hostname(), startedAt: "2026-01-02T00:00:00.000Z" }),
    );
    let { st } = await f.status();
    expect(st.journal).toMatchObject({
      resumeWith: acted.file,
      passedOver: [idle.file],
      lastStep: { number: 1, id: "start", kind: "start" },
      lastCommand: { op: "start", step: 1, answers: { sh0: "ok", sh1: "unknown" } },
      writesStopped: false,
      lock: { pid: process.pid, alive: true },
    });
    expect(st.journal.lastStep?.outcome).toBeUndefined();
    expect(st.journal.refused).toBeUndefined();
    // an edited journal: status says --resume would refuse it, and why
    writeFileSync(acted.file, readFileSync(acted.file, "utf8").replace('"ok":true', '"ok":false'));
    ({ st } = await f.status());
    expect(st.journal.refused).toMatch(/the journal's chain breaks at line 6/);
  });

  it("--watch refreshes until Ctrl-C (one JSON line each with --json)", async () => {
    const f = await fleet();
    const w = startCli(["status", f.file, "--json", "--watch", "0.2", "--journal-dir", f.journals], { cwd: f.dir });
    await w.waitFor(/("format":3[\s\S]*){3}/, 15_000);
    w.child.kill("SIGINT");
    const r = await w.done;
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const l of lines) expect((JSON.parse(l) as Status).instances).toHaveLength(2);
    const bad = await cli(["status", f.file, "--watch", "soon"], { cwd: f.dir });
    expect(bad.code).toBe(2);
  });
});

// issue 39, point 8: after a kill, status says since when writes are stopped and what to run next
describe("status after the runner was killed with writes stopped", () => {
  let sm: Simulator | undefined;
  afterEach(async () => {
    await sm?.close();
    sm = undefined;
  });

  it("says since when writes are stopped, and offers --resume then --abort, each with what it does", async () => {
    sm = await runSim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(sm, START + READY + STOP + "  - { id: hold, sleep: 30s }\n" + COMMIT));
    const run = startCli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    await run.waitFor(/▶ \[4\/6\] sleep/, 30_000);
    // while the run lives, its step runs: not "cut off", no way on offered but the run itself
    const alive = await cli(["status", file], { cwd: dir });
    expect(alive.stdout).toMatch(
      new RegExp(`journal: \\S+\\.jsonl \\(being written by the run now running, pid ${run.child.pid}\\)`),
    );
    expect(alive.stdout).toMatch(/last step: 4\. hold \(sleep\): running since \S+Z \(\d/);
    expect(alive.stdout).toContain(`the run is still running (pid ${run.child.pid}): this is its journal so far`);
    expect(alive.stdout).not.toMatch(/cut off|did not record its end|next, one of|--resume/);
    const killedAt = Date.now();
    run.child.kill("SIGKILL");
    await run.done;
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain("last step: 4. hold (sleep): started, never ended (cut off)");
    expect(st.stdout).toContain("the run did not record its end: it was interrupted or crashed");
    expect(st.stdout).toMatch(/\(the one --resume would continue\)/);
    const m = /writes: stopped by the run \(a stopWrites held, not undone\) since (\S+) \((.+) ago\)/.exec(st.stdout);
    expect(m, st.stdout).not.toBeNull();
    expect(Date.parse(m![1]!)).toBeLessThanOrEqual(killedAt);
    expect(Date.parse(m![1]!)).toBeGreaterThan(killedAt - 30_000);
    const resume = st.stdout.indexOf(`syncbook run ${file} --resume`);
    const abort = st.stdout.indexOf(`syncbook run ${file} --abort`);
    expect(resume).toBeGreaterThan(0);
    expect(abort).toBeGreaterThan(resume);
    expect(st.stdout).toContain("goes on with the cutover from step 4 hold");
    expect(st.stdout).toContain("calls the cutover off: runs the undos still owed, last first (writes back on)");
  }, 60_000);
});

// a newcomer's trial: a second run against a fleet the first one committed was told "resume with:
// --resume", and --resume then said "nothing to resume": the advice went round in a circle
describe("a run against a fleet that already committed", () => {
  let sm: Simulator | undefined;
  afterEach(async () => {
    await sm?.close();
    sm = undefined;
  });

  it("is refused with the way on that fits (status, not --resume), and status shows the committed cutover", async () => {
    sm = await runSim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(sm, START + READY + STOP + COMMIT));
    const first = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(0);
    const again = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(again.code, again.all).toBe(3);
    expect(again.stderr).toContain("refused (fleet-idle): start is allowed only in IDLE;");
    expect(again.stderr).toMatch(/hint: \S+ already committed a sync, and a committed sync does not go back to IDLE/);
    expect(again.stderr).toContain(`see the fleet and what this runbook's journal did: syncbook status ${file}`);
    expect(again.stderr).not.toMatch(/resume with:|--resume\b(?! to adopt)/);
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toMatch(/run ended ok \(committed\)/);
  }, 60_000);
});

// an adversarial run: status named no next command whenever the last run had recorded its end with
// writes still stopped (a commit answered 500, a split, Ctrl-C, a --to run)
describe("status after a run that ended and left its cutover open", () => {
  let sm: Simulator | undefined;
  afterEach(async () => {
    await sm?.close();
    sm = undefined;
  });

  it("a --to run: it stopped before the runbook's end, writes stay stopped, and --resume then --abort are offered", async () => {
    sm = await runSim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(sm, START + READY + STOP + COMMIT));
    const first = await cli(["run", file, "--yes", "--renderer", "simple", "--to", "stop-writes"], { cwd: dir });
    expect(first.code, first.all).toBe(0);
    // the run's own last word names the way on
    expect(first.stderr).toContain(
      `stopped at --to stop-writes: the cutover goes on with: syncbook run ${file} --resume (syncbook status ${file} shows where)`,
    );
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toMatch(/run ended ok at --to stop-writes, before the runbook's end \(its cutover goes on\)/);
    expect(st.stdout).toMatch(/writes: stopped by the run/);
    const resume = st.stdout.indexOf(`syncbook run ${file} --resume`);
    const abort = st.stdout.indexOf(`syncbook run ${file} --abort`);
    expect(resume, st.stdout).toBeGreaterThan(0);
    expect(abort).toBeGreaterThan(resume);
    expect(st.stdout).toContain("goes on with the cutover where its last run stopped (writes stay stopped)");
    // a plain run is refused: the cutover is open, and the ways on are named
    const plain = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(plain.code, plain.all).toBe(2);
    expect(plain.all).toMatch(
      /the runbook's last cutover did not finish: .*its last run ended ok at --to stop-writes, before the runbook's end/,
    );
    expect(plain.all).toContain(`syncbook run ${file} --resume`);
    // and --resume goes on
    const resumed = await cli(["run", file, "--resume", "--yes", "--renderer", "simple"], { cwd: dir });
    expect(resumed.code, resumed.all).toBe(0);
    expect(resumed.all).toMatch(/■ run ok .*· committed/);
    const after = await cli(["status", file], { cwd: dir });
    expect(after.stdout).not.toMatch(/next, one of/);
  }, 60_000);

  // an outside review (helper 87): status's ways on named the runbook's file unquoted, where the
  // run's end quotes it: a path with a space pasted as two arguments
  it("its ways on name a runbook whose path has a space quoted, as the run's end does: pasted, the --resume goes on", async () => {
    sm = await runSim();
    const dir = join(tempDir(), "cut over");
    mkdirSync(dir);
    const file = writeRunbook(dir, runbookFor(sm, START + READY + STOP + COMMIT));
    const first = await cli(["run", file, "--yes", "--renderer", "simple", "--to", "stop-writes"], { cwd: dir });
    expect(first.code, first.all).toBe(0);
    const st = await cli(["status", file], { cwd: dir });
    const quoted = `syncbook run '${file}' --resume`;
    expect(st.stdout).toContain(quoted);
    expect(first.stderr).toContain(quoted);
    const line = /syncbook (run '[^']+' --resume)/.exec(st.stdout)![1]!;
    const argv = execFileSync("sh", ["-c", `set -- ${line}; for a in "$@"; do printf '%s\\0' "$a"; done`], {
      encoding: "utf8",
    })
      .split("\0")
      .slice(0, -1);
    expect(argv).toEqual(["run", file, "--resume"]);
    const resumed = await cli([...argv, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(resumed.code, resumed.all).toBe(0);
  }, 60_000);

  // an adversarial run: after --to stop-writes, a --from commit --to commit run (which counted the
  // inherited write stop) ended with writes stopped, and status said "writes: not stopped by the run"
  it("a --from run that continued the cutover and ended with writes still stopped: status says so", async () => {
    sm = await runSim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(sm, START + READY + STOP + COMMIT));
    const run = (...a: string[]) => cli(["run", file, "--yes", "--renderer", "simple", ...a], { cwd: dir });
    const first = await run("--to", "stop-writes");
    expect(first.code, first.all).toBe(0);
    const second = await run("--from", "commit", "--to", "commit");
    expect(second.code, second.all).toBe(0);
    expect(second.all).toMatch(/still stopped/);
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toContain("writes: stopped by an earlier run of this cutover, and still at this run's end");
    expect(st.stdout).not.toContain("writes: not stopped by the run");
  }, 60_000);
});

// an adversarial run: `syncbook status <journal folder>` ended "internal error: EISDIR"
describe("syncbook status of a folder", () => {
  it("says it takes a runbook file, and that watch reads a journal folder; exit 2, no stack", async () => {
    const dir = tempDir();
    const folder = join(dir, "the journals");
    mkdirSync(folder);
    const r = await cli(["status", folder], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.all).toContain(`${folder} is a folder: status takes one runbook file`);
    expect(r.all).toContain(`\`syncbook watch '${folder}'\` reads a journal folder without the runbook`);
    expect(r.all).not.toMatch(/EISDIR|internal error|at .*\.js:\d+/);
  });
});

// a person on the bridge call runs status in a shell without the cutover's secrets: status reads the
// fleet, the verifier and the journals, never a hook, check or notification, so a secret only they
// use need not be set (it said "environment variable is not set" and exited 2); one the fleet's own
// addresses are made of still must be
describe("syncbook status where a secret is not set", () => {
  const UNSET = "SYNCBOOK_TEST_STATUS_UNSET_TOKEN";
  it("one only a hook, a notification or a cluster's connection string uses: status runs and says it was not read; one the verifier's URL is made of: refused, naming it", async () => {
    s = await runSim({ instances: 1 });
    const dir = tempDir();
    const hook = `  - { id: stop-writes, stopWrites: { use: shell, with: { command: [node, -e, "0", "\${env.${UNSET}}"] } } }\n`;
    const file = writeRunbook(
      dir,
      runbookFor(
        s,
        START + hook,
        `notify:\n  - { use: webhook, on: [run.finished], with: { url: "https://hooks.example.com/\${env.${UNSET}}" } }\n`,
      ).replace(
        // and a cluster's connection string, as preflight reads it (docs/preflight.md)
        'cluster0: { topology: replicaSet, serverVersion: "6.0" }',
        `cluster0: { topology: replicaSet, serverVersion: "6.0", uri: "\${env.${UNSET}}" }`,
      ),
    );
    expect(readFileSync(file, "utf8")).toContain(`uri: "\${env.${UNSET}}"`);
    const env = { ...process.env };
    delete env[UNSET];
    const r = await cli(["status", file], { cwd: dir, env: env as Record<string, string> });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain("#1 sync0");
    expect(r.all).not.toContain("stand-in");
    expect(r.stderr).toContain(
      `note: \${env.${UNSET}} is not set here; status reads no hook, check, notification or cluster connection string that uses it (a run needs it)`,
    );
    // the run itself still needs it
    const run = await cli(["run", file, "--dry-run"], { cwd: dir, env: env as Record<string, string> });
    expect(run.code).toBe(2);
    expect(run.all).toContain(`environment variable \`${UNSET}\` is not set`);
    const bad = writeRunbook(
      dir,
      runbookFor(s, START).replace(`verifier: "${s.verifierUrl}"`, `verifier: "\${env.${UNSET}}"`),
      "bad.yaml",
    );
    const refused = await cli(["status", bad], { cwd: dir, env: env as Record<string, string> });
    expect(refused.code).toBe(2);
    expect(refused.all).toContain(`environment variable \`${UNSET}\` is not set`);
    expect(refused.all).toContain("bad.yaml does not load, so its fleet is not known");
  });
});
