/**
 * The operator after a split commit (sync2 refused it, sync0 and sync1 hold it in commit's round)
 * and a newer cutover of the same runbook left unfinished (`--new-cutover --from stop-writes --to
 * stop-writes`): every refusal on the way names a command, and that command, pasted as it is, is
 * accepted, until the commit reaches sync2 and the runbook's last step turns writes back on. A
 * terminal trial found a loop: the earlier-cutover check offered `--new-cutover --from commit
 * --only …` (a new cutover has no write stop of its own, so writes-stopped refused it), whose way
 * on, `--from stop-writes`, the earlier-cutover check refused again, offering `--from commit
 * --only …` of that cutover, which writes-stopped refused again.
 *
 * The test follows the offered commands literally: the one command each refusal offers for this
 * state (the commit never reached sync2: `status` shows it) is taken from the output, the
 * placeholder `<the instances it did not reach>` replaced by `sync2`, and run with `--yes` (the
 * answer to the commit's confirmation) and `--renderer simple`. The built CLI against the
 * simulator over loopback; what the service received is read from the simulator.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli } from "../support/run.js";
import {
  cleanedUpAfterAll,
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  cutoverYaml,
  DRAINED,
  fastSim,
  posts,
  READY,
  START,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/**
 * The command a refusal (or a run's end) offers as the way on in this state, by the words that
 * lead to it; undefined when none of them is in `out`. Each lead-in is the one an operator who
 * sees the fleet (sync2 never got the commit, the others hold it) would follow.
 */
const WAYS_ON: readonly RegExp[] = [
  // the earlier-cutover check: "If it shows the commit never reached some instances …"
  /send it only to those: (syncbook run .*?)\.(?: |$)/m,
  // writes-stopped at the run's end
  /stop writes again, then go on: (syncbook run .*)$/m,
  // --abort refused while an earlier cutover's commit may take effect
  /Finish that commit where it did not arrive \(writes stay stopped for it\): (syncbook run .*?)\.(?: |$)/m,
  // the unfinished cutover's own journal, for a new cutover
  /Go on with the last cutover: (syncbook run .*? --resume)/m,
  // a --to run's end, and a failed run's
  /the cutover goes on with: (syncbook run .*? --resume)/m,
  /resume with: (syncbook run .*)$/m,
];

function offered(out: string): string | undefined {
  // after the split a commit is on the fleet: no --abort is offered beside the stop again (a review
  // followed one into a refusal)
  if (/stop writes again, then go on:/.test(out)) expect(out).not.toMatch(/syncbook run \S+ --abort/);
  for (const re of WAYS_ON) {
    const m = re.exec(out);
    if (m) return m[1]!.replaceAll("<the instances it did not reach>", "sync2");
  }
  return undefined;
}

/** A hook whose undo turns no writes on: a newer cutover that runs it acts, and `--abort` calls it off. */
const NOTICE = `  - { id: notice, hook: { use: shell, with: { command: [node, -e, "0"] }, undo: { use: shell, with: { command: [node, -e, "0"] } } } }\n`;

/**
 * A 3-instance fleet (sync2 refuses commit), a runbook whose last step turns the application's
 * writes back on, its split commit, and a newer cutover that stopped writes and was left there;
 * or (`calledOff`) one that ran a hook before the write stop and was called off with `--abort`,
 * so that no cutover is unfinished.
 */
async function splitThenNewer(calledOff = false) {
  const sim = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
  made.sims.push(sim);
  const dir = tempDir();
  made.dirs.push(dir);
  const file = join(dir, "rb.yaml");
  const writesOn = `  - { id: writes-on, hook: { use: sim-writes, with: { url: "${sim.verifierUrl}", enabled: true } } }\n`;
  writeFileSync(
    file,
    cutoverYaml(sim, {
      defaults: CLI_CUTOVER_DEFAULTS,
      steps:
        START + READY + (calledOff ? NOTICE : "") + stopVia(sim.verifierUrl) + DRAINED + COMMIT + COMMITTED + writesOn,
    }),
  );
  const watch = writesWatch(sim);
  const run = (args: readonly string[]) => cli(["run", file, "--renderer", "simple", ...args], { cwd: dir });
  sim.control.addFault("commit-refused@2");
  const first = await run(["--yes"]);
  let log = `--- syncbook run rb.yaml --yes\n${first.all}`;
  expect(first.code, log).toBe(1);
  expect(first.all, log).toContain("split: commit reached 2 of 3 instances (refused by sync2)");
  expect(posts(sim, "commit"), log).toEqual([1, 1, 1]);
  sim.control.clearFaults();
  const step = calledOff ? "notice" : "stop-writes";
  const newer = await run(["--new-cutover", "--from", step, "--to", step, "--yes"]);
  log += `\n--- --new-cutover --from ${step} --to ${step}\n${newer.all}`;
  expect(newer.code, log).toBe(0);
  if (calledOff) {
    const abort = await run(["--abort", "--yes"]);
    log += `\n--- --abort\n${abort.all}`;
    expect(abort.code, log).toBe(0);
  }
  return { sim, file, dir, run, watch, log };
}

/**
 * Every few milliseconds until `stop`: whether the application's writes were on while a commit
 * had been sent and some instance was not yet COMMITTED (a commit held in its round, or one still
 * to come, would lose them).
 */
function writesWatch(sim: Simulator): { stop: () => string[] } {
  const seen: string[] = [];
  const look = () => {
    // the simulator is closed after the file's tests: nothing to watch then
    let st: ReturnType<typeof sim.control.state>;
    try {
      st = sim.control.state();
    } catch {
      return;
    }
    const sent = posts(sim, "commit").some((n) => n > 0);
    if (st.writes.enabled && sent && st.instances.some((i) => i.state !== "COMMITTED"))
      seen.push(`writes on with ${st.instances.map((i) => `sync${i.index} ${i.state}`).join(", ")}`);
  };
  const timer = setInterval(look, 5).unref();
  return {
    stop: () => {
      clearInterval(timer);
      look();
      return seen;
    },
  };
}

describe("after a split commit and a newer cutover of the runbook, every way on offered is accepted", () => {
  it.each([
    [
      "--new-cutover --from commit (the terminal trial's)",
      ["--new-cutover", "--from", "commit"],
      "--new-cutover --from stop-writes --only sync2",
    ],
    ["--from commit", ["--from", "commit"], "--from stop-writes --only sync2"],
    ["the newer cutover's own way on, --resume", ["--resume"], "--from stop-writes --only sync2"],
    // the command the earlier-cutover check offered before: writes-stopped refuses it (a new
    // cutover has no write stop of its own), and its way on kept no --only
    [
      "--new-cutover --from commit --only sync2",
      ["--new-cutover", "--from", "commit", "--only", "sync2"],
      "--from stop-writes --only sync2",
    ],
  ])(
    "%s: followed literally, the commit reaches sync2 alone, and writes go on only after",
    async (_, first, way) => {
      await followedToTheEnd(await splitThenNewer(), first, way);
    },
    180_000,
  );

  // no cutover unfinished: a --from run starts a new one, with no write stop of its own, and the
  // way on the earlier-cutover check offered (`--from commit --only …`) was refused by
  // writes-stopped, whose `--from stop-writes` the earlier-cutover check refused again: a loop
  it("a newer cutover called off: --from commit, followed literally, goes through", async () => {
    await followedToTheEnd(await splitThenNewer(true), ["--from", "commit"], "--from stop-writes --only sync2");
  }, 180_000);

  // the writes-stopped way on keeps the run's --to as well as its --only (an outside review: a run
  // that needed its --to was offered one without it)
  it("a newer cutover called off: --from commit --only sync2 --to writes-on, its way on keeps --only and --to", async () => {
    await followedToTheEnd(
      await splitThenNewer(true),
      ["--from", "commit", "--only", "sync2", "--to", "writes-on"],
      "--from stop-writes --only sync2 --to writes-on",
    );
  }, 180_000);
});

/**
 * Runs `first`, then the command each refusal offers (`offered`), until every instance is
 * COMMITTED: the command offered must be `way`, and go through. What the service received, and
 * the writes, are read from the simulator.
 */
async function followedToTheEnd(
  c: Awaited<ReturnType<typeof splitThenNewer>>,
  first: readonly string[],
  way: string,
): Promise<void> {
  let log = c.log;
  let args: readonly string[] = first;
  const ran: string[] = [];
  for (;;) {
    const line = args.join(" ");
    ran.push(line);
    const r = await c.run([...args, "--yes"]);
    log += `\n--- ${line} (exit ${r.code})\n${r.all}`;
    // never a second commit to the instances holding the first
    expect(posts(c.sim, "commit").slice(0, 2), log).toEqual([1, 1]);
    if (r.code === 0 && c.sim.control.state().instances.every((i) => i.state === "COMMITTED")) break;
    // the operator's own command may be refused; a command a refusal offered must go through
    expect(ran.length, `${log}\n--- the command offered was not accepted`).toBe(1);
    const next = offered(r.all);
    expect(next, `${log}\n--- exit ${r.code}, and no way on offered`).toBeDefined();
    const [syncbook, run, file, ...rest] = next!.split(" ");
    expect([syncbook, run, file], log).toEqual(["syncbook", "run", c.file]);
    args = rest;
  }
  const st = c.sim.control.state();
  const lateWrites = c.watch.stop();
  // commit: once to sync0 and sync1 (the split run's), twice to sync2 (refused, then accepted)
  expect(posts(c.sim, "commit"), log).toEqual([1, 1, 2]);
  expect(
    st.instances.map((i) => i.state),
    log,
  ).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
  // the runbook's last step turned writes on, and only once the commit had taken effect everywhere
  expect(st.writes.enabled, log).toBe(true);
  expect(lateWrites, log).toEqual([]);
  expect(ran, log).toEqual([first.join(" "), way]);
}
