/**
 * An undo made of other `--var` values than its hook ran with. A runbook whose write stop goes
 * through `${vars.switch}`, run with `--var switch=<the live switch>` and killed with writes
 * stopped: the `--abort` (or `--resume`) an operator types without the `--var` made the undo from
 * the runbook's default, turned on another switch, and said "writes are back on" while the
 * application's stayed stopped (found by an adversarial run). Now refused before anything runs,
 * naming the values; the command it offers, and the one `status` offers, carry the run's values,
 * and run verbatim they undo where the hook stopped. The built CLI against two simulators.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanedUpAfterAll,
  failingHook,
  failTimesArgv,
  fastSim,
  tempDir,
  WRITE_SWITCH,
} from "../support/crash-harness.js";
import { cutoverYaml, DRAINED, READY, START, STOP, COMMIT, COMMITTED, stopVia } from "../support/crash-harness.js";
import { shellCommand } from "../../src/text.js";
import { cli, startCli, watchState } from "../support/run.js";
import type { Simulator } from "../../src/sim/index.js";

const made = cleanedUpAfterAll();

/** A `syncbook run …` line as printed (shell-quoted) → its arguments after `syncbook`. */
function argvOf(line: string): string[] {
  const out = execFileSync("sh", ["-c", `set -- ${line}; for a in "$@"; do printf '%s\\0' "$a"; done`], {
    encoding: "utf8",
  });
  return out.split("\0").slice(0, -1);
}

/** The command after "syncbook " on the first line of `text` that holds `syncbook run … <tail>`. */
function offered(text: string, tail: string): string[] {
  const m = new RegExp(`syncbook (run \\S+(?: --var \\S+)* ${tail})(?=[\\s.]|$)`).exec(text);
  if (!m?.[1]) throw new Error(`no "syncbook run … ${tail}" in:\n${text}`);
  return argvOf(m[1]);
}

/**
 * The cutover's fleet `s` (with `opts`), another environment's `other` (its verifier's port serves
 * the other switch), and a folder: each cleaned up after all.
 */
async function twoFleets(opts: Parameters<typeof fastSim>[0] = {}) {
  const s = await fastSim({ timeScale: 100, ...opts });
  const other = await fastSim({ timeScale: 100 });
  made.sims.push(s, other);
  const dir = tempDir();
  made.dirs.push(dir);
  return { s, other, dir };
}

/** The write stop through `${vars.switch}`, and its undo. */
const STOP_VIA_SWITCH =
  '  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${vars.switch}" }, undo: { use: sim-writes, with: { url: "${vars.switch}", enabled: true } } } }\n';

/** A runbook whose `switch` defaults to `other`'s, a gate that fails once before the write stop, then `after`. */
async function gateBeforeSwitch(after: string, instances = 1) {
  const { s, other, dir } = await twoFleets({ instances });
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(s, { steps: START + READY + failingHook(dir, "gate", 1) + STOP_VIA_SWITCH + after }).replace(
      /^steps:\n/m,
      `vars: { switch: "${other.verifierUrl}" }\nsteps:\n`,
    ),
  );
  const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
  return { s, other, dir, run };
}

/**
 * A committed cutover whose gate after the commit failed under continueOnError, its write-on hook
 * through `${vars.switch}` after it: the switch the runbook's default (`s`'s) or `given`. Then the
 * switch is off again and the runbook's default names `other`'s: a step to run again, of a runbook
 * changed since.
 */
async function committedPastGate(given?: (s: Simulator) => string) {
  const { s, other, dir } = await twoFleets();
  const file = join(dir, "rb.yaml");
  const GATE = failingHook(dir, "gate", 1).replace(/ }\n$/, ", continueOnError: true }\n");
  const WRITES_ON =
    '  - { id: app-on, hook: { use: sim-writes, with: { url: "${vars.switch}", enabled: true }, writesOn: true } }\n';
  const steps = START + READY + STOP_VIA_SWITCH + DRAINED + COMMIT + COMMITTED + GATE + WRITES_ON;
  const text = (at: Simulator) =>
    cutoverYaml(s, { steps }).replace(/^steps:\n/m, `vars: { switch: "${at.verifierUrl}" }\nsteps:\n`);
  writeFileSync(file, text(s));
  other.control.setWrites({ enabled: false });
  const vars = given ? ["--var", `switch=${given(s)}`] : [];
  const first = await cli(["run", file, "--renderer", "simple", "--yes", ...vars], { cwd: dir });
  expect(first.code, first.all).toBe(0);
  expect(first.all).toContain("step gate failed and the run went on past it (continueOnError)");
  s.control.setWrites({ enabled: false });
  writeFileSync(file, text(other));
  return { s, other, dir, file };
}

async function killedWithWritesStopped(stop = STOP_VIA_SWITCH) {
  // lag stays at 4 s: ready (below 5) passes, drained (below 3) never does
  const { s, other, dir } = await twoFleets({ instances: 3, faults: ["lag-floor=4"] });
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(s, { steps: START + READY + stop + DRAINED + COMMIT + COMMITTED }).replace(
      /^steps:\n/m,
      `vars: { switch: "${other.verifierUrl}" }\nsteps:\n`,
    ),
  );
  const child = startCli(["run", file, "--renderer", "simple", "--var", `switch=${s.verifierUrl}`], { cwd: dir });
  await child.waitFor(/▶ \[4\/6\] waitFor/, 30_000);
  child.child.kill("SIGKILL");
  await child.done;
  expect(s.control.state().writes.enabled, "the write stop held when the runner died").toBe(false);
  return { s, other, dir, file };
}

/**
 * A fleet `s` the cutover runs on (`--var fleet=`), the fleet `n` it may move to (a sync its own
 * runbook started, RUNNING, which could be committed), and `other`, the runbook's default fleet,
 * whose write switch is off: `rb.yaml`'s instances are `${vars.fleet}`, its `vars:` line `vars`.
 */
async function movableFleet(steps: (s: Simulator, dir: string) => string, vars: (other: Simulator) => string) {
  const s = await fastSim({ timeScale: 100 });
  const n = await fastSim({ timeScale: 100 });
  const other = await fastSim({ timeScale: 100 });
  made.sims.push(s, n, other);
  const dir = tempDir();
  made.dirs.push(dir);
  const staging = join(dir, "staging.yaml");
  writeFileSync(staging, cutoverYaml(n, { name: "staging", steps: START + READY }));
  const staged = await cli(["run", staging, "--renderer", "simple"], { cwd: dir });
  expect(staged.code, staged.all).toBe(0);
  other.control.setWrites({ enabled: false });
  const file = join(dir, "rb.yaml");
  writeFileSync(
    file,
    cutoverYaml(s, { urls: ["${vars.fleet}"], steps: steps(s, dir) }).replace(
      /^steps:\n/m,
      `vars: ${vars(other)}\nsteps:\n`,
    ),
  );
  const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
  return { s, n, other, dir, file, run };
}

/** A commit that reaches `sim`'s first instance by hand (a person, another runner): no journal shows it. */
async function commitByHand(sim: Simulator): Promise<void> {
  const byHand = await fetch(`${sim.instances[0]!.url}/api/v1/commit`, { method: "POST", body: "{}" });
  expect(byHand.status).toBe(200);
}

describe("an owed undo and the --var values its hook ran with", () => {
  it("--abort and --resume without them are refused, nothing undone elsewhere; the commands offered carry them and undo where the hook stopped", async () => {
    const { s, other, dir, file } = await killedWithWritesStopped();
    // the other switch off: an undo that reached it would turn it on
    await fetch(`${other.verifierUrl}/sim/writes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ enabled: false }),
    });
    const otherOn = () => other.control.state().writes.enabled;

    const abort = await cli(["run", file, "--renderer", "simple", "--abort"], { cwd: dir });
    expect(abort.code, abort.all).toBe(2);
    expect(abort.all).toContain(
      `step 3 "stop-writes" ran with switch=${s.verifierUrl}, this run has switch=${other.verifierUrl}: the undo it owes would be made of this run's values, and go where its hook did not; nothing was run, and what the hook did still holds`,
    );
    expect(abort.all).not.toMatch(/writes are back on/);
    const resume = await cli(["run", file, "--renderer", "simple", "--resume"], { cwd: dir });
    expect(resume.code, resume.all).toBe(2);
    expect(resume.all).toMatch(/cannot resume from .*: step 3 "stop-writes" ran with switch=/);
    expect(s.control.state().writes.enabled, "still stopped").toBe(false);
    expect(otherOn(), "no undo reached the other switch").toBe(false);

    // status offers the way on with the run's values
    const st = await cli(["status", file], { cwd: dir });
    expect(st.all).toContain(`--abort --var switch=${s.verifierUrl}`);
    expect(st.all).toContain(`--resume --var switch=${s.verifierUrl}`);
    // the refusal's own command, run as printed
    const again = offered(abort.all, "--abort");
    expect(again).toContain(`switch=${s.verifierUrl}`);
    const ok = await cli([...again, "--renderer", "simple"], { cwd: dir });
    expect(ok.code, ok.all).toBe(0);
    expect(ok.all).toMatch(/writes are back on/);
    expect(s.control.state().writes.enabled, "back on where the hook stopped them").toBe(true);
    expect(otherOn(), "nothing sent to the other switch").toBe(false);
  });

  // the steps still to run made of another switch: the write stop went to a switch the application
  // does not use, and the commit after it went out while its writes flowed. Said before, not refused
  it("a --resume whose steps still to run would use other values is refused unless --allow-changed-runbook; the offered command goes on with the cutover's", async () => {
    const { s, other, dir, run } = await gateBeforeSwitch(DRAINED + COMMIT + COMMITTED);
    const first = await run("--var", `switch=${s.verifierUrl}`);
    expect(first.code, first.all).toBe(1);
    expect(first.all).toMatch(/step gate failed/);

    const resume = await run("--resume");
    const where = `${first.all}\n--- --resume (no --var)\n${resume.all}`;
    expect(resume.code, where).toBe(2);
    expect(resume.all, where).toContain(
      `this run has switch=${other.verifierUrl} (the run it continues had switch=${s.verifierUrl}): the steps still to run are made of these values, not the ones the cutover ran with until now; nothing was run`,
    );
    expect(resume.all, where).toContain("To go on with the new values on purpose, add --allow-changed-runbook.");
    expect(other.control.state().writes.enabled, "nothing stopped on the other switch").toBe(true);
    expect(s.control.state().writes.enabled).toBe(true);

    // the command it offers carries the cutover's values, and goes on where the cutover was going
    const again = offered(resume.all, "--resume");
    expect(again).toContain(`switch=${s.verifierUrl}`);
    const ok = await cli([...again, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(ok.code, `${where}\n--- offered\n${ok.all}`).toBe(0);
    expect(s.control.state().writes.enabled, "stopped where the cutover's switch is").toBe(false);
    expect(other.control.state().writes.enabled, "the other switch untouched").toBe(true);
  });

  // an outside review: a --from the write stop typed without the cutover's --var stopped the
  // runbook's default switch, the commit interlock counted it, and the commit went out while the
  // real source wrote (3,005,067 writes lost): --from is refused as --resume is
  it("a --from run whose steps would use other values is refused unless --allow-changed-runbook; the offered command goes on with the cutover's", async () => {
    const { s, other, dir, run } = await gateBeforeSwitch(DRAINED + COMMIT + COMMITTED);
    const first = await run("--var", `switch=${s.verifierUrl}`);
    expect(first.code, first.all).toBe(1);
    const from = await run("--from", "stop-writes", "--yes");
    const where = `${first.all}\n--- --from stop-writes (no --var)\n${from.all}`;
    expect(from.code, where).toBe(2);
    expect(from.all, where).toContain(
      `from stop-writes: this run has switch=${other.verifierUrl} (the run it continues had switch=${s.verifierUrl})`,
    );
    expect(other.control.state().writes.enabled, "nothing stopped on the other switch").toBe(true);
    expect(s.control.state().instances.map((i) => i.state)).not.toContain("COMMITTED");
    const again = offered(from.all, "--from stop-writes");
    expect(again).toContain(`switch=${s.verifierUrl}`);
    const ok = await cli([...again, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(ok.code, `${where}\n--- offered\n${ok.all}`).toBe(0);
    expect(s.control.state().writes.enabled, "stopped where the cutover's switch is").toBe(false);
    expect(other.control.state().writes.enabled, "the other switch untouched").toBe(true);
    expect(s.control.state().writes.lost).toBe(0);
  });

  // the commit reads the write stop's check again right before it is sent: a --from past the stop
  // without the cutover's --var read the runbook's default switch, found it off, and the commit
  // went out while the cutover's switch was on again (a person at it). (A --resume is refused
  // already: the stop owes an undo made of the switch, \`undoVarsDiffer\`.)
  it("a --from past the write stop, whose check the commit would read on another switch, is refused; with the cutover's values the check sees writes on and the commit is refused", async () => {
    const CHECKED_VIA_SWITCH =
      '  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${vars.switch}" }, undo: { use: sim-writes, with: { url: "${vars.switch}", enabled: true } }, check: { use: sim-writes-stopped, with: { url: "${vars.switch}" } } } }\n';
    const { s, other, dir, file } = await killedWithWritesStopped(CHECKED_VIA_SWITCH);
    // the other switch off (its check would pass), the cutover's back on by hand
    other.control.setWrites({ enabled: false });
    s.control.setWrites({ enabled: true });
    s.control.clearFaults();
    const states = () => s.control.state().instances.map((i) => i.state);

    const from = await cli(["run", file, "--renderer", "simple", "--from", "drained", "--yes"], { cwd: dir });
    const where = `--- --from drained (no --var)\n${from.all}`;
    expect(from.code, where).toBe(2);
    expect(from.all, where).toContain(
      `from drained: this run has switch=${other.verifierUrl} (the run it continues had switch=${s.verifierUrl})`,
    );
    expect(states(), where).not.toContain("COMMITTING");
    expect(states(), where).not.toContain("COMMITTED");
    // the command it offers reads the cutover's switch: writes on, the commit refused
    const again = offered(from.all, "--from drained");
    expect(again).toContain(`switch=${s.verifierUrl}`);
    const ok = await cli([...again, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(ok.code, `${where}\n--- offered\n${ok.all}`).toBe(3);
    expect(ok.all).toContain("application writes are not seen stopped now");
    expect(states()).not.toContain("COMMITTED");
    expect(s.control.state().writes.lost).toBe(0);
  });

  // a cutover that ended ok, its write-on hook run again (--from it, the run counted after its
  // commit): typed without the cutover's --var, it turned on the runbook's default switch, another
  // environment's, and said the application's writes were back on
  it("a --from after the commit of a cutover that ended, whose steps would use other values, is refused; the offered command uses the cutover's switch", async () => {
    const WRITES_ON =
      '  - { id: app-on, hook: { use: sim-writes, with: { url: "${vars.switch}", enabled: true }, writesOn: true } }\n';
    const { s, other, dir, run } = await gateBeforeSwitch("");
    writeFileSync(
      join(dir, "rb.yaml"),
      cutoverYaml(s, { steps: START + READY + STOP_VIA_SWITCH + DRAINED + COMMIT + COMMITTED + WRITES_ON }).replace(
        /^steps:\n/m,
        `vars: { switch: "${other.verifierUrl}" }\nsteps:\n`,
      ),
    );
    other.control.setWrites({ enabled: false });
    const first = await run("--var", `switch=${s.verifierUrl}`, "--yes");
    expect(first.code, first.all).toBe(0);
    expect(s.control.state().writes.enabled, "back on after the commit").toBe(true);

    const from = await run("--from", "app-on", "--yes");
    const where = `${first.all}\n--- --from app-on (no --var)\n${from.all}`;
    expect(from.code, where).toBe(2);
    expect(from.all, where).toContain(
      `from app-on: this run has switch=${other.verifierUrl} (the run it continues had switch=${s.verifierUrl})`,
    );
    expect(other.control.state().writes.enabled, "the other environment's switch untouched").toBe(false);
    const again = offered(from.all, "--from app-on");
    expect(again).toContain(`switch=${s.verifierUrl}`);
    const ok = await cli([...again, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(ok.code, `${where}\n--- offered\n${ok.all}`).toBe(0);
    expect(other.control.state().writes.enabled, "the other switch untouched").toBe(false);
  });

  // an outside review (helper 87): the refusal of a --from after the commit of a runbook changed
  // since offered `--from … --allow-changed-runbook` without the --var typed: run as printed, it went
  // on with the runbook's default switch
  it("a --from after the commit, of a runbook changed since, offers --allow-changed-runbook with the cutover's values, which turns on the cutover's switch", async () => {
    const WRITES_ON =
      '  - { id: app-on, hook: { use: sim-writes, with: { url: "${vars.switch}", enabled: true }, writesOn: true } }\n';
    const { s, other, dir, run } = await gateBeforeSwitch("");
    const file = join(dir, "rb.yaml");
    const text = cutoverYaml(s, {
      steps: START + READY + STOP_VIA_SWITCH + DRAINED + COMMIT + COMMITTED + WRITES_ON,
    }).replace(/^steps:\n/m, `vars: { switch: "${other.verifierUrl}" }\nsteps:\n`);
    writeFileSync(file, text);
    other.control.setWrites({ enabled: false });
    const first = await run("--var", `switch=${s.verifierUrl}`, "--yes");
    expect(first.code, first.all).toBe(0);
    expect(s.control.state().writes.enabled, "back on after the commit").toBe(true);
    // the write-on hook is to be run again: the switch is off again, and the runbook edited
    s.control.setWrites({ enabled: false });
    writeFileSync(file, `# edited after the cutover\n${text}`);
    const from = await run("--var", `switch=${s.verifierUrl}`, "--from", "app-on", "--yes");
    expect(from.code, from.all).toBe(2);
    expect(from.all).toContain("the runbook changed since that run");
    const again = offered(from.all, "--from app-on --allow-changed-runbook");
    expect(again).toContain(`switch=${s.verifierUrl}`);
    const ok = await cli([...again, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(ok.code, ok.all).toBe(0);
    expect(s.control.state().writes.enabled, "the cutover's switch on").toBe(true);
    expect(other.control.state().writes.enabled, "the other switch untouched").toBe(false);
  });

  // the 17:01 session's closing note, reproduced: status and the watch page offered `--from <step>
  // --allow-changed-runbook` with the journal's given values alone. A value the cutover took from
  // the runbook's old default was left out, and pasted, the flag read the default now: the write-on
  // hook turned on another environment's switch
  it("after the commit, a step to run again of a runbook changed since: status and the watch page offer it with the switch the cutover took from the old default; pasted, it turns that switch on", async () => {
    const { s, other, dir, file } = await committedPastGate();
    const way = `--from gate --allow-changed-runbook --var switch=${s.verifierUrl}`;
    const told = await cli(["status", file], { cwd: dir });
    expect(told.all).toContain(`next:\n    syncbook run ${file} ${way}\n`);
    const json = await cli(["status", file, "--json"], { cwd: dir });
    const st = JSON.parse(json.stdout) as { file: string; journal: { next: { runs: { args: string }[] } } };
    expect(st.journal.next.runs.map((r) => r.args)).toEqual([way]);
    // the watch page, given the runbook, offers the same
    const page = await watchState([file], dir);
    expect(page.runner.next).toBe(`syncbook run ${file} ${way}   (step gate failed, and the run went on past it)`);
    // pasted as status offers it: the cutover's switch on, the other untouched
    const argv = ["run", st.file, ...argvOf(st.journal.next.runs[0]!.args), "--renderer", "simple", "--yes"];
    const again = await cli(argv, { cwd: dir });
    expect(again.code, again.all).toBe(0);
    expect(s.control.state().writes.enabled, "the cutover's switch on").toBe(true);
    expect(other.control.state().writes.enabled, "the other switch untouched").toBe(false);
  });

  // an outside review (helper 89's scenE), reproduced: a text default that reads as a number
  // (`tenant: "007"`) could not be named with --var, and the offer said so in a note alone; pasted
  // unedited, with the default edited to "042", the hook ran for tenant 042. Named in double
  // quotes now, which --var reads as that text
  it("after the commit, a text value that reads as a number is offered in double quotes; pasted, the hook runs with the cutover's text", async () => {
    const { s, dir } = await twoFleets();
    const file = join(dir, "rb.yaml");
    writeFileSync(
      join(dir, "record.mjs"),
      'import { appendFileSync } from "node:fs";\nappendFileSync(process.argv[2], `${process.argv[3]}\\n`);\n',
    );
    const seen = join(dir, "tenants.txt");
    const GATE = failingHook(dir, "gate", 1).replace(/ }\n$/, ", continueOnError: true }\n");
    const RECORD = `  - { id: tenant, hook: { use: shell, with: { command: [${[process.execPath, join(dir, "record.mjs"), seen].map((a) => JSON.stringify(a)).join(", ")}, "\${vars.tenant}"] } } }\n`;
    const WRITES_ON = `  - { id: app-on, hook: { use: sim-writes, with: { url: "${s.verifierUrl}", enabled: true }, writesOn: true } }\n`;
    const steps = START + READY + stopVia(s.verifierUrl) + DRAINED + COMMIT + COMMITTED + GATE + RECORD + WRITES_ON;
    const text = (tenant: string) =>
      cutoverYaml(s, { steps }).replace(/^steps:\n/m, `vars: { tenant: "${tenant}" }\nsteps:\n`);
    writeFileSync(file, text("007"));
    const first = await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(first.code, first.all).toBe(0);
    expect(readFileSync(seen, "utf8")).toBe("007\n");
    writeFileSync(file, text("042"));
    const way = `--from gate --allow-changed-runbook --var 'tenant="007"'`;
    const told = await cli(["status", file], { cwd: dir });
    expect(told.all).toContain(`next:\n    syncbook run ${file} ${way}\n`);
    expect(told.all).not.toContain("cannot give");
    const page = await watchState([file], dir);
    expect(page.runner.next).toContain(way);
    const json = await cli(["status", file, "--json"], { cwd: dir });
    const st = JSON.parse(json.stdout) as { file: string; journal: { next: { runs: { args: string }[] } } };
    const again = await cli(
      ["run", st.file, ...argvOf(st.journal.next.runs[0]!.args), "--renderer", "simple", "--yes"],
      {
        cwd: dir,
      },
    );
    expect(again.code, again.all).toBe(0);
    expect(readFileSync(seen, "utf8"), "the cutover's tenant, as text").toBe("007\n007\n");
  });

  // the cutover's values outlive a run that did not read them: a --from the last step (which reads
  // no variable) typed without the --var made the runbook's default switch "the run it continues
  // had"; a --from the write-on hook then went through without the --var, and turned on another
  // environment's switch, while the one typed with the cutover's switch was refused, offering the
  // default
  it("a --from run whose steps read none of the cutover's --var values leaves them the cutover's: a later --from that reads them is judged by them", async () => {
    const WRITES_ON =
      '  - { id: app-on, hook: { use: sim-writes, with: { url: "${vars.switch}", enabled: true }, writesOn: true } }\n';
    const { s, other, dir, run } = await gateBeforeSwitch("");
    writeFileSync(
      join(dir, "rb.yaml"),
      cutoverYaml(s, {
        steps: START + READY + STOP_VIA_SWITCH + DRAINED + COMMIT + COMMITTED + WRITES_ON + failingHook(dir, "tail", 1),
      }).replace(/^steps:\n/m, `vars: { switch: "${other.verifierUrl}" }\nsteps:\n`),
    );
    other.control.setWrites({ enabled: false });
    const first = await run("--var", `switch=${s.verifierUrl}`, "--yes");
    expect(first.code, first.all).toBe(1);
    expect(first.all).toMatch(/step tail failed/);
    expect(s.control.state().writes.enabled, "back on after the commit").toBe(true);
    const tail = await run("--from", "tail", "--yes");
    let where = `${first.all}\n--- --from tail (no --var, none read)\n${tail.all}`;
    expect(tail.code, where).toBe(0);

    const from = await run("--from", "app-on", "--yes");
    where += `\n--- --from app-on (no --var)\n${from.all}`;
    expect(from.code, where).toBe(2);
    expect(from.all, where).toContain(
      `from app-on: this run has switch=${other.verifierUrl} (the run it continues had switch=${s.verifierUrl})`,
    );
    expect(other.control.state().writes.enabled, "the other environment's switch untouched").toBe(false);
    const again = offered(from.all, "--from app-on");
    expect(again).toContain(`switch=${s.verifierUrl}`);
    const ok = await cli([...again, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(ok.code, `${where}\n--- offered\n${ok.all}`).toBe(0);
    expect(other.control.state().writes.enabled, "the other switch untouched").toBe(false);
  });

  // an outside review: a journal of another text of the runbook (a timeout raised) counted nothing,
  // and the values went unjudged: `--from stop-writes` without the cutover's --var stopped the
  // default switch, and the commit, counting that stop, went out while the cutover's source wrote
  it("a --from after the runbook was edited is judged by the cutover's values too", async () => {
    const { s, other, dir, run } = await gateBeforeSwitch(DRAINED + COMMIT + COMMITTED);
    const first = await run("--var", `switch=${s.verifierUrl}`);
    expect(first.code, first.all).toBe(1);
    const file = join(dir, "rb.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("name: crash", "name: crash\n# a timeout raised"));
    const from = await run("--from", "stop-writes", "--yes");
    const where = `${first.all}\n--- edited, --from stop-writes (no --var)\n${from.all}`;
    expect(from.code, where).toBe(2);
    expect(from.all, where).toContain(
      `from stop-writes: this run has switch=${other.verifierUrl} (the run it continues had switch=${s.verifierUrl})`,
    );
    expect(other.control.state().writes.enabled, "nothing stopped on the other switch").toBe(true);
    expect(s.control.state().instances.map((i) => i.state)).not.toContain("COMMITTED");
    expect(s.control.state().writes.lost).toBe(0);
  });

  // the hint of a committed cutover whose continueOnError step failed: `--from <that step>`, which
  // without the cutover's --var is refused (the write-on hook after it reads the switch)
  it("a --resume of a committed cutover past a failed continueOnError step offers --from it with the cutover's values, which goes on", async () => {
    const WRITES_ON =
      '  - { id: app-on, hook: { use: sim-writes, with: { url: "${vars.switch}", enabled: true }, writesOn: true } }\n';
    const { s, other, dir, run } = await gateBeforeSwitch("");
    const tail = failingHook(dir, "tail", 1).replace("hook: {", "continueOnError: true, hook: {");
    writeFileSync(
      join(dir, "rb.yaml"),
      cutoverYaml(s, {
        steps: START + READY + STOP_VIA_SWITCH + DRAINED + COMMIT + COMMITTED + tail + WRITES_ON,
      }).replace(/^steps:\n/m, `vars: { switch: "${other.verifierUrl}" }\nsteps:\n`),
    );
    other.control.setWrites({ enabled: false });
    const first = await run("--var", `switch=${s.verifierUrl}`, "--yes");
    expect(first.code, first.all).toBe(0);
    expect(first.all).toMatch(/step tail failed/);
    const resume = await run("--resume");
    const where = `${first.all}\n--- --resume\n${resume.all}`;
    expect(resume.code, where).toBe(0);
    expect(resume.all, where).toMatch(/step 7 tail failed and the run went on past it \(continueOnError\)/);
    const again = offered(resume.all, "--from tail");
    expect(again, where).toContain(`switch=${s.verifierUrl}`);
    s.control.setWrites({ enabled: false });
    const ok = await cli([...again, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(ok.code, `${where}\n--- offered\n${ok.all}`).toBe(0);
    expect(s.control.state().writes.enabled, "the cutover's switch on again").toBe(true);
    expect(other.control.state().writes.enabled, "the other switch untouched").toBe(false);
  });

  // an outside review: the offered command dropped the run's --to and --only, and went on to the
  // end of the runbook on every instance; and a --from run going on with new values said nothing
  it("the refusal of a --from range offers the same range; --allow-changed-runbook on a --from run says the values it goes on with", async () => {
    const { s, other, run } = await gateBeforeSwitch(DRAINED + COMMIT + COMMITTED, 2);
    const first = await run("--var", `switch=${s.verifierUrl}`);
    expect(first.code, first.all).toBe(1);
    const from = await run("--from", "stop-writes", "--to", "drained", "--yes");
    expect(from.code, from.all).toBe(2);
    expect(offered(from.all, "--from stop-writes --to drained")).toContain(`switch=${s.verifierUrl}`);
    const only = await run("--from", "stop-writes", "--to", "commit", "--only", "sync0", "--yes");
    expect(only.code, only.all).toBe(2);
    expect(offered(only.all, "--from stop-writes --to commit --only sync0")).toContain(`switch=${s.verifierUrl}`);
    // the instance named by its URL with a password: never shown, and the way on names it so one pastes it
    const withPassword = s.instances[0]!.url.replace("http://", "http://ops:pa55word@");
    const secret = await run("--from", "stop-writes", "--to", "commit", "--only", withPassword, "--yes");
    expect(secret.code, secret.all).toBe(2);
    expect(secret.all).not.toContain("pa55word");
    expect(offered(secret.all, "--from stop-writes --to commit --only sync0")).toContain(`switch=${s.verifierUrl}`);
    const on = await run("--from", "stop-writes", "--to", "stop-writes", "--allow-changed-runbook", "--yes");
    expect(on.code, on.all).toBe(0);
    expect(on.all).toContain(
      `from stop-writes: this run has switch=${other.verifierUrl} (the run it continues had switch=${s.verifierUrl})`,
    );
    expect(on.all).toMatch(/\(--allow-changed-runbook\)/);
    // its way on carries the values the cutover goes on with, not the earlier run's: offered
    // with them, the next run was refused (an outside review)
    const next = offered(on.all, "--resume");
    expect(next.join(" ")).not.toContain(s.verifierUrl);
    const went = await cli(next, { cwd: dirname(next[1]!) });
    expect(went.code, `${on.all}\n--- ${next.join(" ")}\n${went.all}`).toBe(0);
  });

  it("--allow-changed-runbook goes on with the new values, and says so", async () => {
    const { s, other, run } = await gateBeforeSwitch("");
    const first = await run("--var", `switch=${s.verifierUrl}`);
    expect(first.code, first.all).toBe(1);
    const on = await run("--resume", "--allow-changed-runbook", "--yes");
    expect(on.code, `${first.all}\n--- --resume --allow-changed-runbook\n${on.all}`).toBe(0);
    expect(on.all).toMatch(/resume: this run has switch=.* \(--allow-changed-runbook\)/);
    expect(other.control.state().writes.enabled, "stopped on the new switch, as asked").toBe(false);
  });
});

// an outside review: the variables of the instances' URLs (and the verifier's) were not among
// those a run going on reads, so a --from without the cutover's --var went on with the default fleet
describe("the fleet's own --var values", () => {
  it("a --from whose instances' URL would be made of another value is refused: the commit never reaches another fleet", async () => {
    const { s, other, dir } = await twoFleets();
    // the other environment's sync runs and could commit: its own runbook started it
    const staging = join(dir, "staging.yaml");
    writeFileSync(staging, cutoverYaml(other, { name: "staging", steps: START + READY }));
    const started = await cli(["run", staging, "--renderer", "simple"], { cwd: dir });
    expect(started.code, started.all).toBe(0);
    const file = join(dir, "rb.yaml");
    writeFileSync(
      file,
      cutoverYaml(s, { urls: ["${vars.fleet}"], steps: START + READY + STOP + DRAINED + COMMIT + COMMITTED }).replace(
        /^steps:\n/m,
        `vars: { fleet: "${other.instances[0]!.url}" }\nsteps:\n`,
      ),
    );
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
    const first = await run("--var", `fleet=${s.instances[0]!.url}`, "--to", "stop-writes");
    expect(first.code, first.all).toBe(0);
    expect(s.control.state().writes.enabled).toBe(false);
    // status takes no --var: it reads the fleet at the cutover's values, as its journal has them,
    // not the runbook's default (another environment's sync under this cutover's journal)
    const status = await cli(["status", file], { cwd: dir });
    expect(status.stdout).toContain(
      `fleet: read with the cutover's fleet=${s.instances[0]!.url}, as its journal has them (not the runbook's own)`,
    );
    const json = JSON.parse((await cli(["status", file, "--json"], { cwd: dir })).stdout) as {
      instances: { url: string }[];
      fleetVars: { read: string[] };
    };
    expect(json.instances.map((i) => i.url)).toEqual([s.instances[0]!.url]);
    expect(json.fleetVars.read).toEqual([`fleet=${s.instances[0]!.url}`]);
    // watch too: the page reads the cutover's fleet, and says so
    const watch = startCli(["watch", file, "--no-notify"], { cwd: dir });
    try {
      await watch.waitFor(/syncbook watch: http:\/\/127\.0\.0\.1:\d+\//);
    } finally {
      watch.child.kill("SIGINT");
    }
    expect((await watch.done).all).toContain(
      `syncbook watch: the fleet read with the cutover's fleet=${s.instances[0]!.url}, as its journal has them`,
    );
    // with --no-live it reads no fleet, and says nothing of one
    const quiet = startCli(["watch", file, "--no-notify", "--no-live"], { cwd: dir });
    try {
      await quiet.waitFor(/syncbook watch: http:\/\/127\.0\.0\.1:\d+\//);
    } finally {
      quiet.child.kill("SIGINT");
    }
    expect((await quiet.done).all).not.toContain("the fleet read with");
    // a --resume too: refused with the cutover's value before the fleet is read (read at the
    // default, the reconcile refused "the runbook's instances are not those the journal's run used"
    // with no command to run)
    const resume = await run("--resume", "--yes");
    expect(resume.code, resume.all).toBe(2);
    expect(resume.all).toContain(
      `this run has fleet=${other.instances[0]!.url} (the run it continues had fleet=${s.instances[0]!.url})`,
    );
    expect(offered(resume.all, "--resume")).toContain(`fleet=${s.instances[0]!.url}`);
    const from = await run("--from", "drained", "--yes");
    expect(other.control.counts().instances[0]!["POST /api/v1/commit"] ?? 0, from.all).toBe(0);
    expect(from.code, from.all).toBe(2);
    expect(from.all).toContain(
      `this run has fleet=${other.instances[0]!.url} (the run it continues had fleet=${s.instances[0]!.url})`,
    );
    const next = offered(from.all, "--from drained");
    expect(next).toContain(`fleet=${s.instances[0]!.url}`);
    // run as offered, it commits this cutover's fleet, and the other still has none
    const went = await cli([...next, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(went.code, went.all).toBe(0);
    expect(s.control.counts().instances[0]!["POST /api/v1/commit"]).toBe(1);
    expect(other.control.counts().instances[0]!["POST /api/v1/commit"] ?? 0).toBe(0);
  });

  // the last session's closing note ("--abort checks no fleet variables"), reproduced: an --abort
  // typed without the cutover's --var read the default fleet (the other environment's sync,
  // RUNNING) before turning writes on, and its undo (sim-writes on the fleet's first instance)
  // turned on the other environment's switch, said "writes are back on", and left this
  // cutover's stopped, over a fleet a commit had reached by hand
  it("an --abort whose fleet would be made of another value is refused; as offered it reads the cutover's fleet, which keeps writes off", async () => {
    const { s, other, dir } = await twoFleets();
    const staging = join(dir, "staging.yaml");
    writeFileSync(staging, cutoverYaml(other, { name: "staging", steps: START + READY + STOP }));
    const staged = await cli(["run", staging, "--renderer", "simple"], { cwd: dir });
    expect(staged.code, staged.all).toBe(0);
    const file = join(dir, "rb.yaml");
    writeFileSync(
      file,
      cutoverYaml(s, { urls: ["${vars.fleet}"], steps: START + READY + STOP + DRAINED + COMMIT }).replace(
        /^steps:\n/m,
        `vars: { fleet: "${other.instances[0]!.url}" }\nsteps:\n`,
      ),
    );
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
    const first = await run("--var", `fleet=${s.instances[0]!.url}`, "--to", "stop-writes");
    expect(first.code, first.all).toBe(0);
    expect(s.control.state().writes.enabled).toBe(false);
    // a commit this journal does not show reaches the cutover's fleet
    await commitByHand(s);
    const abort = await run("--abort", "--yes");
    expect(abort.code, abort.all).toBe(2);
    expect(abort.all).toContain(
      `this run has fleet=${other.instances[0]!.url} (the run it continues had fleet=${s.instances[0]!.url})`,
    );
    expect(other.control.state().writes.enabled, "the other environment's switch is not touched").toBe(false);
    expect(s.control.state().writes.enabled).toBe(false);
    const next = offered(abort.all, "--abort");
    expect(next).toContain(`fleet=${s.instances[0]!.url}`);
    // as offered: it reads this cutover's fleet, sees the commit, and leaves writes off
    const again = await cli([...next, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(again.all).toMatch(/a commit has taken effect on the fleet/);
    expect(s.control.state().writes.enabled).toBe(false);
    expect(other.control.state().writes.enabled).toBe(false);
    // --allow-changed-runbook says the cutover's fleet moved to the new values: read there
    const moved = await run("--abort", "--yes", "--allow-changed-runbook");
    expect(moved.all).not.toContain("cannot abort");
    expect(moved.all).toContain("no commit has taken effect (sync0 is RUNNING)");
  });

  // an outside review (helper 85): an --abort with --allow-changed-runbook whose undo failed did not
  // record the fleet it moved to. Its end and status offered `--abort --var fleet=<the old fleet>`,
  // which was accepted, read the old fleet (RUNNING, no commit) and turned writes on while the new
  // fleet had been committed by hand
  it("an --abort with --allow-changed-runbook whose undo fails leaves the new fleet the cutover's: the way on reads it, and sees a commit there", async () => {
    // the application's switch, whose undo fails once
    const { s, n, file, dir, run } = await movableFleet(
      (s, dir) => {
        const on = [process.execPath, join(dir, "writes.mjs"), s.verifierUrl, "on", "0"];
        const undoOnce = [failTimesArgv(dir, "undo", 1), on].map(shellCommand).join(" && ");
        return `${START}${READY}  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${s.verifierUrl}" }, undo: { use: shell, with: { command: ["sh", "-c", ${JSON.stringify(undoOnce)}] } } } }\n${DRAINED}${COMMIT}`;
      },
      (other) => `{ fleet: "${other.instances[0]!.url}" }`,
    );
    writeFileSync(join(dir, "writes.mjs"), WRITE_SWITCH);
    const first = await run("--var", `fleet=${s.instances[0]!.url}`, "--to", "stop-writes");
    expect(first.code, first.all).toBe(0);
    expect(s.control.state().writes.enabled).toBe(false);
    // the cutover's fleet moved: called off there, and its undo fails
    const moved = await run("--abort", "--yes", "--allow-changed-runbook", "--var", `fleet=${n.instances[0]!.url}`);
    expect(moved.code, moved.all).toBe(1);
    expect(s.control.state().writes.enabled).toBe(false);
    await commitByHand(n);
    // the ways on, the run's end and status's, carry the new fleet
    const next = offered(moved.all, "--abort");
    expect(next, moved.all).toContain(`fleet=${n.instances[0]!.url}`);
    const status = await cli(["status", file], { cwd: dir });
    expect(status.stdout).toContain(`fleet: read with the cutover's fleet=${n.instances[0]!.url}`);
    expect(status.stdout).toContain(`syncbook run ${file} --abort --var fleet=${n.instances[0]!.url}\n`);
    // the old fleet's values are another fleet now
    const old = await run("--abort", "--yes", "--var", `fleet=${s.instances[0]!.url}`);
    expect(old.code, old.all).toBe(2);
    expect(s.control.state().writes.enabled).toBe(false);
    // as offered: it reads the new fleet, sees the commit, and keeps writes off
    const again = await cli([...next, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(again.all).toMatch(/a commit has taken effect on the fleet/);
    expect(s.control.state().writes.enabled).toBe(false);
  });
  // an outside review (helper 87): after the fleet moved, the refusal of an undo made of other
  // values offered --abort with the old fleet. Accepted, that read the old fleet (RUNNING) and turned
  // writes on while a commit had reached the new one
  it("an --abort with --allow-changed-runbook refused for its undo's values offers the new fleet: as offered it sees a commit there and keeps writes off", async () => {
    const { s, n, other, dir, run } = await movableFleet(
      () => START + READY + STOP_VIA_SWITCH + DRAINED + COMMIT,
      (other) => `{ fleet: "${other.instances[0]!.url}", switch: "${other.verifierUrl}" }`,
    );
    const fleetS = `fleet=${s.instances[0]!.url}`;
    const first = await run("--var", fleetS, "--var", `switch=${s.verifierUrl}`, "--to", "stop-writes");
    expect(first.code, first.all).toBe(0);
    expect(s.control.state().writes.enabled).toBe(false);
    // the cutover's fleet moved; the switch left out: its undo would go elsewhere
    const moved = await run("--abort", "--yes", "--allow-changed-runbook", "--var", `fleet=${n.instances[0]!.url}`);
    expect(moved.code, moved.all).toBe(2);
    expect(moved.all).toContain(`ran with switch=${s.verifierUrl}`);
    await commitByHand(n);
    const next = offered(moved.all, "--allow-changed-runbook --abort");
    expect(next).toContain(`fleet=${n.instances[0]!.url}`);
    expect(next).toContain(`switch=${s.verifierUrl}`);
    expect(next).not.toContain(fleetS);
    // as offered: it reads the new fleet, sees the commit, and keeps writes off
    const again = await cli([...next, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(again.all).toMatch(/a commit has taken effect on the fleet/);
    expect(s.control.state().writes.enabled).toBe(false);
    expect(other.control.state().writes.enabled).toBe(false);
  });

  // an outside review (helper 87): an --abort refused for a commit sent, given other fleet values
  // and --allow-changed-runbook, offered a --resume without saying which fleet its values name
  it("an --abort refused for a commit sent, given another fleet, names the fleet the commit went to and says this run's is another", async () => {
    const s = await fastSim({ timeScale: 100 });
    const n = await fastSim({ timeScale: 100 });
    made.sims.push(s, n);
    const dir = tempDir();
    made.dirs.push(dir);
    const file = join(dir, "rb.yaml");
    writeFileSync(
      file,
      cutoverYaml(s, {
        urls: ["${vars.fleet}"],
        steps: START + READY + stopVia(s.verifierUrl) + DRAINED + COMMIT + COMMITTED,
      }).replace(/^steps:\n/m, `vars: { fleet: "${n.instances[0]!.url}" }\nsteps:\n`),
    );
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
    const first = await run("--var", `fleet=${s.instances[0]!.url}`, "--to", "commit", "--yes");
    expect(first.code, first.all).toBe(0);
    for (const moved of [[], ["--allow-changed-runbook"]]) {
      const abort = await run("--abort", "--yes", ...moved);
      expect(abort.code, abort.all).toBe(1);
      expect(abort.all).toContain("commit was accepted by the fleet");
      const next = offered(abort.all, "--resume");
      expect(next).toContain(`fleet=${s.instances[0]!.url}`);
      expect(abort.all).toContain(
        `It names the --var values the cutover's runs sent with; this run's (fleet=${n.instances[0]!.url}) make another fleet`,
      );
    }
  });

  // an outside review (helper 85): the hint of an --abort that could not read the fleet named the
  // runbook alone; of a --var fleet, its --abort and --resume as printed were refused (exit 2)
  it("an --abort that cannot read a --var fleet keeps writes off; its hint carries the fleet's value, and as printed turns writes on once the fleet answers", async () => {
    const { s, other, dir } = await twoFleets();
    const file = join(dir, "rb.yaml");
    writeFileSync(
      file,
      cutoverYaml(s, {
        urls: ["${vars.fleet}"],
        steps: START + READY + stopVia(s.verifierUrl) + DRAINED + COMMIT,
      }).replace(/^steps:\n/m, `vars: { fleet: "${other.instances[0]!.url}" }\nsteps:\n`),
    );
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir });
    const first = await run("--var", `fleet=${s.instances[0]!.url}`, "--to", "stop-writes");
    expect(first.code, first.all).toBe(0);
    s.control.addFault("down=0");
    const abort = await run("--abort", "--yes", "--var", `fleet=${s.instances[0]!.url}`);
    expect(abort.code, abort.all).toBe(1);
    expect(abort.all).toContain("the fleet could not be read as a whole before commit");
    expect(s.control.state().writes.enabled).toBe(false);
    const hint =
      /turn writes back on with: syncbook (run .*?) \(it reads the fleet again first\); or go on with the cutover: syncbook (run .*?)\.\n/.exec(
        abort.all,
      );
    expect(hint, abort.all).not.toBeNull();
    const [again, resume] = [argvOf(hint![1]!), argvOf(hint![2]!)];
    expect(again).toContain(`fleet=${s.instances[0]!.url}`);
    expect(resume).toContain(`fleet=${s.instances[0]!.url}`);
    expect(resume.at(-1)).toBe("--resume");
    s.control.clearFaults();
    const on = await cli([...again, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(on.code, on.all).toBe(0);
    expect(on.all).toContain("writes are back on (the undo of step 3");
    expect(s.control.state().writes.enabled).toBe(true);
  });
});

// an outside review: a step's own hint (a split commit's "Then `syncbook run … --resume` completes
// it", the verifier's restart hints) named the runbook without the cutover's --var values
describe("a step's hint carries the cutover's --var values", () => {
  it("a split commit's --resume, as the hint prints it, completes the commit and turns on the cutover's switch", async () => {
    const { s, other, dir } = await twoFleets({ instances: 3, faults: ["commit-refused@2"] });
    const file = join(dir, "rb.yaml");
    const appOn = '  - { id: app-on, hook: { use: sim-writes, with: { url: "${vars.switch}", enabled: true } } }\n';
    writeFileSync(
      file,
      cutoverYaml(s, { steps: START + READY + STOP_VIA_SWITCH + DRAINED + COMMIT + COMMITTED + appOn }).replace(
        /^steps:\n/m,
        `vars: { switch: "${other.verifierUrl}" }\nsteps:\n`,
      ),
    );
    const first = await cli(["run", file, "--renderer", "simple", "--var", `switch=${s.verifierUrl}`], { cwd: dir });
    expect(first.code, first.all).toBe(1);
    const m = /Then `syncbook (run [^`]*--resume)` completes it/.exec(first.all);
    expect(m, first.all).not.toBeNull();
    const next = argvOf(m![1]!);
    expect(next).toContain(`switch=${s.verifierUrl}`);
    s.control.clearFaults();
    const done = await cli([...next, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(done.code, done.all).toBe(0);
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED", "COMMITTED"]);
    expect(s.control.state().writes.enabled, "the cutover's switch is on").toBe(true);
    expect(other.control.state().writes.enabled, "the other switch was never touched").toBe(true);
  });
});

// an outside review: a --var holding a password is journaled and printed as ***, every way on
// leaves it out, and the --resume a run's end printed was refused ("set it as that run did")
describe("a --var that holds a secret", () => {
  it("the run's end says its ways on leave it out, and how to give it; the password never shows", async () => {
    const { s, dir, run } = await gateBeforeSwitch("");
    const secret = s.verifierUrl.replace("http://", "http://ops:pa55word@");
    const first = await run("--var", `switch=${secret}`);
    expect(first.code, first.all).toBe(1);
    expect(first.all).not.toContain("pa55word");
    expect(first.all).toMatch(/resume with: syncbook run \S+ --resume/);
    expect(first.all).toContain(
      "note: these commands leave out --var switch, which holds a secret (shown as ***): add it as this run was given it, or refer to it in the runbook as ${env.NAME} so that it is read from the environment",
    );
    const status = await cli(["status", join(dir, "rb.yaml")], { cwd: dir });
    expect(status.stdout).toContain(
      "warning: the commands offered leave out --var switch, given to the cutover with a secret (shown as ***): add it as its runs were given it",
    );
    expect(status.all).not.toContain("pa55word");
    // given again as that run had it, the --resume goes on
    const again = await run("--resume", "--yes", "--var", `switch=${secret}`);
    expect(again.code, again.all).toBe(0);
  });

  // left out of a way on with --allow-changed-runbook, the flag read it at the runbook's default
  // now, another switch: status and the watch page keep it, masked, and say to set it
  it("a --from after the commit of a runbook changed since shows it masked, says so, and given as that run had it, turns its switch on", async () => {
    const secretOf = (s: Simulator) => s.verifierUrl.replace("http://", "http://ops:pa55word@");
    const { s, other, dir, file } = await committedPastGate(secretOf);
    const masked = s.verifierUrl.replace("http://", "http://***@");
    const way = `--from gate --allow-changed-runbook --var 'switch=${masked}'`;
    const told = await cli(["status", file], { cwd: dir });
    expect(told.all).not.toContain("pa55word");
    expect(told.all).toContain(`next:\n    syncbook run ${file} ${way}\n`);
    expect(told.all).toContain("(a --var shown with *** holds a secret: set each as that run did)");
    expect(told.all).toContain(
      "warning: the command offered shows --var switch as the cutover's runs journaled it, with a secret (shown as ***): set it as its runs were given it",
    );
    const page = await watchState([file], dir);
    expect(JSON.stringify(page)).not.toContain("pa55word");
    expect(page.runner.next).toBe(
      `syncbook run ${file} ${way}   (step gate failed, and the run went on past it; a --var shown with *** holds a secret: set each as that run did)`,
    );
    const again = await cli(
      ["run", file, "--from", "gate", "--allow-changed-runbook", "--var", `switch=${secretOf(s)}`, "--yes"],
      { cwd: dir },
    );
    expect(again.code, again.all).toBe(0);
    expect(s.control.state().writes.enabled, "the cutover's switch on").toBe(true);
    expect(other.control.state().writes.enabled, "the other switch untouched").toBe(false);
  });
});
