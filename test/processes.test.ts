/**
 * What this machine says of a process beyond its pid (src/processes.ts): the readers a later run
 * uses to tell whether a hook process an earlier run left may still run (src/run/orphans.ts) and
 * whether a lock's holder is alive (src/journal/lock.ts). Each reader against real processes where
 * the machine can stage them (a live child, a zombie, a reused pid's start time, an environment
 * another user cannot read), and `/proc/<pid>/stat`'s parse against the lines proc(5) allows
 * (a command name with spaces and parentheses, a kernel thread). Linux only, like the readers.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listProcesses, parseStat, processEnviron, processInfo, processUid, selfIdentity } from "../src/processes.js";

/** A `/proc/<pid>/stat` line: pid, (comm), then fields 3 to 22 with the given ones set. */
function stat(pid: number | string, comm: string, f: Partial<Record<number, string | number>> = {}): string {
  const fields: (string | number)[] = [];
  for (let n = 3; n <= 52; n++) fields.push(f[n] ?? (n === 3 ? "S" : 0));
  return `${pid} (${comm}) ${fields.join(" ")}\n`;
}

describe("parseStat: /proc/<pid>/stat as proc(5) lays it out", () => {
  it("pid, state (3), ppid (4), process group (5), session (6), start (22)", () => {
    expect(parseStat(stat(42, "sh", { 3: "R", 4: 7, 5: 40, 6: 30, 9: 0x400100, 22: 98765 }))).toStrictEqual({
      pid: 42,
      ppid: 7,
      pgid: 40,
      sid: 30,
      start: 98765,
      state: "R",
      kernel: false,
    });
  });

  it("a command name with spaces and parentheses: the fields start after the last ')'", () => {
    const p = parseStat(stat(43, "a) (b) 5 6 7", { 3: "Z", 4: 8, 5: 43, 6: 43, 22: 11 }));
    expect(p).toMatchObject({ pid: 43, ppid: 8, pgid: 43, sid: 43, start: 11, state: "Z" });
  });

  it("a kernel thread, by its PF_KTHREAD flag (field 9), as kthreadd (pid 2) or as its child (ppid 2)", () => {
    expect(parseStat(stat(50, "kworker/0:1", { 4: 9, 9: 0x00200040 }))?.kernel).toBe(true);
    expect(parseStat(stat(2, "kthreadd", { 4: 0 }))?.kernel).toBe(true);
    expect(parseStat(stat(51, "x", { 4: 2 }))?.kernel).toBe(true);
    // every other flag bit, and pids and parents near 2, are not
    expect(parseStat(stat(52, "x", { 4: 3, 9: 0xffdfffff }))?.kernel).toBe(false);
    expect(parseStat(stat(3, "x", { 4: 1 }))?.kernel).toBe(false);
  });

  it("a line it cannot read is no process (never a process taken as gone by mistake of parse: the callers fail safe on undefined)", () => {
    expect(parseStat("")).toBeUndefined();
    expect(parseStat("42 sh S 1 2 3")).toBeUndefined();
    expect(parseStat("42 )sh( S 1 2 3")).toBeUndefined();
    expect(parseStat(stat("x", "sh", { 22: 5 }))).toBeUndefined();
    expect(parseStat(stat(42, "sh", { 22: "y" }))).toBeUndefined();
    expect(parseStat(stat(42, "sh", { 22: 1.5 }))).toBeUndefined();
    // a line cut before field 22: no start time, no identity
    expect(parseStat("42 (sh) S 1 42 42 0 -1")).toBeUndefined();
  });

  it("a start of 0 is a start", () => {
    expect(parseStat(stat(1, "init", { 22: 0 }))?.start).toBe(0);
  });
});

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** A child of its own group and session (as src/plugin/process.ts spawns a hook). */
function child(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<ChildProcess> {
  const c = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: "ignore", env });
  children.push(c);
  return new Promise((resolve, reject) => {
    c.once("spawn", () => resolve(c));
    c.once("error", reject);
  });
}

async function until<T>(f: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the readers against real processes", () => {
  it("processInfo: a live child with its group, session (it leads both), parent and start; gone once it exits", async () => {
    const c = await child(["sleep", "30"]);
    const pid = c.pid!;
    const p = processInfo(pid)!;
    expect(p).toMatchObject({ pid, ppid: process.pid, pgid: pid, sid: pid, kernel: false });
    expect(p.start).toBeGreaterThanOrEqual(processInfo(process.pid)!.start);
    // live is any state but exited (Z, X): just after exec a child may still be in D, loading from disk
    // (the CI run of 2026-12-01 saw "D"); orphans.ts counts only Z and X as exited
    expect(p.state).toMatch(/^[A-Za-z]$/);
    expect(p.state).not.toMatch(/^[ZXx]$/);
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await exited;
    expect(processInfo(pid)).toBeUndefined();
  });

  it("processInfo: an exited child nobody reaps is a zombie (state Z), which orphans.ts counts as exited", async () => {
    // `sleep 0.05 &` then exec: the background sleep's parent becomes `sleep 30`, which never reaps it
    const c = await child(["sh", "-c", "sleep 0.05 & exec sleep 30"]);
    const zombie = await until(() => listProcesses()!.find((p) => p.ppid === c.pid && p.state === "Z"));
    expect(zombie.pgid).toBe(c.pid);
    expect(processInfo(zombie.pid)?.state).toBe("Z");
  });

  it("listProcesses: this process and a child, with what processInfo says of each; no kernel thread is taken for a user process", async () => {
    const c = await child(["sleep", "30"]);
    const all = listProcesses()!;
    // the two reads are moments apart: a process's scheduling state (R, S) may change between them
    const still = <T extends { state?: string }>(p: T | undefined) =>
      p && { ...p, state: p.state?.replace(/^[RS]$/, "R|S") };
    expect(still(all.find((p) => p.pid === process.pid))).toStrictEqual(still(processInfo(process.pid)));
    expect(still(all.find((p) => p.pid === c.pid))).toStrictEqual(still(processInfo(c.pid!)));
    expect(all.every((p) => Number.isSafeInteger(p.pid) && p.pid > 0)).toBe(true);
    // pid 1 of this namespace is no kernel thread; kthreadd (when this namespace shows it) is
    expect(all.find((p) => p.pid === 1)?.kernel).toBe(false);
    const kthreadd = all.find((p) => p.pid === 2 && p.ppid === 0);
    if (kthreadd) expect(kthreadd.kernel).toBe(true);
  });

  it("processEnviron: a child's environment (the hook token it carries, even after env -i cleared the rest it is gone)", async () => {
    const c = await child(["sleep", "30"], { PATH: process.env.PATH, SYNCBOOK_TEST_TOKEN: "tok-1" });
    const env = processEnviron(c.pid!);
    expect(Array.isArray(env) && env.includes("SYNCBOOK_TEST_TOKEN=tok-1")).toBe(true);
    const cleared = await child(["env", "-i", "sleep", "30"], { SYNCBOOK_TEST_TOKEN: "tok-2" });
    // env -i execs sleep with an empty environment: the token is gone from it
    await until(() =>
      readFileSync(`/proc/${cleared.pid}/cmdline`, "latin1").startsWith("sleep\0") ? true : undefined,
    );
    const e2 = processEnviron(cleared.pid!);
    if (!Array.isArray(e2)) throw new Error(`no environment read: ${String(e2)}`);
    expect(e2.some((v) => v.startsWith("SYNCBOOK_TEST_TOKEN="))).toBe(false);
  });

  it("processEnviron: a process gone is undefined (exited), never unreadable", async () => {
    const c = await child(["true"]);
    await new Promise((r) => c.once("exit", r));
    expect(processEnviron(c.pid!)).toBeUndefined();
    expect(processEnviron(2 ** 30)).toBeUndefined();
  });

  // as `nobody`: only where this runner may switch users and `nobody` may run this Node (Node 22 and
  // 24 of .ci/run live under the runner's home, which `nobody` cannot enter: the spawn fails there)
  it.skipIf(!nobodyRunsNode())(
    "processEnviron: another user's process, read by a user who may not: unreadable (it may still be a hook's), not gone",
    () => {
      // this runner is root, who reads every environment: ask as nobody, of this (root's) process
      const mod = join(import.meta.dirname, "..", "src", "processes.ts");
      const r = spawnSync(
        process.execPath,
        [
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          `import { processEnviron, processUid } from ${JSON.stringify(mod)};
         console.log(JSON.stringify([processEnviron(${process.pid}), processUid(${process.pid}), processEnviron(2 ** 30)]));`,
        ],
        {
          uid: 65534,
          gid: 65534,
          encoding: "utf8",
          cwd: join(import.meta.dirname, ".."),
          env: { ...process.env, TSX_DISABLE_CACHE: "1" },
        },
      );
      expect(r.stderr).toBe("");
      expect(JSON.parse(r.stdout)).toEqual(["unreadable", 0, null]);
    },
  );

  it("processUid: this process's real uid; undefined for one gone", async () => {
    expect(processUid(process.pid)).toBe(process.getuid!());
    const c = await child(["true"]);
    await new Promise((r) => c.once("exit", r));
    expect(processUid(c.pid!)).toBeUndefined();
  });
});

describe("selfIdentity: what a lock or a journal records beside the pid", () => {
  it("this PID namespace, this boot and this process's start, as /proc says them", () => {
    const id = selfIdentity();
    expect(id.pidns).toBe(readlinkSync("/proc/self/ns/pid"));
    expect(id.pidns).toMatch(/^pid:\[\d+\]$/);
    expect(id.boot).toBe(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
    expect(id.boot).toMatch(/^[0-9a-f-]{36}$/);
    expect(id.start).toBe(processInfo(process.pid)!.start);
  });

  it("a child in another PID namespace names another namespace (what makes its pids mean nothing here)", () => {
    const mod = join(import.meta.dirname, "..", "src", "processes.ts");
    const probe = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { encoding: "utf8" });
    if (probe.status !== 0)
      throw new Error(`unshare is needed here (test/crash/hook-lifetimes.e2e.test.ts uses it too): ${probe.stderr}`);
    const r = spawnSync(
      "unshare",
      [
        "--pid",
        "--fork",
        "--mount-proc",
        process.execPath,
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { selfIdentity } from ${JSON.stringify(mod)}; console.log(JSON.stringify({ id: selfIdentity(), pid: process.pid }));`,
      ],
      { encoding: "utf8", cwd: join(import.meta.dirname, ".."), env: { ...process.env, TSX_DISABLE_CACHE: "1" } },
    );
    expect(r.stderr).toBe("");
    const { id, pid } = JSON.parse(r.stdout) as { id: ReturnType<typeof selfIdentity>; pid: number };
    expect(id.pidns).toMatch(/^pid:\[\d+\]$/);
    expect(id.pidns).not.toBe(selfIdentity().pidns);
    expect(id.boot).toBe(selfIdentity().boot);
    // its own /proc: it is pid 1 there, and its start is its own
    expect(pid).toBe(1);
    expect(typeof id.start).toBe("number");
  });
});

/** Whether this process may start this Node as `nobody` (uid 65534): root, and a Node `nobody` can reach. */
function nobodyRunsNode(): boolean {
  if (process.getuid?.() !== 0) return false;
  return spawnSync(process.execPath, ["-e", "0"], { uid: 65534, gid: 65534 }).status === 0;
}
