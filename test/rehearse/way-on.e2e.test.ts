/**
 * A rehearsal's failure names no real run's way on (src/steps/kit/context.ts `wayOn`): its
 * verifier's hints said "restart the verifier, and run again with --resume", which pasted acts on
 * the runbook's real fleet, or is refused for want of a journal a rehearsal never writes. Driven
 * by the rehearsal's own verifier faults: writesOff refused for a cluster time (src/steps/kit/
 * verifier.ts `refused`) and a progress with an error (`VerifierReader.read`). And outside a
 * step's hint (`realRunOr`): the unwind's decision after a commit sent (refused, split, in doubt),
 * the run's end after `rehearse --from commit`, continueOnError's warning, a forced exit.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { inPty } from "../support/pty.js";
import { until } from "../support/sim.js";
import {
  cli,
  COMMIT,
  CUTOVER,
  READY,
  runbookFor,
  sim,
  slowUndo,
  START,
  STOP,
  tempDir,
  writeRunbook,
} from "../support/run.js";

const sims: Simulator[] = [];
const leftovers: number[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone, as it should be
    }
  }
});

/** A real run's way on: pasted, it acts on the runbook's real fleet, or is refused for want of a journal. */
const REAL = /syncbook (run|status)|--resume|--abort|--from/;

/**
 * The lines of a rehearsal's output that name a real run's way on, but those that echo its own
 * `--from` (a step skipped before it; the commit's hint that a `--from` past the stop skips it).
 */
const realWaysOn = (all: string): string[] =>
  all.split("\n").filter((l) => REAL.test(l) && !/skipped: before --from$|\(a --from past it skips it\)/.test(l));

/** A runbook against a simulator of `instances` (the rehearsal starts its own, shaped like it). */
async function runbookOf(instances: number, steps: string): Promise<{ dir: string; file: string }> {
  const s = await sim({ instances });
  sims.push(s);
  const dir = tempDir();
  return { dir, file: writeRunbook(dir, runbookFor(s, steps).replace("timeout: 20s", "timeout: 20m")) };
}

/** A rehearsal's report.html (written with `--report out`) and its banner, whose words are checked. */
function reportBanner(out: string): { html: string; banner: string } {
  const html = readFileSync(join(out, "report.html"), "utf8");
  return { html, banner: /<header id="outcome"[\s\S]*?<\/header>/.exec(html)?.[0] ?? "" };
}

/** The failing step's hint, as the rehearsal prints it. */
const hintOf = (all: string): string | undefined => /✖ \[\d+\/\d+\][^\n]*failed[\s\S]*?hint: (.*)/.exec(all)?.[1];

describe("a rehearsal that fails at the verifier", () => {
  for (const [fault, failed] of [
    ["writes-off-refused@verifier", /✖ \[\d+\/\d+\] [^\n]* failed in \d+ms: the verifier refused writesOff: /],
    ["verifier-error=boom@verifier", /✖ \[\d+\/\d+\] [^\n]* failed in \d+ms: the verifier failed: "boom"/],
  ] as const)
    it(`names the rehearsal again, never syncbook run nor --resume (${fault})`, async () => {
      const s = await sim({ instances: 1 });
      sims.push(s);
      const dir = tempDir();
      const file = writeRunbook(dir, runbookFor(s, CUTOVER).replace("timeout: 20s", "timeout: 20m"));
      const r = await cli(["rehearse", file, "--renderer", "simple", "--yes", "--fault", fault], { cwd: dir });
      expect(r.code, r.all).toBe(1);
      expect(r.all).toMatch(failed);
      expect(hintOf(r.all), r.all).toMatch(
        /The verifier is the simulator's, stopped with the rehearsal: see why above, then rehearse again\.$/,
      );
      expect(r.all).not.toContain("syncbook run");
      expect(r.all).not.toContain("--resume");
    }, 90_000);
});

describe("a rehearsal names no real run's way on outside a step's hint either", () => {
  // an outside review: its end said "stop writes again, then go on: syncbook run rb.yaml --from
  // stop-writes" and "syncbook status rb.yaml offers --abort"
  it("`rehearse --from commit`, refused for want of a write stop: the rehearsal again from the first step", async () => {
    const { dir, file } = await runbookOf(1, CUTOVER);
    const r = await cli(["rehearse", file, "--renderer", "simple", "--yes", "--from", "commit"], { cwd: dir });
    expect(r.code, r.all).toBe(3);
    expect(r.all).toMatch(/✖ \[6\/8\] Commit failed in \d+ms: refused \(writes-stopped\)/);
    expect(realWaysOn(r.all), r.all).toEqual([]);
    expect(r.all).toContain(
      "\n  rehearse again from the first step: each rehearsal's simulator starts afresh, so one that starts at a later step has neither the sync nor the write stop of the steps before it\n",
    );
  }, 90_000);

  // the unwind's decision after a commit was sent said "complete it with --resume", "until you
  // resume, or --abort" and "(syncbook status, or --resume, which reads it first)"
  for (const [what, instances, fault, said] of [
    [
      "refused by every instance",
      1,
      "commit-refused=0",
      "✓ undo: commit was sent and every instance refused it: nothing is undone here, writes stay stopped\n",
    ],
    [
      "split",
      2,
      "commit-refused=1",
      "nothing is undone, writes stay stopped (the instances that have the commit must not see writes)\n",
    ],
    [
      "in doubt",
      1,
      "reset=1@*/commit",
      "the fleet tells whether it took effect (the rehearsal's verdict below says whether it did)\n",
    ],
  ] as const)
    it(`a commit sent and not taken (${what}): the unwind's decision names no --resume, --abort or status`, async () => {
      const { dir, file } = await runbookOf(instances, CUTOVER);
      const r = await cli(["rehearse", file, "--renderer", "simple", "--yes", "--fault", fault], { cwd: dir });
      expect(r.code, r.all).toBe(1);
      expect(r.all).toMatch(/✖ \[6\/8\] Commit failed/);
      expect(realWaysOn(r.all), r.all).toEqual([]);
      expect(r.all).toContain(said);
    }, 90_000);

  // it said "(--resume would not run this step again)"
  it("a step that failed under continueOnError: the warning names no --resume", async () => {
    const { dir, file } = await runbookOf(
      1,
      `${START}${READY}  - { id: paused, waitFor: { state: PAUSED }, timeout: 30s, continueOnError: true }\n${STOP}${COMMIT}`,
    );
    const r = await cli(["rehearse", file, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(realWaysOn(r.all), r.all).toEqual([]);
    expect(r.all).toContain("warn: step paused failed; continueOnError lets the run go on\n");
  }, 90_000);

  // the run's summary said "retry the undo with --abort (below)", with nothing below, and the
  // report offered `syncbook run rb.yaml --abort` and `--resume`: pasted, they act on the real fleet
  it("an undo of the runbook's own stop hook that failed (--keep-hooks): what to do by hand, no --abort, in the terminal and the report", async () => {
    const { dir, file } = await runbookOf(
      1,
      `${START}${READY}  - id: stop-writes
    stopWrites:
      use: shell
      with: { command: [node, -e, "0"] }
      undo: { use: shell, with: { command: [node, -e, "process.exit(3)"] } }
${COMMIT}`,
    );
    const out = join(dir, "out");
    const r = await cli(["rehearse", file, "--renderer", "simple", "--yes", "--keep-hooks", "--report", out], {
      cwd: dir,
    });
    expect(r.code, r.all).toBe(1);
    expect(r.all).toContain("✖ writes are STILL STOPPED: the undo of step 3 stop-writes (shell) did not succeed");
    const advice =
      "the rehearsal ran the runbook's own stop hook (--keep-hooks) and journaled nothing to retry its undo with: do by hand what the undo does, then check that the application writes again";
    expect(r.all.split("\n").map((l) => l.trim())).toContain(advice);
    expect(realWaysOn(r.all), r.all).toEqual([]);
    const html = readFileSync(join(out, "report.html"), "utf8");
    const stuck = /<div id="writes-still-stopped"[\s\S]*?<\/div>/.exec(html)?.[0] ?? "";
    expect(stuck, html).toContain(advice.replaceAll("'", "&#39;"));
    expect(realWaysOn(stuck), stuck).toEqual([]);
  }, 90_000);

  // an adversarial run (helper 132): with --keep-hooks, a stop hook with no `undo:` and a later step
  // that failed left the runbook's own writers stopped, and the terminal and report.html said only
  // "writes stopped … (still stopped)": no alarm, no advice
  it("the runbook's own stop hook with no undo, and a later failure (--keep-hooks): STILL STOPPED, what to do by hand, in the terminal and the report", async () => {
    const { dir, file } = await runbookOf(
      1,
      // the runbook's own hook, pointed at the rehearsal's simulator (its instance URL, rewritten)
      `${START}${READY}  - id: stop-writes
    stopWrites:
      use: http
      with: { method: POST, url: "INSTANCE/sim/writes", body: { enabled: false } }
${COMMIT}`,
    );
    writeFileSync(file, readFileSync(file, "utf8").replace("INSTANCE", sims.at(-1)!.instances[0]!.url));
    const out = join(dir, "out");
    const r = await cli(
      ["rehearse", file, "--renderer", "simple", "--yes", "--keep-hooks", "--fault", "commit-refused", "--report", out],
      { cwd: dir },
    );
    expect(r.code, r.all).toBe(1);
    const headline =
      "writes are STILL STOPPED: the rehearsal ran the runbook's own stop hook of step 3 stop-writes (http, --keep-hooks) and nothing turned the writers it stopped back on";
    const advice =
      "the rehearsal's commands went to its simulator, not to the real fleet: turn the application's writers back on by hand, then check that the application writes again";
    expect(r.all).toContain(`✖ ${headline}`);
    expect(r.all.split("\n").map((l) => l.trim())).toContain(advice);
    expect(realWaysOn(r.all), r.all).toEqual([]);
    const html = readFileSync(join(out, "report.html"), "utf8");
    const stuck = /<div id="writes-still-stopped"[\s\S]*?<\/div>/.exec(html)?.[0] ?? "";
    expect(stuck, html).toContain(headline.replaceAll("'", "&#39;"));
    expect(stuck, html).toContain(advice.replaceAll("'", "&#39;"));
    expect(realWaysOn(stuck), stuck).toEqual([]);
  }, 90_000);

  // an adversarial run (helper 132): report.html's banner after a commit in doubt said "See the
  // fleet: syncbook status rb.yaml", and a notifier's stand-in line quoted the notification's "(syncbook
  // status, or --resume, which reads it first)"
  it("a commit in doubt: report.html and the notifiers' stand-in lines name no real run's way on", async () => {
    const { dir, file } = await runbookOf(1, CUTOVER);
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        "steps:",
        'notify: [{ use: webhook, with: { url: "https://hooks.example.invalid/x" }, on: [run.finished] }]\nsteps:',
      ),
    );
    const out = join(dir, "out");
    const r = await cli(
      ["rehearse", file, "--renderer", "simple", "--yes", "--fault", "reset=1@*/commit", "--report", out],
      { cwd: dir },
    );
    expect(r.code, r.all).toBe(1);
    const standIn = r.all.split("\n").filter((l) => l.includes("notification not sent:"));
    expect(standIn.join("\n"), r.all).toContain("a commit was sent and may hold");
    expect(realWaysOn(standIn.join("\n")), r.all).toEqual([]);
    const { html, banner } = reportBanner(out);
    expect(banner, html).toContain("commit in doubt");
    expect(realWaysOn(banner), banner).toEqual([]);
  }, 90_000);

  // it said "the cutover goes on (--resume): syncbook status rb.yaml shows where"
  it("a rehearsal stopped at --to: report.html's banner names no --resume or status", async () => {
    const { dir, file } = await runbookOf(1, CUTOVER);
    const out = join(dir, "out");
    const r = await cli(["rehearse", file, "--renderer", "simple", "--yes", "--to", "ready", "--report", out], {
      cwd: dir,
    });
    expect(r.code, r.all).toBe(0);
    const { html, banner } = reportBanner(out);
    expect(banner, html).toContain("The rehearsal ended ok at --to ready");
    expect(realWaysOn(banner), banner).toEqual([]);
  }, 90_000);

  // it said "no write stop of this cutover is in the journals of the runbook's .syncbook folder: …
  // run again with --journal-dir <that folder>"
  it("`rehearse --from verify`, refused for want of a write stop: the rehearsal again from the first step, no journals", async () => {
    const { dir, file } = await runbookOf(1, CUTOVER);
    const r = await cli(["rehearse", file, "--renderer", "simple", "--yes", "--from", "verify"], { cwd: dir });
    expect(r.code, r.all).toBe(3);
    expect(r.all).not.toMatch(/journal-dir|in the journals of/);
    expect(realWaysOn(r.all), r.all).toEqual([]);
    expect(r.all).toContain("\n  rehearse again from the first step:");
  }, 90_000);

  // a forced exit (Ctrl-C twice at a terminal) during an undo said "--abort runs the undos still
  // owed …; --resume goes on with the cutover … go on later only with syncbook run … --from"
  it("a forced exit during an undo: what it says of writes, then the rehearsal again", async () => {
    const { dir, file } = await runbookOf(
      1,
      `${STOP}  - id: pause
    hook:
      use: shell
      with: { command: [node, -e, "0"] }
      undo: { use: shell, with: { command: [node, slow-undo.mjs, pids.json] }, timeout: 2m }
  - { id: never, waitFor: { state: COMMITTED }, timeout: 60m }
`,
    );
    // an undo that is slow, and writes its pid (and its child's) once it runs
    const pids = slowUndo(dir);
    const run = inPty(["rehearse", file, "--renderer", "simple", "--yes", "--keep-hooks"], { cwd: dir });
    await run.waitFor(/\[3\/3\]/, 30_000);
    run.type("\x03");
    await until(() => existsSync(pids) && readFileSync(pids, "utf8").length > 2, 20_000);
    leftovers.push(...(JSON.parse(readFileSync(pids, "utf8")) as number[]));
    // two within a few hundred milliseconds count as one
    await new Promise((r) => setTimeout(r, 600));
    run.type("\x03");
    const { output } = await run.done;
    const out = output.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, "g"), "").replace(/\r/g, "");
    expect(realWaysOn(out), out).toEqual([]);
    expect(out).toContain(
      'forced exit: the undo of step 2 "pause" (shell) was running and was killed with its processes',
    );
    expect(out).toContain(
      "forced exit: writes are still stopped: the undo of step 1 \"stop-writes\" did not run. These writes are the rehearsal's simulated application's, stopped with it, unless the rehearsal ran the runbook's own hooks (--keep-hooks): then check the application's writers, and turn them back on by hand where its stop left them off. Then rehearse again.",
    );
  }, 90_000);
});
