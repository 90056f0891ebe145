/**
 * Every command syncbook offers names the runbook as its run was given it: with the
 * `--journal-dir` (as typed) when the journals are kept elsewhere than `.syncbook` beside the
 * runbook (src/next-run.ts `runbookArgs`). Found in a review: the run's end, `status` and the
 * refusals offered `syncbook run <runbook> --resume` without it; pasted, that command read the
 * default folder, found no journal, and the never-twice checks found nothing either: a `--from`
 * over a commit whose answer was lost sent it a second time. The built CLI against the simulator
 * over loopback; each offered command is run as pasted, through a shell.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, cli, outputOf, watchState, type CliResult } from "../support/run.js";
import type { Report } from "../../src/report/index.js";
import type { WatchState } from "../../src/watch/index.js";
import {
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  COMMITTED,
  DRAINED,
  failingHook,
  posts,
  READY,
  START,
  STOP,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

/** `command` as an operator pastes it into a shell in `cwd`, with `syncbook` the built CLI on the PATH. */
function pasted(command: string, cwd: string): Promise<CliResult> {
  const bin = join(cwd, "bin");
  if (!existsSync(bin)) {
    mkdirSync(bin);
    writeFileSync(
      join(bin, "syncbook"),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`,
    );
    chmodSync(join(bin, "syncbook"), 0o755);
  }
  const child = spawn("/bin/sh", ["-c", command], {
    cwd,
    env: { ...process.env, CI: "1", NO_COLOR: "1", PATH: `${bin}:${process.env.PATH ?? ""}` },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return outputOf(child);
}

/** The watch page's state of the cutover, read once: `syncbook watch <target…>` in `cwd`. */
const watchPage = (target: string[], cwd: string): Promise<WatchState> => watchState([...target, "--no-notify"], cwd);

const escaped = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The command `re`'s first group finds in the output: the command it offers. */
function offered(out: string, re: RegExp): string {
  const m = re.exec(out);
  expect(m, `no offered command matching ${re} in:\n${out}`).not.toBeNull();
  return m![1]!;
}

describe("the commands offered after a run with --journal-dir", () => {
  it("carry it as typed: pasted, the --resume reads that journal, and a --from over the lost commit is refused (exit 3), not sent again", async () => {
    const c = await cliCutover(made, ["reset=1@0/commit"], START + READY + STOP + DRAINED + COMMIT + COMMITTED);
    // relative, as an operator types it in the runbook's folder
    const run = (...more: string[]) =>
      cli(["run", c.file, ...more, "--renderer", "simple", "--journal-dir", "j"], { cwd: c.dir });
    const first = await run("--yes");
    expect(first.code, first.all).toBe(1);
    expect(first.all).toMatch(/gave no usable answer .* nothing was resent/);
    expect(posts(c.s, "commit"), first.all).toEqual([1]);
    expect(existsSync(join(c.dir, "j", "crash")), first.all).toBe(true);
    c.s.control.clearFaults();

    // the run's end
    const resume = offered(first.all, /resume with: (syncbook run .*)$/m);
    expect(resume).toBe(`syncbook run ${c.file} --journal-dir j --resume`);

    // status, human and --json: the same command
    const status = await cli(["status", c.file, "--journal-dir", "j"], { cwd: c.dir });
    expect(status.all, status.all).toContain(`  syncbook run ${c.file} --journal-dir j --resume\n`);
    const json = await cli(["status", c.file, "--journal-dir", "j", "--json"], { cwd: c.dir });
    const st = JSON.parse(json.stdout) as { file: string; journal: { next?: { runs: { args: string }[] } } };
    expect(
      st.journal.next?.runs.map((r) => `syncbook run ${st.file} ${r.args}`),
      json.all,
    ).toEqual([resume]);

    // the watch page's way on (what the dead-man's switch pages too): given the runbook and the
    // folder, and given the journal folder alone (the --journal-dir its run journaled)
    for (const target of [[c.file, "--journal-dir", "j"], [join("j", "crash")]])
      // with what the commit's failure said to do first (its hint marked so: StepFailure beforeResume)
      expect((await watchPage(target, c.dir)).runner.next, target.join(" ")).toBe(
        `${resume}   (first, as step 5 commit's failure said: Check those instances' progress by hand before anything else; then \`${resume}\`, which reads the fleet before sending anything.)`,
      );
    // the report of that journal keeps it for the commands it offers
    const rebuilt = await cli(["report", join("j", "crash"), "--out", "rep"], { cwd: c.dir });
    expect(rebuilt.code, rebuilt.all).toBe(0);
    expect((JSON.parse(readFileSync(join(c.dir, "rep", "report.json"), "utf8")) as Report).journalDir).toBe("j");

    // a plain run again is refused, offering the ways on with the folder too
    const plain = await run("--yes");
    expect(plain.code, plain.all).toBe(2);
    expect(plain.all, plain.all).toContain(
      `Go on with it: syncbook run ${c.file} --journal-dir j --resume (or --from <step> to continue it from a step); call it off: syncbook run ${c.file} --journal-dir j --abort; or start a second cutover anyway: syncbook run ${c.file} --journal-dir j --new-cutover`,
    );

    // "or --from <step>": the offered command from the write stop, pasted: its journal shows the
    // commit may have reached sync0, so it is refused before anything is sent
    const from = await pasted(`${resume.replace(/ --resume$/, "")} --from stop-writes --yes --renderer simple`, c.dir);
    const where = `${first.all}\n--- pasted --from stop-writes\n${from.all}`;
    expect(from.code, where).toBe(3);
    expect(from.all, where).toMatch(/its journal shows commit \(step 5 "commit"\) may have reached sync0/);
    expect(from.all, where).toContain(`hint: Run syncbook run ${c.file} --journal-dir j --resume: it reads the fleet`);
    expect(posts(c.s, "commit"), where).toEqual([1]);

    // the --resume as offered reads that journal: the commit it shows sent is never sent again
    // (the fleet cannot tell whether sync0 holds it: refused, with what it saw)
    const resumed = await pasted(`${resume} --yes --renderer simple`, c.dir);
    const all = `${where}\n--- pasted --resume\n${resumed.all}`;
    expect(resumed.code, all).toBe(1);
    expect(resumed.all, all).toMatch(
      new RegExp(
        `cannot resume from ${escaped(join(c.dir, "j", "crash"))}/\\S+\\.jsonl: commit \\(step 5 "commit"\\) was sent; answers: sync0 unknown`,
      ),
    );
    expect(posts(c.s, "commit"), all).toEqual([1]);
    // nothing ever looked for a journal in the default folder, let alone wrote one there
    expect(existsSync(join(c.dir, ".syncbook")), all).toBe(false);
  }, 120_000);

  it("after a hook that failed past the commit, the --resume offered (relative --journal-dir) goes on in that journal and finishes", async () => {
    const c = await cliCutover(made, [], "");
    writeFileSync(
      c.file,
      readFileSync(c.file, "utf8") +
        START +
        READY +
        STOP +
        DRAINED +
        COMMIT +
        COMMITTED +
        failingHook(c.dir, "announce", 1),
    );
    const first = await cli(["run", c.file, "--renderer", "simple", "--journal-dir", "./j", "--yes"], { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(posts(c.s, "commit"), first.all).toEqual([1]);
    const resume = offered(first.all, /resume with: (syncbook run .*)$/m);
    expect(resume).toBe(`syncbook run ${c.file} --journal-dir ./j --resume`);

    const resumed = await pasted(`${resume} --yes --renderer simple`, c.dir);
    const where = `${first.all}\n--- pasted --resume\n${resumed.all}`;
    expect(resumed.code, where).toBe(0);
    expect(resumed.all, where).toContain(`journal: ${join(c.dir, "j", "crash")}`);
    expect(posts(c.s, "commit"), where).toEqual([1]);
    // the journal the first run wrote, continued: one file, both runs in it
    const journals = readdirSync(join(c.dir, "j", "crash")).filter((f) => f.endsWith(".jsonl"));
    expect(journals, where).toHaveLength(1);
    expect(readFileSync(join(c.dir, "j", "crash", journals[0]!), "utf8"), where).toContain('"type":"journal.resumed"');
    expect(existsSync(join(c.dir, ".syncbook")), where).toBe(false);
  }, 120_000);
});
