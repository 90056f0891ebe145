/**
 * Issue 14, point 4: "The journal a resume uses is the right one. A usage error (`--from nosuch`,
 * a bad `--var`) must fail before any journal exists; a journal that recorded no request never
 * shadows an earlier one; `--resume <journal file>` picks one explicitly."
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli } from "../support/run.js";
import { cutoverYaml, fastSim, posts, tempDir } from "../support/crash-harness.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const DEFAULTS = "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 2s, retry: { giveUpAfter: 3s } }";

describe("which journal, and none on a usage error", () => {
  it.each([
    [["--from", "nosuch"], /--from nosuch: no step has this id/],
    [["--from", "comit"], /--from comit: no step has this id \(did you mean `commit`\?\)/],
    [["--from", "commit", "--to", "start"], /--to start \(step 1\) comes before --from commit \(step 6\)/],
    [
      ["--var", "rolback=true"],
      /--var rolback=…: .* has no variable `rollback`|has no variable `rolback` \(did you mean `rollback`\?\)/,
    ],
  ])("run %j: exit 2 before anything exists (no journal folder, nothing sent)", async (args, message) => {
    s = await fastSim({ instances: 1 });
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    writeFileSync(file, cutoverYaml(s, { defaults: DEFAULTS, head: "vars: { rollback: false }\n" }));
    const r = await cli(["run", file, "--renderer", "simple", ...args], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(existsSync(join(dir, ".syncbook")), "a usage error left a journal folder").toBe(false);
    expect(s.control.counts().instances[0]).toEqual({});
  });

  it("--dry-run honours --from/--to: steps outside are marked skipped and send nothing; a bad id is a usage error", async () => {
    s = await fastSim({ instances: 1 });
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    writeFileSync(file, cutoverYaml(s, { defaults: DEFAULTS }));
    const r = await cli(["run", file, "--dry-run", "--from", "stop-writes", "--to", "commit"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(/1\. \[start\] start: .*\(before --from: skipped\)\n\n2\./);
    expect(r.stdout).not.toMatch(/POST \/api\/v1\/start|POST .*\/api\/v1\/start/);
    expect(r.stdout).toMatch(/POST .*\/api\/v1\/commit/);
    expect(r.stdout).toMatch(/7\. \[committed\] waitFor: .*\(after --to: skipped\)/);
    const bad = await cli(["run", file, "--dry-run", "--to", "nosuch"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--to nosuch: no step has this id/);
  });

  it("a later run that sent nothing does not shadow the interrupted one; --resume <file> picks one by name", async () => {
    s = await fastSim({ instances: 2, timeScale: 100 });
    s.control.addFault("lag-floor=30");
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    writeFileSync(file, cutoverYaml(s, { defaults: DEFAULTS }));
    const first = startCli(["run", file, "--renderer", "simple"], { cwd: dir });
    await first.waitFor(/waiting \(ready\)/, 20_000);
    first.child.kill("SIGKILL");
    await first.done;
    // a plain run after an unfinished cutover is refused before it opens a journal (issue 37)
    const plain = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(plain.code, plain.all).toBe(2);
    expect(plain.stderr).toContain("the runbook's last cutover did not finish");
    // a new cutover, asked for: its start interlock refuses (the fleet is RUNNING); it sends nothing
    const second = await cli(["run", file, "--renderer", "simple", "--new-cutover"], { cwd: dir });
    expect(second.code, second.all).toBe(3);
    const jdir = join(dir, ".syncbook", "crash");
    const journals = readdirSync(jdir)
      .filter((f) => f.endsWith(".jsonl"))
      .sort();
    expect(journals).toHaveLength(2);
    const [older, newer] = journals.map((f) => join(jdir, f)) as [string, string];
    s.control.clearFaults();
    // explicitly the empty one: it has nothing to resume from (no step it ran) and says so
    const named = await cli(["run", file, "--resume", newer, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(named.stderr).toContain(`from ${newer}`);
    expect(named.code, named.all).toBe(1);
    expect(named.stderr).toMatch(/journal shows no start sent by step/);
    expect(posts(s, "commit")).toEqual([0, 0]);
    // the rule: the newer journal sent nothing, so the interrupted one is resumed
    const r = await cli(["run", file, "--resume", "--renderer", "simple", "--yes"], { cwd: dir });
    expect(r.stderr).toContain(`resume: passing over ${newer}: its run sent nothing and ran no hook`);
    expect(r.stderr).toContain(`journal: ${older}`);
    expect(r.code, r.all).toBe(0);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([1, 1]);
  });
});

/**
 * Issue 30, "Smaller": "`--resume` chooses the journal by file time, so a clock step back (or a
 * copied journal) picks a finished run and exits 0 "nothing to resume" (that should not be 0)".
 * The choice reads what the journals say: which came after which (the header's `after`), and
 * which run is unfinished; two unfinished ones that do not order are refused (exit 3), never guessed.
 */
describe("which journal, whatever the file times say", () => {
  // a hook that fails until the file `ok` exists: a run that acted (hook.started) and can end ok or failed
  const GATE =
    "  - { id: gate, hook: { use: shell, with: { command: [node, -e, \"require('fs').appendFileSync('ran', 'x'); process.exit(require('fs').existsSync('ok') ? 0 : 3)\"] } } }\n";
  const journalsOf = (dir: string): string[] =>
    readdirSync(join(dir, ".syncbook", "crash"))
      .filter((f) => f.endsWith(".jsonl"))
      .sort()
      .map((f) => join(dir, ".syncbook", "crash", f));

  /** A finished run, then a failed one (unfinished): two journals, the second naming the first in its header. */
  async function finishedThenFailed(): Promise<{ dir: string; file: string; done: string; failed: string }> {
    s = await fastSim({ instances: 1 });
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    writeFileSync(file, cutoverYaml(s, { defaults: DEFAULTS, steps: GATE }));
    writeFileSync(join(dir, "ok"), "");
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(0);
    rmSync(join(dir, "ok"));
    const second = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(second.code, second.all).toBe(1);
    const [done, failed] = journalsOf(dir) as [string, string];
    return { dir, file, done, failed };
  }

  it("a clock stepped back (the finished run's journal looks newer): --resume continues the unfinished run", async () => {
    const { dir, file, done, failed } = await finishedThenFailed();
    // the clock stepped back an hour between the runs: the failed run's file is older than the finished one's
    const now = Date.now() / 1000;
    utimesSync(done, now, now);
    utimesSync(failed, now - 3600, now - 3600);
    writeFileSync(join(dir, "ok"), "");
    const r = await cli(["run", file, "--resume", "--renderer", "simple", "--yes"], { cwd: dir });
    expect(r.all).not.toMatch(/nothing to resume/);
    expect(r.stderr).toContain(`journal: ${failed}`);
    expect(r.code, r.all).toBe(0);
    expect(readFileSync(join(dir, "ran"), "utf8")).toBe("xxx");
  }, 60_000);

  it("a copied journal of an unfinished run: two unfinished runs that do not order are refused (exit 3), not guessed", async () => {
    const { dir, file, failed } = await finishedThenFailed();
    const copy = failed.replace(/\.jsonl$/, "-copy.jsonl");
    copyFileSync(failed, copy);
    writeFileSync(join(dir, "ok"), "");
    const r = await cli(["run", file, "--resume", "--renderer", "simple", "--yes"], { cwd: dir });
    expect(r.code, r.all).toBe(3);
    expect(r.stderr).toMatch(/cannot choose the journal to resume: 2 journals .* hold an unfinished run/);
    expect(r.stderr).toContain(failed);
    expect(r.stderr).toContain(copy);
    expect(r.stderr).toMatch(/--resume <file>/);
    expect(readFileSync(join(dir, "ran"), "utf8")).toBe("xx");
    // status asks the same question (src/journal/runbook-journal.ts): it says --resume would refuse, not that it would continue one
    const st = await cli(["status", file], { cwd: dir });
    expect(st.stdout).toMatch(/journal: in .*, --resume would refuse: cannot choose the journal to resume: 2 journals/);
    expect(st.stdout).toMatch(/hint: name the one to continue with --resume <file>/);
    expect(st.stdout).not.toMatch(/the one --resume would continue/);
    // a plain run is refused for the unfinished cutover, and its hint does not say that --resume
    // refuses and then offer --resume (an outside review): the ways on with the runbook
    const plain = await cli(["run", file, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(plain.code, plain.all).toBe(2);
    expect(plain.stderr).not.toContain("--resume and --abort refuse its journal");
    expect(plain.stderr).toContain(`Go on with it: syncbook run ${file} --resume`);
    // named: it goes on
    const named = await cli(["run", file, "--resume", failed, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(named.code, named.all).toBe(0);
  }, 60_000);

  it("--resume naming a finished journal while another holds an unfinished run: exit 3, naming it; all finished: exit 0", async () => {
    const { dir, file, done, failed } = await finishedThenFailed();
    const r = await cli(["run", file, "--resume", done, "--renderer", "simple", "--yes"], { cwd: dir });
    expect(r.code, r.all).toBe(3);
    expect(r.stderr).toMatch(/nothing to resume: .* finished \(it ended ok\); but .* holds an unfinished run/);
    expect(r.stderr).toContain(`--resume ${failed}`);
    writeFileSync(join(dir, "ok"), "");
    expect((await cli(["run", file, "--resume", "--renderer", "simple", "--yes"], { cwd: dir })).code).toBe(0);
    // every run finished: nothing to resume is the truth, and says so with 0
    const again = await cli(["run", file, "--resume", "--renderer", "simple", "--yes"], { cwd: dir });
    expect(again.stderr).toMatch(/nothing to resume/);
    expect(again.code, again.all).toBe(0);
  }, 60_000);
});
