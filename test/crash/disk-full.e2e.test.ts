/**
 * Issue 42, invariant 3: "A journal that could not record an effect is not trusted", at every
 * journal line where the disk can fill between the write stop and the commit, on a real full
 * file system: the journal folder is a small tmpfs mounted in a mount namespace of this case's
 * own (`unshare -m`, where the machine allows it), and at each numbered crash point
 * (src/crash-points.ts, docs/testing.md "Crash points") the runner itself fills it with zeros
 * (`SYNCBOOK_TEST_FILL_AT`): the next write that needs room fails with ENOSPC, as on a disk
 * another process filled. On tmpfs that is often the witness (a new page) while a journal line
 * still fits in its file's last page: the line is on disk, its witness is not.
 *
 * Each case then does what the run's own last lines say, after freeing the space: `run again
 * with: … --from stop-writes (not --resume)` or `resume with: … --resume` (up to three times).
 * Whatever the point, the cutover ends COMMITTED with one accepted commit per instance and no
 * write lost, no output offers both `--resume` and "not --resume", a journal its run marked
 * untrusted is refused by `--resume`, and no stack trace is printed.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { CLI } from "../support/run.js";
import {
  cleanedUpAfterAll,
  COMMIT,
  COMMITTED,
  cutoverYaml,
  DRAINED,
  fastSim,
  KILL_RESUME_DEFAULTS,
  posts,
  READY,
  START,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";

const { sims, dirs } = cleanedUpAfterAll();

/** `unshare -m`, as root, or `unshare -r -m` (a user namespace) where only that is allowed; undefined: neither. */
function mountNamespace(): string[] | undefined {
  const d = mkdtempSync(join(tmpdir(), "syncbook-tmpfs-probe-"));
  try {
    for (const prefix of [
      ["unshare", "-m"],
      ["unshare", "-r", "-m"],
    ]) {
      const r = spawnSync(
        prefix[0]!,
        [...prefix.slice(1), "sh", "-c", 'mount -t tmpfs -o size=64k tmpfs "$0" && touch "$0/x"', d],
        { stdio: "ignore", timeout: 5000 },
      );
      if (r.status === 0) return prefix;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}
const unshare = mountNamespace();

/**
 * Runs inside the case's mount namespace: mounts the tmpfs over the journal folder, runs the CLI
 * with the disk filled at point `fill`, frees the space, then follows the way on each run prints.
 */
const DRIVER = `import { execFileSync, spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
const spec = JSON.parse(process.argv[2]);
execFileSync("mount", ["-t", "tmpfs", "-o", "size=" + spec.size, "tmpfs", spec.journals]);
const runs = [];
const run = (args, env) => {
  const r = spawnSync(spec.node, [spec.cli, ...args], { cwd: spec.cwd, env: { ...process.env, CI: "1", NO_COLOR: "1", ...env }, encoding: "utf8", timeout: 90000 });
  runs.push({ args, code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr });
  return r;
};
const base = ["run", spec.file, "--renderer", "simple", "--yes", "--journal-dir", spec.journals];
let r = run(base, { SYNCBOOK_TEST_HOOKS: "crash-points", SYNCBOOK_TEST_FILL_AT: String(spec.fill), SYNCBOOK_TEST_FILL_FILE: spec.journals + "/filler" });
rmSync(spec.journals + "/filler", { force: true });
for (let i = 0; i < 3 && r.status !== 0; i++) {
  const again = /run again with: syncbook run \\S+ --journal-dir \\S+ (.+?) \\(not --resume\\)/.exec(r.stderr);
  // the run's last line, or the journal failure's hint (a run that committed says only that)
  const resume = /resume with: syncbook run \\S+ --journal-dir \\S+ --resume|then run again with --resume/.test(r.stderr);
  if (again) r = run([...base, ...again[1].split(" ")], {});
  else if (resume) r = run([...base, "--resume"], {});
  else break;
}
writeFileSync(spec.out, JSON.stringify(runs));
`;

interface Run {
  args: string[];
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

function runCase(
  prefix: string[],
  spec: { file: string; journals: string; cwd: string; fill: number; out: string; size: string },
  env: Record<string, string>,
): Promise<Run[]> {
  const driver = join(spec.cwd, "driver.mjs");
  writeFileSync(driver, DRIVER);
  const child = spawn(
    prefix[0]!,
    [...prefix.slice(1), process.execPath, driver, JSON.stringify({ ...spec, node: process.execPath, cli: CLI })],
    { cwd: spec.cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) =>
    child.on("close", (code) => {
      try {
        resolve(JSON.parse(readFileSync(spec.out, "utf8")) as Run[]);
      } catch {
        reject(new Error(`the driver failed (exit ${code}): ${err}`));
      }
    }),
  );
}

const STEPS = (s: Simulator): string => START + READY + stopVia(s.verifierUrl) + DRAINED + COMMIT + COMMITTED;

/** The crash points of a clean run of this shape (labels in order). Never a sync spawn: the simulator answers from this process. */
async function cleanPoints(s: Simulator): Promise<string[]> {
  const dir = tempDir();
  dirs.push(dir);
  const file = join(dir, "rb.yaml");
  writeFileSync(file, cutoverYaml(s, { steps: STEPS(s), defaults: KILL_RESUME_DEFAULTS }));
  const list = join(dir, "points");
  const child = spawn(process.execPath, [CLI, "run", file, "--renderer", "silent", "--journal-dir", join(dir, "j")], {
    cwd: dir,
    env: {
      ...process.env,
      SYNCBOOK_STATE_DIR: join(dir, "state"),
      SYNCBOOK_TEST_HOOKS: "crash-points",
      SYNCBOOK_TEST_CRASH_POINTS: list,
    },
    stdio: "ignore",
  });
  const code = await new Promise((r) => child.on("close", r));
  if (code !== 0) throw new Error(`the clean run failed (exit ${String(code)})`);
  return readFileSync(list, "utf8")
    .trim()
    .split("\n")
    .map((l) => l.replace(/^\d+ /, ""));
}

describe.skipIf(!unshare)("the journal's disk fills at every line between the write stop and the commit", async () => {
  // the points of this shape, from the one before the write stop's hook to the commit's record
  const probe = unshare ? await fastSim({ instances: 2, timeScale: 100 }) : undefined;
  const labels = probe ? await cleanPoints(probe) : [];
  await probe?.close();
  const first = labels.findIndex((l) => l.startsWith("journal:hook.started:stop-writes"));
  const last = labels.findIndex((l) => l.startsWith("journal:commit.sent"));
  const points =
    first > 0 && last > first ? labels.slice(first - 1, last + 1).map((l, i) => ({ n: first + i, l })) : [];

  it("finds the points (the shape's run passes the write stop and the commit)", () => {
    expect(points.length, labels.join("\n")).toBeGreaterThan(5);
  });

  for (const { n, l } of points)
    it(`full after point ${n} (${l}): the way on the run prints cuts over once, nothing lost`, async () => {
      const s = await fastSim({ instances: 2, timeScale: 100 });
      sims.push(s);
      const dir = tempDir();
      dirs.push(dir);
      const journals = join(dir, "journals");
      mkdirSync(journals);
      const file = join(dir, "rb.yaml");
      writeFileSync(file, cutoverYaml(s, { steps: STEPS(s), defaults: KILL_RESUME_DEFAULTS }));
      const runs = await runCase(
        unshare!,
        { file, journals, cwd: dir, fill: n, out: join(dir, "out.json"), size: "4m" },
        { SYNCBOOK_STATE_DIR: join(dir, "state") },
      );
      const where = runs
        .map((r) => `--- ${r.args.slice(7).join(" ") || "run"}: exit ${r.code}\n${r.stderr}`)
        .join("\n");
      // DISK_FULL_TRACE=1: each case's transcript in the test's temp folder, to read whole
      if (process.env.DISK_FULL_TRACE) writeFileSync(join(tmpdir(), `disk-full-${n}.txt`), where);
      // the fill was armed (at point n: right after line n is durable)
      expect(runs[0]!.stderr, where).toMatch(/disk filled at point/);
      for (const r of runs) {
        expect(r.stderr, where).not.toMatch(/internal error|\n\s+at /);
        // one way on per output
        if (/not --resume/.test(r.stderr))
          expect(r.stderr, where).not.toMatch(/resume with:|then run again with --resume/);
      }
      // a journal marked untrusted is never resumed: the way on was --from
      for (const [i, r] of runs.entries())
        if (/marked untrusted first/.test(r.stderr)) expect(runs[i + 1]?.args, where).toContain("--from");
      expect(runs.at(-1)!.code, where).toBe(0);
      const st = s.control.state();
      expect(
        st.instances.map((i) => i.state),
        where,
      ).toEqual(["COMMITTED", "COMMITTED"]);
      expect(posts(s, "commit"), where).toEqual([1, 1]);
      expect(st.writes.lost, where).toBe(0);
    }, 120_000);
});
