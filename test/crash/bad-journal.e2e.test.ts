/**
 * Bad input to `syncbook run --resume` (issue item 5): a corrupt journal, a truncated last line,
 * a journal written for another version of the runbook (its hash changed), no journal at all.
 * Each gives a clear message and the right exit code with no stack trace, or a safe, explained
 * recovery — never a guess: nothing is POSTed to the fleet on a refusal.
 *
 * Each case starts from a real interrupted run: the CLI started the sync on two simulated
 * instances, then was SIGKILLed while it waited for canCommit (the lag held at 30 s).
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readWitness, writeWitness } from "../../src/journal/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli, type CliResult } from "../support/run.js";
import { cutoverYaml, fastSim, posts, tempDir, totalPosts } from "../support/crash-harness.js";

const DEFAULTS = "{ pollInterval: 50ms, timeout: 30s, requestTimeout: 2s, retry: { giveUpAfter: 3s } }";

interface Interrupted {
  s: Simulator;
  dir: string;
  file: string;
  journalDir: string;
  journal: string;
  yaml: string;
  resume(extra?: string[]): Promise<CliResult>;
}

async function interrupted(): Promise<Interrupted> {
  const s = await fastSim({ instances: 2, timeScale: 100 });
  s.control.addFault("lag-floor=30");
  const dir = tempDir();
  const file = join(dir, "rb.yaml");
  const yaml = cutoverYaml(s, { defaults: DEFAULTS });
  writeFileSync(file, yaml);
  const journalDir = join(dir, "journals");
  const run = startCli(["run", file, "--renderer", "simple", "--journal-dir", journalDir], { cwd: dir });
  await run.waitFor(/waiting \(ready\)/, 20_000);
  run.child.kill("SIGKILL");
  const r = await run.done;
  expect(r.signal).toBe("SIGKILL");
  s.control.clearFaults();
  expect(posts(s, "start")).toEqual([1, 1]);
  const folder = join(journalDir, "crash");
  const journal = join(
    folder,
    readdirSync(folder).find((f) => f.endsWith(".jsonl"))!,
  );
  return {
    s,
    dir,
    file,
    journalDir,
    journal,
    yaml,
    resume: (extra = []) =>
      cli(["run", file, "--resume", "--renderer", "simple", "--journal-dir", journalDir, ...extra], { cwd: dir }),
  };
}

const lines = (file: string): string[] => readFileSync(file, "utf8").split("\n");
const noStack = (r: CliResult): void => {
  expect(r.all).not.toMatch(/\n\s+at .*:\d+:\d+/);
  expect(r.all).not.toContain("internal error");
};

/** A refusal: exit code, a `syncbook: …` message and a hint, no stack, no POST, the journal untouched. */
async function expectRefusal(
  x: Interrupted,
  r: CliResult,
  code: number,
  message: RegExp,
  postsBefore: number,
  journalBefore: string,
): Promise<void> {
  expect(r.code, r.all).toBe(code);
  expect(r.stderr, r.all).toMatch(message);
  expect(r.stderr).toMatch(/\n {2}hint: \S/);
  noStack(r);
  expect(totalPosts(x.s), "a refused resume sent a command").toBe(postsBefore);
  expect(readFileSync(x.journal, "utf8"), "a refused resume wrote to the journal").toBe(journalBefore);
  await x.s.close();
}

describe.concurrent("--resume with a bad journal", () => {
  it("a corrupt line in the middle: refused with file:line (exit 2); nothing sent", async () => {
    const x = await interrupted();
    const l = lines(x.journal);
    l[4] = '{"type":"step.started","seq":4,"at":1,"ind';
    writeFileSync(x.journal, l.join("\n"));
    const before = readFileSync(x.journal, "utf8");
    const n = totalPosts(x.s);
    const r = await x.resume();
    await expectRefusal(
      x,
      r,
      2,
      new RegExp(
        `syncbook: ${x.journal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:5: line 5 is not JSON, and more lines follow it: the journal is corrupt`,
      ),
      n,
      before,
    );
    expect(r.stderr).toContain("do not resume from it");
  });

  it("a truncated last line (a crash mid-write): explained, then a safe recovery to COMMITTED with one start and one commit", async () => {
    const x = await interrupted();
    const text = readFileSync(x.journal, "utf8");
    const cut = text.slice(0, text.length - 1 - Math.floor(text.trimEnd().split("\n").pop()!.length / 2));
    writeFileSync(x.journal, cut);
    const count = cut.split("\n").length;
    const r = await x.resume();
    expect(r.code, r.all).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `journal: the last line \\(${count}\\) is cut short \\(not JSON\\): the run was interrupted while writing it; resuming from the ${count - 1} lines before it`,
      ),
    );
    noStack(r);
    expect(x.s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
    expect(posts(x.s, "start")).toEqual([1, 1]);
    expect(posts(x.s, "commit")).toEqual([1, 1]);
    expect(x.s.control.state().writes.lost).toBe(0);
    // the fragment is closed and the resume marker names it, so the journal reads clean afterwards
    const after = lines(x.journal);
    expect(after[count - 1]).toBe(cut.split("\n")[count - 1]);
    expect(JSON.parse(after[count]!)).toMatchObject({ type: "journal.resumed", truncatedLine: count });
    const report = await cli(["report", x.journal, "--out", join(x.dir, "report"), "--quiet"], { cwd: x.dir });
    expect(report.code, report.all).toBe(0);
    await x.s.close();
  });

  it("truncated in the middle of the start request's own line: the fleet shows a start the journal does not: refused, not guessed", async () => {
    const x = await interrupted();
    const text = readFileSync(x.journal, "utf8");
    const at = text.indexOf('"path":"/api/v1/start"');
    const lineStart = text.lastIndexOf("\n", at) + 1;
    writeFileSync(x.journal, text.slice(0, lineStart + 30));
    const before = readFileSync(x.journal, "utf8");
    const n = totalPosts(x.s);
    // cut back past what the run made durable: the journal's witness refuses it (issue 30)
    const cut = await x.resume();
    expect(cut.code, cut.all).toBe(2);
    expect(cut.stderr).toContain(`cannot trust ${x.journal}: the journal is shorter than its last fsynced point`);
    expect(totalPosts(x.s)).toBe(n);
    // what a crash while writing that line leaves: the witness at the last whole line before it
    const whole = JSON.parse(text.slice(0, lineStart).trimEnd().split("\n").pop()!) as { seq: number; chain: string };
    writeWitness(x.journal, { ...readWitness(x.journal)!, seq: whole.seq, chain: whole.chain });
    const r = await x.resume();
    await expectRefusal(
      x,
      r,
      1,
      /cannot resume from .*: the journal shows no start sent by step 1 "start", yet every instance shows its effect \(fleet: sync0 RUNNING, sync1 RUNNING\)/,
      n,
      before,
    );
    expect(r.stderr).toMatch(/journal: the last line \(\d+\) is cut short/);
  });

  it("the runbook changed since the journal was written: refused (exit 2) unless --allow-changed-runbook, which says so and resumes", async () => {
    const x = await interrupted();
    writeFileSync(x.file, `# edited after the run started\n${x.yaml}`);
    const before = readFileSync(x.journal, "utf8");
    const n = totalPosts(x.s);
    const refused = await x.resume();
    expect(refused.code, refused.all).toBe(2);
    expect(refused.stderr).toMatch(
      /cannot resume from .*: the runbook changed since the journal was written: journal hash [0-9a-f]{12}, runbook hash [0-9a-f]{12}/,
    );
    expect(refused.stderr).toContain("--allow-changed-runbook");
    noStack(refused);
    expect(totalPosts(x.s)).toBe(n);
    expect(readFileSync(x.journal, "utf8")).toBe(before);

    const allowed = await x.resume(["--allow-changed-runbook"]);
    expect(allowed.code, allowed.all).toBe(0);
    expect(allowed.stderr).toMatch(
      /resume: the runbook changed since the journal was written \(hash [0-9a-f]{12} → [0-9a-f]{12}\); resuming anyway as asked/,
    );
    expect(posts(x.s, "start")).toEqual([1, 1]);
    expect(posts(x.s, "commit")).toEqual([1, 1]);
    await x.s.close();
  });

  it("a changed runbook whose steps differ is refused even with --allow-changed-runbook (exit 2)", async () => {
    const x = await interrupted();
    writeFileSync(x.file, x.yaml.replace("id: ready,", "id: caught-up,"));
    const before = readFileSync(x.journal, "utf8");
    const r = await x.resume(["--allow-changed-runbook"]);
    await expectRefusal(
      x,
      r,
      2,
      /the runbook's steps do not match the journal's: step 2: journal "ready" \(waitFor\), runbook "caught-up" \(waitFor\)/,
      totalPosts(x.s),
      before,
    );
  });

  it("no journal at all: nothing to resume (exit 2), and not one request to the fleet", async () => {
    const x = await interrupted();
    rmSync(x.journalDir, { recursive: true, force: true });
    const before = x.s.control.counts();
    const r = await x.resume();
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toMatch(
      /syncbook: nothing to resume: (no journal folder .*journals\/crash|.*journals\/crash holds no journal)/,
    );
    expect(r.stderr).toMatch(/hint: run without --resume to start a new run/);
    noStack(r);
    expect(x.s.control.counts()).toEqual(before);
    await x.s.close();
  });

  it("an empty journal file, and one from a newer journal format: refused with the reason (exit 2)", async () => {
    const x = await interrupted();
    const original = readFileSync(x.journal, "utf8");
    writeFileSync(x.journal, "");
    const n = totalPosts(x.s);
    const empty = await x.resume();
    expect(empty.code, empty.all).toBe(2);
    expect(empty.stderr).toMatch(/: the journal is empty/);
    noStack(empty);

    const l = original.split("\n");
    l[0] = l[0]!.replace(/"version":\d+/, '"version":99');
    writeFileSync(x.journal, l.join("\n"));
    const before = readFileSync(x.journal, "utf8");
    const newer = await x.resume();
    await expectRefusal(x, newer, 2, /:1: written in journal format 99; this syncbook reads format 2/, n, before);
  });
});
