/**
 * A runbook folder that cannot be written, or a journal folder that cannot be made, is a clear
 * error with the path and a hint, exit 2, and nothing sent (issue 30); `status` writes nothing at
 * all. The machine runs as root, which chmod does not stop, so the folder is made unwritable the
 * ways root cannot get past: `.syncbook` left as a file (EEXIST, ENOTDIR), and a read-only bind
 * mount (EROFS) in a mount namespace of its own, where `unshare` is allowed.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { CLI, cli, posts, runbookFor, sim, tempDir, writeRunbook, START, type CliResult } from "../support/run.js";

const dirs: string[] = [];
let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function setUp(steps = START): Promise<{ dir: string; file: string }> {
  s = await sim();
  const dir = tempDir();
  dirs.push(dir);
  return { dir, file: writeRunbook(dir, runbookFor(s, steps)) };
}

const GATE =
  "  - { id: gate, hook: { use: shell, with: { command: [node, -e, \"process.exit(require('fs').existsSync('ok') ? 0 : 3)\"] } } }\n";

/** Can this machine give a process a read-only bind mount of its own? */
function canMountReadOnly(): boolean {
  const d = mkdtempSync(join(tmpdir(), "syncbook-ro-probe-"));
  try {
    const r = spawnSync(
      "unshare",
      ["-m", "sh", "-c", `mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && ! touch "$0/x" 2>/dev/null`, d],
      { stdio: "ignore", timeout: 5000 },
    );
    return r.status === 0;
  } catch {
    return false;
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}
const readOnlyMounts = canMountReadOnly();

/** The CLI with `dir` mounted read-only for it alone (its own mount namespace). */
function cliReadOnly(dir: string, args: string[]): Promise<CliResult> {
  const child = spawn(
    "unshare",
    [
      "-m",
      "sh",
      "-c",
      'd="$1"; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && exec "$@"',
      "sh",
      dir,
      process.execPath,
      CLI,
      ...args,
    ],
    { cwd: dir, env: { ...process.env, CI: "1", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr, all: stdout + stderr })),
  );
}

const noInternalError = (r: CliResult): void => {
  expect(r.all).not.toContain("internal error");
  expect(r.all).not.toMatch(/\n\s+at /);
};

describe("`.syncbook` is a file where the journal folder belongs", () => {
  it("run and --resume: exit 2 naming the path, why and what to do; nothing sent", async () => {
    const { dir, file } = await setUp();
    writeFileSync(join(dir, ".syncbook"), "not a folder\n");
    for (const args of [
      ["run", file],
      ["run", file, "--resume"],
    ]) {
      const r = await cli([...args, "--renderer", "simple"], { cwd: dir });
      expect(r.code, r.all).toBe(2);
      expect(r.stderr).toContain(
        `syncbook: cannot create the journal folder ${join(dir, ".syncbook")}: EEXIST (a file is in the way where a folder belongs)`,
      );
      expect(r.stderr).toMatch(/hint: syncbook keeps its journals in folders: move the file .* or pass --journal-dir/);
      noInternalError(r);
    }
    // a journal folder under a file: the same, by its own errno
    const under = await cli(["run", file, "--journal-dir", join(dir, ".syncbook", "j")], { cwd: dir });
    expect(under.code, under.all).toBe(2);
    expect(under.stderr).toContain(`cannot create the journal folder ${join(dir, ".syncbook", "j")}: ENOTDIR`);
    noInternalError(under);
    expect(posts(s!, "start")).toEqual([0]);
  }, 60_000);

  it("status reads the fleet and says what is wrong with the journal folder (exit 0, no internal error)", async () => {
    const { dir, file } = await setUp();
    writeFileSync(join(dir, ".syncbook"), "not a folder\n");
    const r = await cli(["status", file], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(
      /journal: in .*, --resume would refuse: cannot read the journal folder .*\.syncbook\/e2e: ENOTDIR/,
    );
    expect(r.stdout).toContain("hint:");
    noInternalError(r);
  }, 60_000);
});

describe("status writes nothing", () => {
  it("no journal folder, no lock, no state folder is created by status", async () => {
    const { dir, file } = await setUp();
    const state = join(dir, "state");
    const r = await cli(["status", file], { cwd: dir, env: { SYNCBOOK_STATE_DIR: state } });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain("no run yet");
    expect(existsSync(join(dir, ".syncbook"))).toBe(false);
    expect(existsSync(state)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["rb.yaml"]);
  }, 60_000);
});

describe.skipIf(!readOnlyMounts)("a read-only runbook folder (a read-only bind mount: EROFS)", () => {
  it("run: exit 2 naming the folder and the way out (--journal-dir); nothing sent", async () => {
    const { dir, file } = await setUp();
    const r = await cliReadOnly(dir, ["run", file, "--renderer", "simple"]);
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toContain(
      `syncbook: cannot create the journal folder ${join(dir, ".syncbook")}: EROFS (the file system is read-only)`,
    );
    expect(r.stderr).toContain(
      "hint: the runbook's checkout is read-only here: pass --journal-dir <a writable folder>",
    );
    noInternalError(r);
    expect(posts(s!, "start")).toEqual([0]);
    // the way out the hint names works
    const elsewhere = join(dirs[dirs.length - 1]!, "..", `${dir.split("/").pop()!}-journals`);
    mkdirSync(elsewhere);
    dirs.push(elsewhere);
    const ok = await cliReadOnly(dir, ["run", file, "--renderer", "simple", "--journal-dir", elsewhere]);
    expect(ok.code, ok.all).toBe(0);
  }, 60_000);

  it("after a failed run: status reads it (exit 0); --resume is a clear exit 2 that sends nothing", async () => {
    const { dir, file } = await setUp(START + GATE);
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(1);
    const before = readdirSync(join(dir, ".syncbook", "e2e")).sort();
    const st = await cliReadOnly(dir, ["status", file]);
    expect(st.code, st.all).toBe(0);
    expect(st.stdout).toMatch(/journal: .*\.jsonl \(the one --resume would continue\)/);
    expect(st.stdout).toContain("last step: 2. gate (hook): failed");
    noInternalError(st);
    const resumed = await cliReadOnly(dir, ["run", file, "--resume", "--renderer", "simple"]);
    expect(resumed.code, resumed.all).toBe(2);
    expect(resumed.stderr).toMatch(
      /syncbook: cannot create the lock .*syncbook\.lock: EROFS \(the file system is read-only\)/,
    );
    noInternalError(resumed);
    expect(readdirSync(join(dir, ".syncbook", "e2e")).sort()).toEqual(before);
    expect(posts(s!, "start")).toEqual([1]);
  }, 60_000);
});
