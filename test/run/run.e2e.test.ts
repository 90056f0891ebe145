/**
 * `syncbook run` end to end: the CLI as a child process against the simulator over loopback.
 * Counts come from the simulator (what the service really received), not from the runner.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { inPty } from "../support/pty.js";
import type { Simulator } from "../../src/sim/index.js";
import type { Status } from "../../src/run/status.js";
import type { Report } from "../../src/report/index.js";
import {
  CHECK,
  cli,
  COMMIT,
  CUTOVER,
  DRAINED,
  posts,
  READY,
  runbookFor,
  sim,
  START,
  startCli,
  STOP,
  tempDir,
  totalRequests,
  VERIFY,
  writeRunbook,
} from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("syncbook run: the whole cutover", () => {
  it("runs every step kind to COMMITTED: one start and one commit per instance, no write lost, a journal", async () => {
    s = await sim({ instances: 2 });
    const dir = tempDir();
    const steps = `${START}${READY}${CHECK}  - { id: nap, sleep: 100ms }
${STOP}${DRAINED}  - { id: go, confirm: "Commit?" }
${COMMIT}  - { id: writable, assert: { state: COMMITTED, canWrite: true } }
${VERIFY}  - { id: hello, notify: "done with \${vars.who}" }
`;
    const file = writeRunbook(dir, runbookFor(s, steps, "vars: { who: sales }\n"));
    const r = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    // "When several service instances sync between sharded clusters, identical API commands must be sent to every instance."
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([1, 1]);
    const st = s.control.state();
    expect(st.instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
    expect(st.writes.lost).toBe(0);
    expect(st.fleetErrors).toEqual([]);
    expect(r.stdout).toContain("done with sales");
    const journals = readdirSync(join(dir, ".syncbook", "e2e")).filter((f) => f.endsWith(".jsonl"));
    expect(journals).toHaveLength(1);
    const lines = readFileSync(join(dir, ".syncbook", "e2e", journals[0] as string), "utf8")
      .trim()
      .split("\n");
    expect(lines.some((l) => l.includes('"commit.sent"'))).toBe(true);
    // issue 36: the run's last line says it is verified; status judges the verifier's answer by the journal
    expect(r.stderr).toMatch(/■ run ok in .* · committed · verified · exit 0/);
    const status = JSON.parse((await cli(["status", file, "--json"], { cwd: dir })).stdout) as Status;
    expect(status.verifier).toMatchObject({ phase: "idle", cutover: { check: true, result: true } });
    expect(status.journal.verifier).toMatchObject({ verified: true });
  });

  // issue 36: "A cutover without verification is not called safe": the cutover page, "you should always
  // verify a successful sync" (mongodb/docs content/mongosync/current/source/reference/cutover-process.txt)
  it("a cutover without verify: its last line, the report and status say not verified", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + STOP + DRAINED + COMMIT));
    const r = await cli(["run", file, "--yes", "--renderer", "simple", "--report", join(dir, "out")], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stderr).toMatch(/■ run ok in .* · committed · not verified \(the runbook has no `verify` step\) · exit 0/);
    // lint said so before the window
    expect(r.all).toMatch(/commit-without-verify/);
    const report = JSON.parse(readFileSync(join(dir, "out", "report.json"), "utf8")) as Report;
    expect(report.verification).toEqual({
      verified: false,
      why: "the runbook has no `verify` step",
      headline: "NOT VERIFIED",
    });
    const html = readFileSync(join(dir, "out", "report.html"), "utf8");
    expect(html).toMatch(/COMMITTED · NOT VERIFIED/);
    expect(html).not.toMatch(/Every step succeeded and the sync was committed\.<\/p>/);
    const junit = readFileSync(join(dir, "out", "junit.xml"), "utf8");
    expect(junit).toContain('<property name="verification" value="not verified (the runbook has no `verify` step)"/>');
    expect(junit).toMatch(
      /<testcase [^>]*name="verification"[^>]*>\s*<skipped message="not verified: the runbook has no `verify` step"\/>/,
    );
    const st = JSON.parse((await cli(["status", file, "--json"], { cwd: dir })).stdout) as Status;
    expect(st.journal.finished).toMatchObject({ outcome: "ok", committed: true, verified: false });
  });

  it("--dry-run prints every request in order with its body and sends nothing", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CUTOVER));
    const r = await cli(["run", file, "--dry-run"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(
      /POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/start\s+{"source":"cluster0","destination":"cluster1"}/,
    );
    expect(r.stdout.indexOf("/api/v1/start")).toBeLessThan(r.stdout.indexOf("/api/v1/commit"));
    expect(r.stdout).toContain("/api/v1/writesOff");
    expect(totalRequests(s)).toBe(0);
  });

  it("--dry-run --probe reads progress only, and fails when the fleet's state does not allow the plan", async () => {
    s = await sim();
    const dir = tempDir();
    const ok = await cli(["run", writeRunbook(dir, runbookFor(s, CUTOVER)), "--dry-run", "--probe"], { cwd: dir });
    expect(ok.code, ok.all).toBe(0);
    expect(ok.stdout).toMatch(/probe: sync0: IDLE/);
    const cutoverOnly = runbookFor(s, `${READY}${STOP}${COMMIT}`);
    const bad = await cli(["run", writeRunbook(dir, cutoverOnly, "c.yaml"), "--dry-run", "--probe"], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr, bad.all).toMatch(/sync0 is IDLE: the plan's first command, commit .* needs RUNNING/);
    const c = s.control.counts().instances[0] ?? {};
    expect(Object.keys(c).filter((k) => k.startsWith("POST"))).toEqual([]);
  });

  it("an invalid runbook never reaches the fleet: exit 2 with file:line:col", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, `${START}  - waitFor: { lagBellow: 3 }\n`));
    const r = await cli(["run", file], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/rb\.yaml:\d+:\d+/);
    expect(r.stderr).toContain("did you mean `lagBelow`");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(totalRequests(s)).toBe(0);
  });
});

describe("interlocks", () => {
  it("lint refuses a commit with no stopWrites before it: exit 2, nothing sent (the runner's own refusal: interlocks.test.ts)", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, START + READY + COMMIT));
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.all).toContain("commit-without-stop-writes");
    expect(totalRequests(s)).toBe(0);
  });

  it("refuses commit while one instance cannot commit (its copy restarted after a live upgrade): no commit sent to any instance", async () => {
    // facts: live upgrades "only where release notes say so — 1.12 → 1.13 [versioning page], to 1.18"
    s = await sim({ instances: 2, timeScale: 5, serviceVersion: "1.13.0", faults: ["live-upgrade=0.95@1"] });
    const dir = tempDir();
    const steps = `${START}  - { id: ready, waitFor: { canCommit: true, on: coordinator } }\n${STOP}${COMMIT}`;
    const file = writeRunbook(dir, runbookFor(s, steps));
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    // exit 3, not 1: an interlock stopped the run and the refused command was not sent
    expect(r.code, r.all).toBe(3);
    expect(r.stderr).toContain("stopped by an interlock (exit 3: the refused command was not sent)");
    expect(r.all).toMatch(
      /refused \(can-commit\): commit needs every instance RUNNING with canCommit true; sync1 is RUNNING with canCommit false/,
    );
    expect(posts(s, "commit")).toEqual([0, 0]);
    // the journal (and so `syncbook report`) records the same exit code
    const jdir = join(dir, ".syncbook", "e2e");
    const journal = readdirSync(jdir).find((f) => f.endsWith(".jsonl")) ?? "";
    const finished = readFileSync(join(jdir, journal), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; exitCode?: number })
      .find((e) => e.type === "run.finished");
    expect(finished?.exitCode).toBe(3);
    // the failed run undid its write stop
    expect(s.control.state().writes.enabled).toBe(true);
  });

  // facts: "`commit` and `reverse` block until they have been called on every instance": with one instance
  // refusing, the other's commit never answers; both refuse here, so each answer is a refusal
  it("an instance answering success:false stops the run with its URL, error and description", async () => {
    s = await sim({ instances: 2, faults: ["commit-refused"] });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CUTOVER));
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(r.code).toBe(1);
    for (const i of s.instances) {
      const url = i.url.replace(/[.]/g, "\\.");
      expect(r.all).toMatch(new RegExp(`commit refused by .*${url}: commit refused: CommitRefused`));
    }
  });

  it("confirm without a terminal and without --yes fails before the commit, and undo switches writes back on", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(
      dir,
      runbookFor(s, `${START}${READY}${STOP}  - { id: go, confirm: "Commit?" }\n${COMMIT}`),
    );
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.all).toContain("pass --yes");
    expect(posts(s, "commit")).toEqual([0]);
    expect(s.control.state().writes.enabled).toBe(true);
  });
});

describe("the verifier", () => {
  it("fails with the counters when writes were lost (writes were not really stopped)", async () => {
    s = await sim();
    const dir = tempDir();
    // the runbook lies: writes are on during commit, so writes are lost and the verifier finds it
    const steps = `${START}${READY}${COMMIT}${VERIFY}`;
    const file = writeRunbook(dir, runbookFor(s, steps, "writesStoppedExternally: true\n"));
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(s.control.state().writes.lost).toBeGreaterThan(0);
    expect(r.code).toBe(1);
    expect(r.all).toMatch(
      /verification found differences: \d+ failed task\(s\) \(documents differ\).*failedTasks [1-9]/,
    );
  });
});

describe("faults during waits", () => {
  it("HTTP 500s, resets, non-JSON bodies and timeouts on progress are retried: the cutover completes, one start and one commit", async () => {
    s = await sim({
      instances: 2,
      faults: [
        "http500=0.3@*/progress",
        "reset=0.15@*/progress",
        "non-json=0.1@*/progress",
        "latency=3s,for=20s@1/progress",
      ],
    });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CUTOVER));
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([1, 1]);
  });

  it("progress down for 'at least two minutes' after resume: pause, resume, then the wait retries until it answers", async () => {
    // "Progress calls can fail for at least two minutes after a sync is resumed or restarted"
    s = await sim({ faults: ["progress-down-after-resume"] });
    const dir = tempDir();
    const steps = `${START}${READY}  - { id: pause, pause: {} }\n  - { id: paused, waitFor: { state: PAUSED } }\n  - { id: resume, resume: {} }\n${READY.replace("ready", "ready-again")}${STOP}${DRAINED}${COMMIT}`;
    const file = writeRunbook(dir, runbookFor(s, steps.replace("retry: { giveUpAfter: 15s }", ""), ""));
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(posts(s, "resume")).toEqual([1]);
    expect(s.control.state().instances[0]?.state).toBe("COMMITTED");
  });
});

describe("modes", () => {
  it("--to stops after a step; --from continues later, and interlocks still apply to what was skipped", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CUTOVER));
    const first = await cli(["run", file, "--to", "ready", "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(0);
    expect(s.control.state().instances[0]?.state).toBe("RUNNING");
    const commitOnly = await cli(["run", file, "--from", "commit", "--renderer", "simple"], { cwd: dir });
    expect(commitOnly.code).toBe(3);
    expect(commitOnly.all).toContain("refused (writes-stopped)");
    const rest = await cli(["run", file, "--from", "stop-writes", "--renderer", "simple"], { cwd: dir });
    expect(rest.code, rest.all).toBe(0);
    expect(posts(s, "start")).toEqual([1]);
    expect(posts(s, "commit")).toEqual([1]);
  });

  it("--var overrides a variable; --step is refused without a terminal", async () => {
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(
      dir,
      runbookFor(s, `  - { id: hi, notify: "lag limit \${vars.lag}" }\n`, "vars: { lag: 5 }\n"),
    );
    const r = await cli(["run", file, "--var", "lag=9", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain("lag limit 9");
    const step = await cli(["run", file, "--step"], { cwd: dir });
    expect(step.code).toBe(2);
    expect(step.stderr).toContain("needs a terminal");
  });

  it("a second Ctrl-C forces the exit, even while an undo hook hangs", async () => {
    s = await sim();
    const dir = tempDir();
    const stop = `  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: shell, with: { command: [node, -e, "setTimeout(() => {}, 60000)"] }, timeout: 2m } } }\n`;
    const steps = `${START}${stop}  - { id: forever, waitFor: { canCommit: true, lagBelow: 1, timeout: 1h } }\n${COMMIT}`;
    const file = writeRunbook(dir, runbookFor(s, steps));
    // at a terminal: with none, a second signal does not force (test/run/double-interrupt.e2e)
    const run = inPty(["run", file, "--renderer", "simple"], { cwd: dir });
    await run.waitFor(/waiting \(forever\)/);
    run.type("\x03");
    await run.waitFor(/hook shell started/);
    // two signals within half a second are one Ctrl-C (issue 14 point 6): this is a second one
    await new Promise((r) => setTimeout(r, 600));
    const t = Date.now();
    run.type("\x03");
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(Date.now() - t).toBeLessThan(5000);
    expect(r.output).toContain("forced exit");
  });

  it("Ctrl-C during a wait: stops cleanly, undoes the write stop, exits 130", async () => {
    s = await sim();
    const dir = tempDir();
    // lag never drops below the simulator's 2 s floor while RUNNING: this wait only ends by Ctrl-C
    const steps = `${START}${STOP}  - { id: forever, waitFor: { canCommit: true, lagBelow: 1, timeout: 1h } }\n${COMMIT}`;
    const file = writeRunbook(dir, runbookFor(s, steps));
    const run = startCli(["run", file, "--renderer", "simple"], { cwd: dir });
    await run.waitFor(/waiting \(forever\)/);
    expect(s.control.state().writes.enabled).toBe(false);
    run.child.kill("SIGINT");
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(s.control.state().writes.enabled).toBe(true);
    expect(posts(s, "commit")).toEqual([0]);
    expect(r.all).toContain("--resume");
  });
});

describe("syncbook rehearse", () => {
  const examples = readdirSync(join(process.cwd(), "runbooks")).filter((f) => f.endsWith(".yaml"));
  it.each(examples)("runbooks/%s rehearses to COMMITTED with no write lost", async (name) => {
    const dir = tempDir();
    const r = await cli(
      ["rehearse", join(process.cwd(), "runbooks", name), "--renderer", "simple", "--report", join(dir, "out")],
      { cwd: dir },
    );
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(/ {2}committed: +COMMITTED on all \d+ instance/);
    expect(r.stdout).toMatch(/writes lost: +0/);
    // the documented order: the check during change event application, writesOff once COMMITTED
    expect(r.stdout).toMatch(/verifier: +phase idle, failedTasks 0, metadataMismatchTasks 0\n/);
    expect(r.all).toMatch(/verified: phase idle/);
    expect(existsSync(join(dir, "out", "report.html"))).toBe(true);
  });

  it("syncbook init's starter rehearses to COMMITTED, verified in the documented order", async () => {
    const dir = tempDir();
    const init = await cli(["init", "starter.yaml"], { cwd: dir });
    expect(init.code, init.all).toBe(0);
    const r = await cli(["rehearse", "starter.yaml", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(/rehearsal verdict: SAFE \(exit 0\)\n +committed: +COMMITTED on all 1 instance/);
    expect(r.stdout).toMatch(/verifier: +phase idle, failedTasks 0, metadataMismatchTasks 0\n/);
  });

  it("--keep-hooks runs the runbook's own shell hooks, pointed at the simulator: still COMMITTED, no write lost", async () => {
    const dir = tempDir();
    const r = await cli(
      ["rehearse", join(process.cwd(), "runbooks", "rs-to-sharded.yaml"), "--keep-hooks", "--renderer", "simple"],
      { cwd: dir },
    );
    expect(r.code, r.all).toBe(0);
    expect(r.all).toContain("hook shell");
    expect(r.all).toContain("application writes off");
    expect(r.stdout).toMatch(/writes lost: +0/);
  });

  it("reverse: the reversible example with --var rollback=true commits, then sends reverse; the sync runs the other way", async () => {
    const dir = tempDir();
    const r = await cli(
      [
        "rehearse",
        join(process.cwd(), "runbooks", "reversible.yaml"),
        "--var",
        "rollback=true",
        "--renderer",
        "simple",
      ],
      { cwd: dir },
    );
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(/interlock fleet-state: every instance is COMMITTED/);
    expect(r.all).toMatch(/reverse → 1\/1 ok/);
    // the fleet's word, and whose: the sync the reverse started, not committed (the first one was)
    expect(r.stdout).toContain("  committed:     not committed since the reverse (step rollback) (RUNNING)");
    // what the verifier compared before the reverse does not verify the sync after it
    expect(r.stdout).toMatch(/rehearsal verdict: NOT VERIFIED .*a reverse was sent \(step rollback\)/);
  });
});
