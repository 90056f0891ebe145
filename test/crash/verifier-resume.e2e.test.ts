/**
 * kill -9 of the runner around the verifier's operational requests, then `syncbook run --resume`
 * (issue 11, point 4): the journal keeps what the verifier was asked and its baseline, and the
 * resumed run adopts a check or a writesOff the verifier already has instead of sending it again
 * (facts: "A client must never send a second `check`/`writesOff` while one may still be in flight
 * … and must never resend one blindly"). The real CLI runs as a child process against a simulator
 * in this process; the simulator's counts say what the verifier received.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli, type CliResult } from "../support/run.js";
import {
  CHECK,
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  CUTOVER,
  cutoverYaml,
  DRAINED,
  fastSim,
  READY,
  START,
  STOP,
  tempDir,
  until,
  VERIFY,
} from "../support/crash-harness.js";

const DEFAULTS = "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 2s, retry: { giveUpAfter: 10s } }";

const { sims, dirs } = cleanedUpAfterAll();

/** SIGKILLs its parent (the runner) once: a marker file makes the resumed run go past it. */
const KILLER = `import { existsSync, writeFileSync } from "node:fs";
const mark = process.argv[2];
if (existsSync(mark)) process.exit(0);
writeFileSync(mark, "killed");
process.kill(process.ppid, "SIGKILL");
await new Promise((r) => setTimeout(r, 10_000));
`;

const asked = (s: Simulator) => ({
  check: s.control.counts().verifier["POST /api/v1/check"] ?? 0,
  writesOff: s.control.counts().verifier["POST /api/v1/writesOff"] ?? 0,
});

interface Setup {
  s: Simulator;
  dir: string;
  file: string;
  jd: string;
}

async function setup(steps: (dir: string) => string, model?: { verifyBytesPerSecond: number }, faults?: string[]) {
  const s = await fastSim({ timeScale: 100, ...(model ? { model } : {}), ...(faults ? { faults } : {}) });
  sims.push(s);
  const dir = tempDir();
  dirs.push(dir);
  const file = join(dir, "rb.yaml");
  writeFileSync(file, cutoverYaml(s, { steps: steps(dir), defaults: DEFAULTS }));
  return { s, dir, file, jd: join(dir, "journals") } satisfies Setup;
}

const runArgs = (x: Setup, resume = false) => [
  "run",
  x.file,
  ...(resume ? ["--resume"] : []),
  "--renderer",
  "simple",
  "--journal-dir",
  x.jd,
];

function transcript(...runs: CliResult[]): string {
  return runs.map((r, i) => `--- ${i === 0 ? "run" : "resume"}: exit ${r.code} ${r.signal ?? ""}\n${r.all}`).join("\n");
}

/** The resumed run finishes: COMMITTED, verified, and the verifier saw one check and one writesOff. */
function finished(x: Setup, first: CliResult, resumed: CliResult): void {
  const where = transcript(first, resumed);
  expect(first.signal, where).toBe("SIGKILL");
  expect(resumed.code, where).toBe(0);
  expect(resumed.all, where).toMatch(/verified: phase idle/);
  expect(asked(x.s), where).toEqual({ check: 1, writesOff: 1 });
  expect(x.s.control.state().verifier.exited, where).toBeNull();
  expect(
    x.s.control.state().instances.map((i) => i.state),
    where,
  ).toEqual(["COMMITTED"]);
}

/** The run of `x` killed with -9 once its writesOff was accepted: its transcript. */
async function killedAfterWritesOff(x: Setup): Promise<CliResult> {
  const run = startCli(runArgs(x), { cwd: x.dir });
  await run.waitFor(/writesOff → 1\/1 ok/, 30_000);
  run.child.kill("SIGKILL");
  return run.done;
}

describe.concurrent("kill -9 around the verifier's requests, then --resume: nothing is sent twice", () => {
  it("after the check was accepted: the resumed run adopts it (judged against the journaled baseline)", async () => {
    const x = await setup((dir) => {
      const killer = join(dir, "kill.mjs");
      writeFileSync(killer, KILLER);
      return (
        START +
        READY +
        CHECK +
        `  - { id: kill, hook: { use: shell, with: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(killer)}, ${JSON.stringify(join(dir, "killed"))}] } } }\n` +
        STOP +
        DRAINED +
        COMMIT +
        COMMITTED +
        VERIFY
      );
    });
    const first = await cli(runArgs(x), { cwd: x.dir });
    expect(asked(x.s), transcript(first)).toEqual({ check: 1, writesOff: 0 });
    const resumed = await cli(runArgs(x, true), { cwd: x.dir });
    finished(x, first, resumed);
  });

  it("after writesOff was accepted: the resumed run does not send it again and waits for the result", async () => {
    // a first pass that takes about 2 s of wall time: the kill lands before the verifier finishes
    const x = await setup(() => START + READY + STOP + DRAINED + COMMIT + COMMITTED + VERIFY, {
      verifyBytesPerSecond: 2 ** 30 / 200,
    });
    const first = await killedAfterWritesOff(x);
    expect(x.s.control.state().verifier.phase, transcript(first)).not.toBe("idle");
    const resumed = await cli(runArgs(x, true), { cwd: x.dir });
    expect(resumed.all).toMatch(/writesOff was accepted earlier in this run: not sent again/);
    finished(x, first, resumed);
  });

  // issue 23: facts "A process restarted **without** `--clean` answers `idle`, generation 0, with the persisted
  // counters … until it gets a `check`, which **resumes** the persisted verification"
  it("after writesOff was accepted, the verifier restarted without --clean while the runner was dead: --resume says so, resumes it with a check, writesOff again, verified", async () => {
    const x = await setup(() => START + READY + STOP + DRAINED + COMMIT + COMMITTED + VERIFY, {
      verifyBytesPerSecond: 2 ** 30 / 200,
    });
    const first = await killedAfterWritesOff(x);
    await x.s.control.restartVerifier({ clean: false });
    const stale = x.s.control.state().verifier;
    // not resumed yet: the verifier resumes its persisted verification when the check arrives
    // (migration-verifier v0.2.1 internal/verifier/check.go, CheckDriver), not at its start
    expect(stale).toMatchObject({ phase: "idle", generation: 0, resumed: false, writesOff: false });
    const resumed = await cli(runArgs(x, true), { cwd: x.dir });
    const where = transcript(first, resumed);
    expect(first.signal, where).toBe("SIGKILL");
    expect(resumed.code, where).toBe(0);
    // before its check a process cannot tell --clean from none (check.go drops at the first check)
    expect(resumed.all, where).toMatch(
      /the verifier restarted: a new process answers at .*with or without --clean: they look the same until a check/,
    );
    expect(resumed.all, where).toMatch(
      /verified: phase idle, generation [1-9]\d*, .*\(writesOff was sent in generation \d+\)/,
    );
    expect(asked(x.s), where).toEqual({ check: 2, writesOff: 2 });
    expect(x.s.control.state().verifier.exited, where).toBeNull();
  });

  // an adversarial run: killed after writesOff, the verifier restarted on a new metadata database
  // and driven by someone else's check and writesOff past the journaled generation; the resume
  // took that verification for this cutover's and ended verified. Its count of change events is
  // kept with the verification (migration-verifier v0.2.1 internal/verifier/change_reader.go,
  // `cumulativeEventCounts`): the other verification's is lower (src/api/verifier-memory.ts `eventsSeen`)
  it("after writesOff was accepted, the verifier restarted on new metadata and run to its end by someone else: --resume does not call it verified", async () => {
    const x = await setup(() => START + READY + CHECK + STOP + DRAINED + COMMIT + COMMITTED + VERIFY, {
      verifyBytesPerSecond: 2 ** 30 / 200,
    });
    const first = await killedAfterWritesOff(x);
    await x.s.control.restartVerifier({ newMetadata: true });
    // someone else's check and writesOff, and the verification they start runs to its end
    const post = (op: string) =>
      fetch(`${x.s.verifierUrl}/api/v1/${op}`, { method: "POST", body: "{}" }).then((r) => r.text());
    await post("check");
    await until("the other check runs", () => x.s.control.state().verifier.phase !== "idle");
    await post("writesOff");
    await until(
      "the other verification ends",
      () => x.s.control.state().verifier.phase === "idle" && x.s.control.state().verifier.generation > 0,
      60_000,
    );
    const resumed = await cli(runArgs(x, true), { cwd: x.dir });
    const where = transcript(first, resumed);
    expect(resumed.code, where).not.toBe(0);
    expect(resumed.all, where).not.toMatch(/verified: phase idle|· verified/);
    expect(resumed.all, where).toMatch(
      /the verifier restarted: a new process answers at .*\(\d+ change events counted, below the \d+ it had shown/,
    );
    // no check is sent to a verifier that finished a verification (it would exit)
    expect(asked(x.s), where).toEqual({ check: 2, writesOff: 2 });
    expect(x.s.control.state().verifier.exited, where).toBeNull();
  });

  // the journal holds the check's request line and no answer: it may still be on its way until
  // its time limit (src/api/verifier-memory.ts `inFlight`), so the resumed run must not judge it
  // lost from a second of idle progress and send another (facts: a second operational request
  // while one is handled shuts the verifier down)
  it("while the check was in flight (delayed on its way): --resume at once sends no second check; the one that lands is followed", async () => {
    const x = await setup(() => CUTOVER, undefined, ["latency=15s@verifier/check"]);
    const run = startCli(runArgs(x), { cwd: x.dir });
    // counted on arrival; the verifier handles it 15 s later (well past the status read and the
    // resume's first reads, under load too), whoever is still waiting for the answer
    await until("the check arrives", () => asked(x.s).check === 1);
    run.child.kill("SIGKILL");
    const first = await run.done;
    expect(x.s.control.state().verifier.phase, transcript(first)).toBe("idle");
    // what the bridge call reads meanwhile: not only "a new process", but the check not arrived yet
    const st = await cli(["status", x.file, "--journal-dir", x.jd], { cwd: x.dir });
    expect(st.all, st.all).toMatch(
      /the verifier does not show this cutover's check \(.*\); this cutover's check was sent at \S+ and no answer came: it may not have reached the verifier/,
    );
    const resumed = await cli(runArgs(x, true), { cwd: x.dir });
    const where = transcript(first, resumed);
    expect(resumed.all, where).not.toMatch(/a new verification begins/);
    // and the wait says why it sends nothing, rather than look stuck
    expect(resumed.all, where).toMatch(/it may still be on its way, so no other is sent for .+ more, its time limit/);
    // one check, one writesOff, verified
    finished(x, first, resumed);
  });

  it("while writesOff was in flight (the verifier answers late): not resent; it lands, and the result comes", async () => {
    const x = await setup(() => START + READY + STOP + DRAINED + COMMIT + COMMITTED + VERIFY, undefined, [
      "writes-off-slow=3s",
    ]);
    const run = startCli(runArgs(x), { cwd: x.dir });
    // the verifier holds it: it has counted the request, and answers in 3 s
    await until("writesOff arrives", () => asked(x.s).writesOff === 1);
    run.child.kill("SIGKILL");
    const first = await run.done;
    const resumed = await cli(runArgs(x, true), { cwd: x.dir });
    expect(resumed.all).toMatch(/writesOff was sent earlier in this run and its answer was lost: not sent again/);
    finished(x, first, resumed);
  });
});
