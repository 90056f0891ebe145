/**
 * A fleet-identity refusal names the command that goes on, pasted as it says. Its hint said "Check
 * the `instances:` list … and what answers at each address; then run again", and "run again" was
 * refused either way once the cutover had begun: a plain run by the unfinished cutover (it names
 * --resume), and a `--resume` of an edited `instances:` list (src/journal/reconcile.ts). Before
 * the cutover sent anything, the list may be corrected and the plain run is the way; a rehearsal
 * names no `syncbook run` at all (pasted, it acts on the runbook's real fleet).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import {
  cli,
  CUTOVER,
  posts,
  READY,
  runbookFor,
  sim,
  START,
  tempDir,
  watchState,
  writeRunbook,
} from "../support/run.js";

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});
const started = async (opts: Parameters<typeof sim>[0]): Promise<Simulator> => {
  const s = await sim(opts);
  sims.push(s);
  return s;
};

/**
 * What the journal's readers offer next: `syncbook status` (its text, and `--json`'s `journal.next`)
 * and the watch page (`/state.json`'s `runner.next`). A review: after a refusal whose way on is the
 * refused run's own command again, they offered a plain `--resume`, where the run's end named that
 * command (a `--resume` refuses a corrected list, or passes over a run that sent nothing).
 */
async function offered(file: string, dir: string): Promise<{ text: string; args: string[]; page: string }> {
  const text = (await cli(["status", file], { cwd: dir })).all;
  const json = JSON.parse((await cli(["status", file, "--json"], { cwd: dir })).stdout) as {
    journal: { next: { runs: { args: string }[] } };
  };
  const page = (await watchState([file], dir)).runner.next ?? "";
  return { text, args: json.journal.next.runs.map((r) => r.args), page };
}

/**
 * Our fleet of two, and another sync (of clusters this runbook does not name, started) whose one
 * instance a runbook may list by mistake where sync1 should be.
 */
async function oursAndTheirs(): Promise<{ ours: Simulator; theirs: Simulator }> {
  const ours = await started({ instances: 2, timeScale: 200 });
  const theirs = await started({
    instances: 1,
    timeScale: 200,
    clusters: { other0: { topology: "replicaSet" }, other1: { topology: "replicaSet" } },
  });
  const res = await fetch(`${theirs.instances[0]!.url}/api/v1/start`, {
    method: "POST",
    body: JSON.stringify({ source: "other0", destination: "other1" }),
  });
  expect(res.status).toBe(200);
  return { ours, theirs };
}

/**
 * What a start refused by fleet-identity adds to its way on where an instance read is not IDLE:
 * the fleet-idle interlock, asked after it, refuses that way on too while an instance of this sync
 * is not IDLE (a review: a `--new-cutover` on a fleet that ran the earlier sync was pointed at
 * `--new-cutover` again, which fleet-idle refused). The `--resume` that adopts a run only where a
 * journal of this cutover `acted` (before, that `--resume` is refused).
 */
const idleToo = (file: string, states: string, acted = false): string =>
  ` Start also needs every instance IDLE (fleet-idle, checked after this), and ${states}: while an instance of this sync is not IDLE, that check refuses the way on above too. A sync already runs${acted ? ` (\`syncbook run ${file} --resume\` adopts a run this tool started)` : ""}, or an instance is down.`;

/**
 * A cutover of two instances run to its `drained` wait (started, writes stopped), after which
 * instance 1 reports another fleet's coordinator: the next command is refused by fleet-identity
 * before it is sent.
 */
async function drainedThenOtherCoordinator(): Promise<{ s: Simulator; dir: string; file: string }> {
  const s = await started({ instances: 2, timeScale: 200 });
  const dir = tempDir();
  const file = writeRunbook(dir, runbookFor(s, CUTOVER));
  const first = await cli(["run", file, "--to", "drained", "--renderer", "simple", "--yes"], { cwd: dir });
  expect(first.code, first.all).toBe(0);
  s.control.addFault("identity-change=coordinator@1");
  return { s, dir, file };
}

/** The hint of the refusal, as the step's failure prints it. */
const hintOf = (all: string): string | undefined =>
  /✖ \[\d+\/\d+\][^\n]*refused \(fleet-identity\)[\s\S]*?hint: (.*)/.exec(all)?.[1];

describe("a fleet-identity refusal", () => {
  it("mid-cutover: names `syncbook run <runbook> --resume`, keeps the list as it is, and the --resume pasted goes on", async () => {
    // instance 1 reports another fleet's coordinator from its accepting start: refused at commit
    const s = await started({ instances: 2, timeScale: 200, faults: ["identity-change=coordinator,on=start@1"] });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CUTOVER));
    const first = await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(first.code, first.all).toBe(3);
    expect(first.all).toMatch(/✖ \[6\/8\] Commit failed in \d+ms: refused \(fleet-identity\)/);
    expect(hintOf(first.all), first.all).toBe(
      `The refused command was not sent. Do not edit the \`instances:\` list mid-cutover: \`--resume\` refuses a changed list. Put right what answers at each address (the instance of this sync that answered there before), then \`syncbook run ${file} --resume\`: it reads the fleet again before it sends anything.`,
    );
    expect(posts(s, "commit")).toEqual([0, 0]);
    // "then run again", as a plain run: refused, the cutover is unfinished
    const plain = await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(plain.code, plain.all).toBe(2);
    expect(plain.all).toMatch(/the runbook's last cutover did not finish/);
    expect(/`syncbook run (\S+) --resume`/.exec(hintOf(first.all)!)?.[1]).toBe(file);
    // a --resume of an edited runbook (a comment), the cause not yet put right: refused again before
    // it sends anything, so its way on is that command again, --allow-changed-runbook kept (a
    // review: a plain --resume would pass this run over; one without the flag is refused)
    writeFileSync(file, `# edited\n${readFileSync(file, "utf8")}`);
    const resumed = await cli(["run", file, "--resume", "--allow-changed-runbook", "--renderer", "simple", "--yes"], {
      cwd: dir,
    });
    expect(resumed.code, resumed.all).toBe(3);
    expect(hintOf(resumed.all), resumed.all).toBe(
      "This run sent nothing. Do not edit the `instances:` list mid-cutover: `--resume` refuses a changed list. Put right what answers at each address (the instance of this sync that answered there before), then give this run's command again, as the run's end names it.",
    );
    expect(posts(s, "commit")).toEqual([0, 0]);
    // the cause put right (instance 1 is this fleet's again), the command the run's end names, pasted
    s.control.clearFaults();
    const named =
      /\n {2}once the hint above is done, give this run's command again: syncbook run (\S+) (--resume) (--allow-changed-runbook)\n/.exec(
        resumed.all,
      )!;
    expect(named, resumed.all).not.toBeNull();
    // status and the watch page offer the same command, not the plain --resume
    const next = await offered(file, dir);
    expect(next.text, next.text).toContain(`\n    syncbook run ${file} --resume --allow-changed-runbook\n`);
    expect(next.text).not.toContain(`syncbook run ${file} --resume\n`);
    expect(next.args).toEqual(["--resume --allow-changed-runbook", "--abort"]);
    expect(next.page).toMatch(
      new RegExp(
        `^syncbook run ${file} --resume --allow-changed-runbook {3}\\(the failed run's command again, as its end named it`,
      ),
    );
    // status's, pasted (the run's end's, the same)
    expect([named[2], named[3]].join(" ")).toBe(next.args[0]);
    const after = await cli(["run", file, ...next.args[0]!.split(" "), "--renderer", "simple", "--yes"], { cwd: dir });
    expect(after.code, after.all).toBe(0);
    expect(after.all).toMatch(/■ run ok .* · committed · verified · exit 0/);
    expect(posts(s, "commit")).toEqual([1, 1]);
  }, 90_000);

  it("before the cutover sent anything: the list corrected, the plain `syncbook run <runbook>` it names starts over (a --resume is refused)", async () => {
    // another sync, of clusters this runbook does not name, runs at the address listed for sync1
    const { ours, theirs } = await oursAndTheirs();
    const dir = tempDir();
    const right = runbookFor(ours, CUTOVER);
    const file = writeRunbook(dir, right.replace(ours.instances[1]!.url, theirs.instances[0]!.url));
    const first = await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(first.code, first.all).toBe(3);
    expect(first.all).toMatch(
      /✖ \[1\/8\] Start the sync cluster0 → cluster1 failed in \d+ms: refused \(fleet-identity\)/,
    );
    // (the other sync's instance listed is not IDLE: said, as fleet-idle would, after the way on)
    expect(hintOf(first.all), first.all).toBe(
      `Nothing of this cutover has been sent yet. Correct the \`instances:\` list (every instance of this sync, and only those) or what answers at each address, then give this run's command again, as the run's end names it (a \`--resume\` refuses a changed list).${idleToo(file, "sync1 is RUNNING")}`,
    );
    expect(posts(ours, "start")).toEqual([0, 0]);
    // the run's end names the same command, not the --resume that refuses the corrected list
    expect(first.all).toContain(
      `\n  once the hint above is done, give this run's command again: syncbook run ${file}\n`,
    );
    expect(first.all).not.toMatch(/resume with:/);
    // status and the watch page offer that command, the plain run, not the --resume (a review);
    // and --abort, as before
    const next = await offered(file, dir);
    expect(next.text, next.text).toContain(`\n    syncbook run ${file}\n        gives the failed run's command again`);
    expect(next.text).not.toContain("--resume\n");
    expect(next.args).toEqual(["", "--abort"]);
    expect(next.page).toMatch(
      new RegExp(`^syncbook run ${file} {3}\\(the failed run's command again, as its end named it`),
    );
    // the list corrected: --resume refuses it, even told the runbook changed
    writeFileSync(file, right);
    const resume = await cli(["run", file, "--resume", "--allow-changed-runbook", "--renderer", "simple", "--yes"], {
      cwd: dir,
    });
    expect(resume.code, resume.all).not.toBe(0);
    expect(resume.all).toMatch(/the runbook's instances are not those the journal's run used/);
    // still offered once the list is corrected (the journal's run is the refused one)
    expect((await offered(file, dir)).args).toEqual(["", "--abort"]);
    // the command the run's end and status named, pasted
    const named = /give this run's command again: syncbook run (\S+)\n/.exec(first.all)!;
    expect(named[1]).toBe(file);
    const after = await cli(["run", named[1]!, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(after.code, after.all).toBe(0);
    expect(after.all).toMatch(/■ run ok .* · committed · verified · exit 0/);
    expect(posts(ours, "start")).toEqual([1, 1]);
    expect(posts(theirs, "start")).toEqual([1]);
  }, 90_000);

  // an outside review: with a secret --var, the run's end showed it masked in "give this run's
  // command again", then said "these commands leave out --var verifier"
  it("before anything was sent, a secret --var: the command again shows it masked, and no note says it is left out", async () => {
    const { ours, theirs } = await oursAndTheirs();
    const dir = tempDir();
    const file = writeRunbook(
      dir,
      runbookFor(ours, CUTOVER)
        .replace(ours.instances[1]!.url, theirs.instances[0]!.url)
        .replace(`verifier: "${ours.verifierUrl}"`, 'verifier: "${vars.verifier}"')
        .replace("steps:", `vars: { verifier: "${ours.verifierUrl}" }\nsteps:`),
    );
    const secret = ours.verifierUrl.replace("http://", "http://op:pw-77@");
    const r = await cli(["run", file, "--var", `verifier=${secret}`, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(r.code, r.all).toBe(3);
    expect(r.all).toMatch(/give this run's command again: syncbook run \S+ --var 'verifier=http:\/\/\*\*\*@/);
    expect(r.all).not.toMatch(/these commands leave out --var verifier/);
    expect(r.all).not.toContain("pw-77");
  }, 90_000);

  // an outside review: the refused run's --force was dropped from "this run's command again" without
  // a word, so the command pasted met that interlock again as a surprise
  it("before anything was sent, a run given --force: the command again leaves it out and says so", async () => {
    const { ours, theirs } = await oursAndTheirs();
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(ours, CUTOVER).replace(ours.instances[1]!.url, theirs.instances[0]!.url));
    const r = await cli(["run", file, "--force=fleet-idle,can-commit", "--renderer", "simple", "--yes"], {
      cwd: dir,
    });
    expect(r.code, r.all).toBe(3);
    expect(r.all).toContain(
      `\n  once the hint above is done, give this run's command again: syncbook run ${file}\n` +
        `  note: this run's --force=fleet-idle,can-commit is left out of the commands above: check again what it overrode, then add it by hand if it still holds\n`,
    );
    expect(posts(ours, "start")).toEqual([0, 0]);
  }, 90_000);

  // a review: a hook before the start ran, so the cutover had acted and the hint said "Do not edit
  // the list, put right what answers at each address", where the list was what was wrong and only a
  // new cutover takes a corrected one
  it("after a hook alone ran: the corrected list goes on with the `--new-cutover` the hint names", async () => {
    const { ours, theirs } = await oursAndTheirs();
    const dir = tempDir();
    const notice = `  - { id: notice, hook: { use: shell, with: { command: [${JSON.stringify(process.execPath)}, -e, "0"] } } }\n`;
    const right = runbookFor(ours, notice + CUTOVER);
    const file = writeRunbook(dir, right.replace(ours.instances[1]!.url, theirs.instances[0]!.url));
    const first = await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(first.code, first.all).toBe(3);
    expect(first.all).toMatch(
      /✖ \[2\/9\] Start the sync cluster0 → cluster1 failed in \d+ms: refused \(fleet-identity\)/,
    );
    expect(hintOf(first.all), first.all).toBe(
      `Nothing has been sent to the fleet yet: only the runbook's hooks ran. Correct the \`instances:\` list (every instance of this sync, and only those) or what answers at each address. With the list corrected, \`syncbook run ${file} --new-cutover\` starts over from the first step, its hooks again (a plain run is refused by this unfinished cutover, a \`--resume\` by the changed list); with it unchanged, \`syncbook run ${file} --resume\`.${idleToo(file, "sync1 is RUNNING", true)}`,
    );
    expect(first.all).toContain(`\n  once the hint above is done, resume with: syncbook run ${file} --resume\n`);
    expect(posts(ours, "start")).toEqual([0, 0]);
    // the list corrected: the plain run and --resume are refused, as the hint says
    writeFileSync(file, right);
    const plain = await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(plain.code, plain.all).toBe(2);
    expect(plain.all).toMatch(/the runbook's last cutover did not finish/);
    const resume = await cli(["run", file, "--resume", "--allow-changed-runbook", "--renderer", "simple", "--yes"], {
      cwd: dir,
    });
    expect(resume.code, resume.all).not.toBe(0);
    expect(resume.all).toMatch(/the runbook's instances are not those the journal's run used/);
    // the new cutover the hint names, pasted
    const named = /With the list corrected, `syncbook run (\S+) (--new-cutover)`/.exec(hintOf(first.all)!)!;
    const after = await cli(["run", named[1]!, named[2]!, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(after.code, after.all).toBe(0);
    expect(after.all).toMatch(/■ run ok .* · committed · verified · exit 0/);
    expect(posts(ours, "start")).toEqual([1, 1]);
    expect(posts(theirs, "start")).toEqual([1]);
  }, 90_000);

  // an outside review: the journal a --resume named was journaled as the shell named it, relative,
  // and status read from another directory (or another machine's page) named no journal
  it("a --resume of a named journal refused before it acted: the command again names that journal whole", async () => {
    const s = await started({ instances: 2, timeScale: 200, faults: ["identity-change=coordinator,on=start@1"] });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CUTOVER));
    expect((await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir })).code).toBe(3);
    const folder = join(dir, ".syncbook", "e2e");
    const journal = readdirSync(folder).find((f) => f.endsWith(".jsonl"))!;
    const rel = join(".syncbook", "e2e", journal);
    const r = await cli(["run", file, "--resume", rel, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(r.code, r.all).toBe(3);
    expect(r.all).toContain(
      `\n  once the hint above is done, give this run's command again: syncbook run ${file} --resume ${join(folder, journal)}\n`,
    );
    // read from elsewhere: the journal named whole
    const status = await cli(["status", file, "--json"], { cwd: tmpdir() });
    const json = JSON.parse(status.stdout) as { journal: { next: { runs: { args: string }[] } } };
    expect(json.journal.next.runs[0]!.args).toBe(`--resume ${join(folder, journal)}`);
    expect(posts(s, "commit")).toEqual([0, 0]);
  }, 90_000);

  // an outside review: a run that began past the start (a --new-cutover --from the write stop)
  // ran its stop hook, and the refusal at its commit said only hooks ran and offered --new-cutover,
  // which runs the runbook again from its start on a fleet that runs the sync
  it("a run that began past the start: never 'only the runbook's hooks ran', never --new-cutover", async () => {
    const s = await started({ instances: 2, timeScale: 200 });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CUTOVER));
    expect((await cli(["run", file, "--to", "drained", "--renderer", "simple", "--yes"], { cwd: dir })).code).toBe(0);
    s.control.addFault("identity-change=coordinator@1");
    const r = await cli(["run", file, "--new-cutover", "--from", "stop-writes", "--renderer", "simple", "--yes"], {
      cwd: dir,
    });
    expect(r.code, r.all).toBe(3);
    expect(r.all).toMatch(/refused \(fleet-identity\)/);
    expect(hintOf(r.all), r.all).toMatch(
      /^The refused command was not sent\. Do not edit the `instances:` list mid-cutover/,
    );
    expect(r.all).not.toContain("only the runbook's hooks ran");
    expect(r.all).not.toContain("--new-cutover`");
    expect(posts(s, "commit")).toEqual([0, 0]);
  }, 90_000);

  // a review: a --from run that sent nothing is passed over by --resume, which goes on from the run
  // before it; status read that run's journal and offered its --resume
  it("a --from run of the cutover that sent nothing: status and the page offer that --from again, which pasted goes on", async () => {
    // instance 1 reports another fleet's coordinator from now on: the commit is refused before it is sent
    const { s, dir, file } = await drainedThenOtherCoordinator();
    const from = await cli(["run", file, "--from", "commit", "--renderer", "simple", "--yes"], { cwd: dir });
    expect(from.code, from.all).toBe(3);
    expect(from.all).toMatch(/refused \(fleet-identity\)/);
    expect(from.all).toContain(
      `\n  once the hint above is done, give this run's command again: syncbook run ${file} --from commit\n`,
    );
    expect(posts(s, "commit")).toEqual([0, 0]);
    const next = await offered(file, dir);
    expect(next.text, next.text).toMatch(/passed over \(its run sent nothing\): /);
    // and the way back to writes on (the run before it stopped them): an outside review
    expect(next.text, next.text).toContain(`\n  next, one of:\n    syncbook run ${file} --from commit\n`);
    expect(next.text, next.text).toContain(`\n    syncbook run ${file} --abort\n`);
    expect(next.args).toEqual(["--from commit", "--abort"]);
    expect(next.page).toMatch(new RegExp(`^syncbook run ${file} --from commit {3}\\(the failed run's command again`));
    s.control.clearFaults();
    const after = await cli(["run", file, ...next.args[0]!.split(" "), "--renderer", "simple", "--yes"], { cwd: dir });
    expect(after.code, after.all).toBe(0);
    expect(after.all).toMatch(/■ run ok .* · committed · verified · exit 0/);
    expect(posts(s, "commit")).toEqual([1, 1]);
  }, 90_000);

  // an outside review: after a --new-cutover refused before it acted (another cutover, whose journal
  // --resume passes over), the page watched the cutover before it and offered that one's --resume,
  // where status offered the refused run's command; the --resume pasted committed the earlier cutover
  it("a --new-cutover refused before it acted: the page offers what status offers, not the earlier cutover's --resume", async () => {
    // instance 1 reports another fleet's coordinator: the new cutover's start is refused before it is sent
    const { s, dir, file } = await drainedThenOtherCoordinator();
    const renew = await cli(["run", file, "--new-cutover", "--renderer", "simple", "--yes"], { cwd: dir });
    expect(renew.code, renew.all).toBe(3);
    expect(renew.all).toMatch(/refused \(fleet-identity\)/);
    expect(renew.all).toContain(
      `\n  once the hint above is done, give this run's command again: syncbook run ${file} --new-cutover\n`,
    );
    const next = await offered(file, dir);
    expect(next.text, next.text).toMatch(/passed over \(its run sent nothing\): /);
    expect(next.args).toEqual(["--new-cutover", "--abort"]);
    // the page's commands, each before its note: status's, in its order
    const commands = next.page.split(/\); or (?=syncbook run )/).map((c) => c.slice(0, c.indexOf("   (")));
    expect(commands, next.page).toEqual(next.args.map((a) => `syncbook run ${file} ${a}`));
    expect(next.page).toContain("that run sent nothing, so --resume passes its journal");
    expect(next.page).not.toContain("--resume   (");
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([0, 0]);
    // the fleet still runs the earlier cutover's sync: the refusal says fleet-idle refuses that
    // command too (a review: it was told "Nothing of this cutover has been sent" alone), and the
    // page and status say it with the command
    const hint = `Nothing of this cutover has been sent yet. Correct the \`instances:\` list (every instance of this sync, and only those) or what answers at each address, then give this run's command again, as the run's end names it (a \`--resume\` refuses a changed list).${idleToo(file, "sync0 is RUNNING, sync1 is RUNNING")}`;
    expect(hintOf(renew.all), renew.all).toBe(hint);
    expect(next.page).toContain(`first, as step 1 start's failure said: ${hint})`);
    expect(next.text).toContain(`once what step 1 start's failure said is done: ${hint}`);
    // the fault gone, the page's command pasted as it is: refused by fleet-idle, as said; nothing sent
    s.control.clearFaults();
    const pasted = await cli(["run", file, ...next.args[0]!.split(" "), "--renderer", "simple", "--yes"], { cwd: dir });
    expect(pasted.code, pasted.all).toBe(3);
    expect(pasted.all).toMatch(
      /refused \(fleet-idle\): start is allowed only in IDLE; sync0 is RUNNING, sync1 is RUNNING/,
    );
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([0, 0]);
  }, 90_000);

  // refused at pause, before any write stop; and at start, before the rehearsal sent anything (the
  // fault active at once: a review saw the run's end name `syncbook run` there)
  for (const fault of ["identity-change=coordinator,on=start@1", "identity-change=coordinator@1"])
    it(`in a rehearsal: names no syncbook run, only the rehearsal again (${fault})`, async () => {
      const s = await started({ instances: 2 });
      const dir = tempDir();
      // the run's end adds no way on of its own
      const file = writeRunbook(
        dir,
        runbookFor(s, `${START}${READY}  - { id: pause, pause: {} }\n`).replace("timeout: 20s", "timeout: 20m"),
      );
      const r = await cli(["rehearse", file, "--renderer", "simple", "--yes", "--fault", fault], { cwd: dir });
      expect(r.code, r.all).toBe(3);
      expect(hintOf(r.all), r.all).toBe(
        "Check the `instances:` list (every instance of this sync, and only those) and the rehearsal's `--fault`s, then rehearse again.",
      );
      expect(r.all).not.toContain("syncbook run");
      expect(r.all).not.toContain("--resume");
    }, 90_000);

  // the run's end after writes were kept stopped said "turn writes back on with: syncbook run …
  // --abort …; or go on with the cutover: syncbook run … --resume" in a rehearsal too
  it("in a rehearsal refused at commit, writes kept stopped: the run's end names no syncbook command either", async () => {
    const s = await started({ instances: 2 });
    const dir = tempDir();
    const file = writeRunbook(dir, runbookFor(s, CUTOVER).replace("timeout: 20s", "timeout: 20m"));
    const r = await cli(
      ["rehearse", file, "--renderer", "simple", "--yes", "--fault", "identity-change=coordinator,on=start@1"],
      { cwd: dir },
    );
    expect(r.code, r.all).toBe(3);
    expect(r.all).toMatch(/✖ \[6\/8\] Commit failed in \d+ms: refused \(fleet-identity\)/);
    expect(hintOf(r.all), r.all).toMatch(/then rehearse again\.$/);
    expect(r.all).toMatch(/application writes stay STOPPED: the fleet could not be read as a whole before commit/);
    expect(r.all).toContain(
      "hint: The fleet is the rehearsal's simulator, stopped with the rehearsal: see why above, then rehearse again.",
    );
    expect(r.all).not.toMatch(/syncbook (run|status)/);
    expect(r.all).not.toContain("--resume");
  }, 90_000);
});
